package tray

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/assets"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// Snapshot is what the tray knows about the running Hearth at one moment.
type Snapshot struct {
	// StatusErr is set when the governance state could not be read; the
	// tray then says so instead of claiming "ready".
	StatusErr   bool
	EStop       bool
	EStopReason string
	// Pending counts permits waiting for the operator.
	Pending int
	// Mode is the policy mode in force (the one config.json, doctor and
	// host_info show).
	Mode   string
	Tunnel tunnel.Status
	// TunnelAutostart is tunnel.autostart: a Stop lasts only until
	// Hearth next starts.
	TunnelAutostart bool
	// Autostart is the "Start at logon" state.
	Autostart AutostartState
	// LastError is the tray's own last failed action, shown in the tooltip
	// until the next action succeeds.
	LastError string
	// Update is the version of an available update; "" for none.
	Update string
}

// AutostartState is what the tray knows of the logon task.
type AutostartState struct {
	// Known is false when the task could not be queried (or not yet).
	Known   bool
	Enabled bool
}

// Action is what clicking a menu item does.
type Action int

// Actions.
const (
	ActNone Action = iota
	ActOpenPanel
	ActEStop
	ActStartTunnel
	ActStopTunnel
	ActEnableAutostart
	ActDisableAutostart
	ActOpenChatGPT
	ActQuit
)

// Item names a menu entry.
type Item int

// Menu entries, top to bottom.
const (
	ItemOpenPanel Item = iota
	ItemOpenChatGPT
	ItemPermits
	ItemEStop
	ItemTunnel
	ItemAutostart
	ItemQuit
	// ItemUpdate is shown (below Pending permits) only while an update is
	// available.
	ItemUpdate
	numItems
)

// Entry is one menu entry as shown.
type Entry struct {
	Title   string
	Tooltip string
	// Checkbox entries show Checked; others never do.
	Checkbox bool
	Checked  bool
	Disabled bool
	// Hidden entries are not in the menu.
	Hidden bool
	Action Action
	// Page is the control panel page ActOpenPanel lands on ("" for a
	// plain login).
	Page string
}

// View is everything the notification-area icon shows: which icon, its
// tooltip, and each menu entry. Two equal Views look the same, so the UI
// is touched only when the View changes.
type View struct {
	Icon    string
	Tooltip string
	Entries [numItems]Entry
}

// maxTooltip is the longest tooltip Windows shows (NOTIFYICONDATAW.szTip
// holds 128 UTF-16 units including the terminating NUL); Render keeps to
// it in runes, which is never more UTF-16 units than the BMP-only text
// the tray writes.
const maxTooltip = 127

