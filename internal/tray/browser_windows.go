package tray

import (
	"fmt"
	"strings"

	"golang.org/x/sys/windows"
)

// OpenURL opens a loopback http URL (the control panel) in the user's
// default browser, through ShellExecute's "open" verb.
func OpenURL(raw string) error {
	if err := checkBrowsable(raw); err != nil {
		return err
	}
	verb, err := windows.UTF16PtrFromString("open")
	if err != nil {
		return err
	}
	file, err := windows.UTF16PtrFromString(raw)
	if err != nil {
		return err
	}
	if err := windows.ShellExecute(0, verb, file, nil, nil, windows.SW_SHOWNORMAL); err != nil {
		// The URL carries a one-time login token: name only its address.
		shown := raw
		if i := strings.IndexByte(shown, '?'); i >= 0 {
			shown = shown[:i]
		}
		return fmt.Errorf("open %s in the browser: %w", shown, err)
	}
	return nil
}
