package screen

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSecureDesktop marks an InputDesktop answer where Windows shows its
// secure desktop (a UAC prompt, the lock or sign-in screen, Ctrl+Alt+Del):
// no program of the person's may see or send input there, so Hearth sends
// none and says so instead of clicking into nothing.
var ErrSecureDesktop = errors.New("a Windows security screen is showing")

// DesktopProbe is what Windows said about the desktop that takes input:
// its name (GetUserObjectInformation UOI_NAME of OpenInputDesktop's
// handle), or why it could not be opened.
type DesktopProbe struct {
	Name string
	// OpenErr is OpenInputDesktop's failure; AccessDenied says it was
	// ERROR_ACCESS_DENIED, which is how a secure desktop answers a
	// program that is not the system.
	OpenErr      error
	AccessDenied bool
}

// DecideInputDesktop turns a probe of the input desktop into Hearth's
// answer: nil when input would reach the person's own desktop ("Default"),
// else an error in plain words that wraps ErrSecureDesktop for the secure
// desktop. It is the portable half of InputDesktop, kept apart so Linux
// tests can prove every case Windows can show.
func DecideInputDesktop(p DesktopProbe) error {
	const secure = "%w: the computer is asking the person directly (a User Account Control prompt, the lock screen or the sign-in screen), and Windows keeps every other program's input away from it. Answer it yourself, then ask again"
	switch {
	case p.AccessDenied:
		return fmt.Errorf(secure, ErrSecureDesktop)
	case p.OpenErr != nil:
		return fmt.Errorf("cannot tell which desktop takes input, so no input is sent (open the input desktop: %v)", p.OpenErr)
	case strings.EqualFold(p.Name, "Default"):
		return nil
	case strings.EqualFold(p.Name, "Winlogon"):
		return fmt.Errorf(secure, ErrSecureDesktop)
	case strings.EqualFold(p.Name, "Screen-saver"):
		return errors.New("the screen saver is showing; input would only wake it. Move the mouse yourself, then ask again")
	case p.Name == "":
		return errors.New("the desktop that takes input has no name, so it cannot be told to be the person's own; no input is sent")
	}
	return fmt.Errorf("input goes to another desktop (%q), not the signed-in person's, so none is sent", p.Name)
}
