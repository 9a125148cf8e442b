package app

import (
	"fmt"
	"net"
	"runtime"

	"github.com/hearth-dev/hearth/internal/peeruser"
)

// AnyAccountWarning is what host_info, the panel and doctor say while
// config key loopback_same_user is false.
const AnyAccountWarning = "loopback_same_user is false: every account on this computer can reach the MCP endpoint, the control panel and the tray control endpoint, and through the MCP endpoint read everything under roots as this user"

// guardLoopback wraps one of Hearth's loopback listeners (endpoint names
// it in log lines) so that it serves only the account Hearth runs as
// (package peeruser); with loopback_same_user false it is returned as is.
func (a *App) guardLoopback(endpoint string, ln net.Listener) (net.Listener, error) {
	if !a.Config.LoopbackSameUser {
		return ln, nil
	}
	g, err := peeruser.Guard(ln, endpoint, a.Log)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// guardListeners guards the MCP and panel listeners, once both are bound.
func (a *App) guardListeners() error {
	if !a.Config.LoopbackSameUser {
		a.Log.Warn(AnyAccountWarning)
		return nil
	}
	if peeruser.Method() == "" {
		a.Log.Warn(fmt.Sprintf("the owner of a loopback connection cannot be determined on %s: every connection is refused (set loopback_same_user to false to serve every account)", runtime.GOOS))
	}
	var err error
	if a.mcpLn, err = a.guardLoopback("mcp", a.mcpLn); err != nil {
		return err
	}
	a.panelLn, err = a.guardLoopback("panel", a.panelLn)
	return err
}

// loopbackStatus is host_info's account of who may connect.
func (a *App) loopbackStatus() map[string]any {
	if !a.Config.LoopbackSameUser {
		return map[string]any{"same_user_only": false, "warning": AnyAccountWarning}
	}
	out := map[string]any{"same_user_only": true}
	if me, err := peeruser.Self(); err == nil {
		out["account"] = me.String()
	}
	if m := peeruser.Method(); m != "" {
		out["owner_lookup"] = m
	} else {
		out["owner_lookup"] = "unavailable on " + runtime.GOOS + ": every connection is refused"
	}
	return out
}
