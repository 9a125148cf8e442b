package app

import (
	"fmt"
	"runtime"

	"github.com/hearth-dev/hearth/internal/peeruser"
)

// AnyAccountWarning is what host_info, the panel and doctor say while
// config key loopback_same_user is false.
const AnyAccountWarning = "loopback_same_user is false: every account on this computer can reach the MCP endpoint, the control panel and the tray control endpoint, and through the MCP endpoint read everything under roots as this user"

// guardListeners guards the MCP and panel listeners, once both are bound,
// so that they serve only the account Hearth runs as (package peeruser);
// with loopback_same_user false they are left as they are.
func (a *App) guardListeners() error {
	if !a.Config.LoopbackSameUser {
		a.Log.Warn(AnyAccountWarning)
		return nil
	}
	if peeruser.Method() == "" {
		a.Log.Warn(fmt.Sprintf("the owner of a loopback connection cannot be determined on %s: every connection is refused (set loopback_same_user to false to serve every account)", runtime.GOOS))
	}
	mcp, err := peeruser.Guard(a.mcpLn, "mcp", a.Log)
	if err != nil {
		return err
	}
	panel, err := peeruser.Guard(a.panelLn, "panel", a.Log)
	if err != nil {
		return err
	}
	a.mcpLn, a.panelLn, a.served = mcp, panel, mcp.Self()
	return nil
}

// loopbackStatus is host_info's account of who may connect.
func (a *App) loopbackStatus() map[string]any {
	if !a.Config.LoopbackSameUser {
		return map[string]any{"same_user_only": false, "warning": AnyAccountWarning}
	}
	out := map[string]any{"same_user_only": true}
	if a.served.ID != "" {
		out["account"] = a.served.String()
	}
	if m := peeruser.Method(); m != "" {
		out["owner_lookup"] = m
	} else {
		out["owner_lookup"] = "unavailable on " + runtime.GOOS + ": every connection is refused"
	}
	return out
}
