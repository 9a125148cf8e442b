package app

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/session"
	"github.com/hearth-dev/hearth/internal/uia"
)

// This file holds what the model is told of this Hearth beside the
// tools: what this host or build cannot do, host_info's status, and the
// sentence each tool's description ends with.

// unavailable lists what this host or build cannot do, so that nothing
// pretends to work (docs/DESIGN.md, "Governance", mode disclosure), by the tool that would
// do it.
type unavailable struct{ tool, what string }

func (a *App) unavailable() []unavailable {
	var out []unavailable
	if err := a.uiAvailable(); err != nil {
		reason := "Windows only"
		if runtime.GOOS == "windows" {
			reason = strings.TrimPrefix(err.Error(), uia.Unavailable+": ")
		}
		out = append(out, unavailable{"ui", "ui automation (" + reason + ")"})
	}
	if err := a.Sessions.Available(); err != nil {
		out = append(out, unavailable{"machine", "interactive sessions (" + strings.TrimPrefix(err.Error(), session.ErrUnavailable.Error()+": ") + ")"})
	}
	return out
}

// unavailableOf lists the whats of u, of tool only unless tool is "".
func unavailableOf(u []unavailable, tool string) []string {
	out := []string{}
	for _, x := range u {
		if tool == "" || x.tool == tool {
			out = append(out, x.what)
		}
	}
	return out
}

// status is what host_info discloses about governance and capabilities.
func (a *App) status() map[string]any {
	unavailable := unavailableOf(a.unavailable(), "")
	out := a.governanceStatus(context.Background())
	out["roots"] = a.Config.Roots
	out["unavailable"] = unavailable
	out["tunnel"] = a.tunnelStatus()
	ui := map[string]any{"available": true}
	if err := a.uiAvailable(); err != nil {
		ui = map[string]any{"available": false, "reason": err.Error()}
	}
	out["ui_automation"] = ui
	sessions := map[string]any{"available": true, "open": a.Sessions.Count(), "limits": a.Sessions.Limits()}
	if err := a.Sessions.Available(); err != nil {
		sessions["available"], sessions["reason"] = false, err.Error()
	}
	out["sessions"] = sessions
	out["wake"] = a.wakeStatus()
	out["data_dir"] = a.DataDir
	out["loopback"] = a.loopbackStatus()
	out["storage"] = a.storageStatus()
	return out
}

// uiAvailable reports whether UI Automation works on this host (probed
// once, on the ui worker).
func (a *App) uiAvailable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return a.UI.Available(ctx)
}

// disclosure says the sentence each tool's description ends with: the
// policy mode and what it does with that tool's operations, the e-stop
// state, wake, and what this host cannot do. The MCP server asks for it on
// every tools/list, so it is read from the database each time (the CLI's
// `safety reset` changes the latch from another process).
func (a *App) disclosure(ctx context.Context) func(tool string) string {
	st, err := a.Gov.Status(ctx)
	if err != nil {
		a.Log.Error("read governance state for tools/list", "err", err)
	}
	wake, missing := a.wakeDisclosure(), a.unavailable()
	return func(tool string) string {
		// What this host cannot do is said in the description of the
		// tool that would do it.
		tail := wake
		if u := unavailableOf(missing, tool); len(u) > 0 {
			tail += " Unavailable here: " + strings.Join(u, "; ") + "."
		}
		switch {
		case err != nil:
			return "Governance state could not be read; machine.host_info reports the policy mode and e-stop state." + tail
		case st.EStop.Latched:
			return fmt.Sprintf("Policy mode: %s. E-STOP LATCHED: every non-read operation is refused (blocked, estop) until the operator resets it.", st.Mode) + tail
		}
		return fmt.Sprintf("Policy mode: %s (the operator sets it). E-stop: released. %s", st.Mode, risk.ModelLine(st.Mode, a.primitiveNames(tool))) + tail
	}
}

// primitiveNames lists the names of the registered primitives of tool
// (every tool's when tool is "").
func (a *App) primitiveNames(tool string) []string {
	var names []string
	for _, s := range a.Registry.All() {
		if tool == "" || s.Tool == tool {
			names = append(names, s.Name())
		}
	}
	return names
}
