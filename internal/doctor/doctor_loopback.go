package doctor

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/peeruser"
)

// checkLoopback reports who may connect to Hearth's loopback endpoints:
// with loopback_same_user false it warns that every account may; where
// the owner of a connection cannot be determined it fails (Hearth would
// refuse every connection); otherwise it proves the check on a test
// connection of its own (peeruser.Probe: a listener on 127.0.0.1:0 for an
// instant, no file).
func (d *doctor) checkLoopback() {
	const name = "loopback"
	if !d.cfg.LoopbackSameUser {
		d.line(checkWarn, name, app.AnyAccountWarning)
		return
	}
	me, err := peeruser.Probe()
	switch {
	case errors.Is(err, peeruser.ErrUnsupported):
		d.line(checkFail, name, fmt.Sprintf("the owner of a loopback connection cannot be determined on %s, so Hearth refuses every connection; set config key \"loopback_same_user\" to false (every account on this computer can then reach Hearth)", runtime.GOOS))
	case err != nil:
		d.line(checkFail, name, fmt.Sprintf("a test connection of this user was not recognized (%v): Hearth would refuse its own clients; set config key \"loopback_same_user\" to false only if this cannot be fixed", err))
	default:
		d.line(checkOK, name, fmt.Sprintf("only %s is served (owner found by %s; checked with a test connection)", me, peeruser.Method()))
	}
}