// Render turns a snapshot into what the tray shows. The icon follows
// the order of urgency of docs/DESIGN.md, "Tunnel, tray and recovery":
// e-stop latched, then a permit waiting,
// then the tunnel down (anything but ready: ChatGPT cannot reach Hearth),
// then ready.
func Render(s Snapshot) View {
	var v View
	var headline string
	switch {
	case s.EStop:
		v.Icon = assets.TrayStoppedIcon
		headline = "E-STOP is on"
		if s.EStopReason != "" {
			// A long reason must not push the tunnel line out.
			headline += ": " + clip(s.EStopReason, 60)
		}
	case s.Pending > 0:
		v.Icon = assets.TrayPermitIcon
		headline = plural(s.Pending, "permit waits", "permits wait") + " for you"
	case s.StatusErr:
		v.Icon = assets.TrayDownIcon
		headline = "cannot read its state (see the control panel)"
	case s.Tunnel.State != tunnel.StateReady:
		v.Icon = assets.TrayDownIcon
		headline = "ChatGPT cannot reach it"
	default:
		v.Icon = assets.TrayReadyIcon
		headline = "ready"
	}
	lines := []string{"Hearth: " + headline, "Tunnel: " + tunnelPhrase(s.Tunnel.State)}
	if s.Mode != "" {
		lines = append(lines, "Mode: "+risk.ModeLabel(s.Mode))
	}
	if s.LastError != "" {
		lines = append(lines, s.LastError)
	}
	v.Tooltip = clip(strings.Join(lines, "\n"), maxTooltip)

	v.Entries[ItemOpenPanel] = Entry{Title: "Open control panel", Action: ActOpenPanel}
	v.Entries[ItemOpenChatGPT] = Entry{
		Title:   "Open ChatGPT",
		Tooltip: "Hearth's own ChatGPT window: where Hearth can bring a conversation back when its work is done",
		Action:  ActOpenChatGPT,
	}
	v.Entries[ItemPermits] = Entry{
		Title:   fmt.Sprintf("Pending permits (%d)", s.Pending),
		Tooltip: "Approve or deny what waits for you, in the control panel",
		Action:  ActOpenPanel,
		Page:    "/permits",
	}
	if s.EStop {
		v.Entries[ItemEStop] = Entry{
			Title:   "Emergency stop is on: reset in the control panel",
			Tooltip: "Only you can reset it, in the control panel's Safety page",
			Action:  ActOpenPanel,
			Page:    "/safety",
		}
	} else {
		v.Entries[ItemEStop] = Entry{
			Title:   "Emergency stop",
			Tooltip: "Stop all running work now and refuse every change until you reset it",
			Action:  ActEStop,
		}
	}
	v.Entries[ItemTunnel] = tunnelEntry(s.Tunnel.State, s.TunnelAutostart)
	v.Entries[ItemAutostart] = Entry{
		Title: "Start at logon", Checkbox: true,
		Checked:  s.Autostart.Known && s.Autostart.Enabled,
		Disabled: !s.Autostart.Known,
		Tooltip:  "Start Hearth when you log on, and restart it within a minute if it stops",
		Action:   ActEnableAutostart,
	}
	if s.Autostart.Known && s.Autostart.Enabled {
		v.Entries[ItemAutostart].Action = ActDisableAutostart
	}
	v.Entries[ItemQuit] = Entry{Title: "Quit Hearth", Tooltip: "Stop Hearth until you start it again (or the next logon)", Action: ActQuit}
	v.Entries[ItemUpdate] = Entry{Title: "Hearth is up to date", Hidden: true}
	if s.Update != "" {
		v.Entries[ItemUpdate] = Entry{
			Title:   "Update to " + strings.TrimPrefix(s.Update, "v") + " — what changed",
			Tooltip: "See what changed and update, on the control panel's Status page",
			Action:  ActOpenPanel,
			Page:    "/",
		}
	}
	return v
}

// tunnelEntry is the tunnel's menu entry: its action follows the state,
// its title names both.
func tunnelEntry(st tunnel.State, autostart bool) Entry {
	switch st {
	case tunnel.StateNotConfigured:
		return Entry{Title: "Set up the tunnel…", Tooltip: "Enter the tunnel key and ID in the control panel", Action: ActOpenPanel, Page: "/setup"}
	case tunnel.StateKeyRefused:
		return Entry{Title: "Tunnel key refused: paste it again…", Tooltip: "OpenAI refused the tunnel key; paste it again on the control panel's Setup page", Action: ActOpenPanel, Page: "/setup"}
	case tunnel.StateClientChanged:
		return Entry{Title: "tunnel-client changed: check it…", Tooltip: "Check tunnel-client and pin it again on the control panel's Setup page", Action: ActOpenPanel, Page: "/setup"}
	case tunnel.StateStarting, tunnel.StateReady, tunnel.StateUnhealthy, tunnel.StateBackoff:
		tip := "Disconnect ChatGPT from Hearth"
		if autostart {
			// Stop does not touch "connect whenever Hearth starts".
			tip += " until Hearth next starts (to stop for good: Setup, Details)"
		}
		return Entry{Title: "Stop tunnel (" + tunnelPhrase(st) + ")", Tooltip: tip, Action: ActStopTunnel}
	default:
		return Entry{Title: "Start tunnel (" + tunnelPhrase(st) + ")", Tooltip: "Connect ChatGPT to Hearth through the Secure MCP Tunnel", Action: ActStartTunnel}
	}
}

// tunnelPhrase says a tunnel state in words.
func tunnelPhrase(st tunnel.State) string {
	switch st {
	case tunnel.StateNotConfigured:
		return "not set up"
	case tunnel.StateStopped:
		return "stopped"
	case tunnel.StateStarting:
		return "starting"
	case tunnel.StateReady:
		return "ready"
	case tunnel.StateUnhealthy:
		return "not answering"
	case tunnel.StateBackoff:
		return "restarting"
	case tunnel.StateCrashLoop:
		return "crashed repeatedly"
	case tunnel.StateClientChanged:
		return "tunnel-client changed; not run"
	case tunnel.StateKeyRefused:
		return "OpenAI refused the key"
	case "":
		return "unknown"
	}
	return string(st)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// clip shortens s to at most max runes, marking a cut with an ellipsis.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
