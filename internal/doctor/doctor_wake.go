package doctor

import (
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/wake"
)

// checkWake reports automatic wake: armed or off, and the browser
// "Open ChatGPT" would start (wake.browser_path, else the standard
// install locations). A missing browser only matters while wake is
// armed, so it is a warning then and a note otherwise.
func (d *doctor) checkWake() {
	const name = "wake"
	state := "off (arm it on the control panel's ChatGPT window page)"
	if d.cfg.Wake.Armed {
		state = "armed"
	}
	exe, err := wake.FindBrowser(d.cfg.Wake.BrowserPath)
	switch {
	case err == nil:
		d.line(checkOK, name, fmt.Sprintf("automatic wake is %s; the ChatGPT window uses %s", state, exe))
	case d.cfg.Wake.Armed:
		d.line(checkWarn, name, fmt.Sprintf("automatic wake is armed, but the ChatGPT window cannot open: %v", err))
	case errors.Is(err, wake.ErrNoBrowser):
		d.line(checkOK, name, fmt.Sprintf("automatic wake is %s; no Edge or Chrome found for the ChatGPT window (set wake.browser_path to use one)", state))
	default:
		d.line(checkOK, name, fmt.Sprintf("automatic wake is %s; the ChatGPT window cannot open: %v", state, err))
	}
}
