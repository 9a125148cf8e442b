package tray

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/assets"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

func ready() Snapshot {
	return Snapshot{Tunnel: tunnel.Status{State: tunnel.StateReady}, Autostart: AutostartState{Known: true, Enabled: true}}
}

// TestRenderIconPriority walks the order of docs/DESIGN.md, "Tunnel, tray and recovery": e-stop, then a waiting
// permit, then the tunnel down, then ready.
func TestRenderIconPriority(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*Snapshot)
		icon     string
		headline string
	}{
		{"ready", func(*Snapshot) {}, assets.TrayReadyIcon, "Hearth: ready"},
		{"tunnel starting", func(s *Snapshot) { s.Tunnel.State = tunnel.StateStarting }, assets.TrayDownIcon, "Hearth: ChatGPT cannot reach it"},
		{"tunnel not set up", func(s *Snapshot) { s.Tunnel.State = tunnel.StateNotConfigured }, assets.TrayDownIcon, "Hearth: ChatGPT cannot reach it"},
		{"unreadable state", func(s *Snapshot) { s.StatusErr = true }, assets.TrayDownIcon, "Hearth: cannot read its state"},
		{"one permit", func(s *Snapshot) { s.Pending = 1 }, assets.TrayPermitIcon, "Hearth: 1 permit waits for you"},
		{"permits beat tunnel down", func(s *Snapshot) { s.Pending = 3; s.Tunnel.State = tunnel.StateCrashLoop }, assets.TrayPermitIcon, "Hearth: 3 permits wait for you"},
		{"estop beats all", func(s *Snapshot) {
			s.EStop, s.EStopReason, s.Pending, s.Tunnel.State = true, "model said so", 2, tunnel.StateStopped
		}, assets.TrayStoppedIcon, "Hearth: E-STOP is on: model said so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ready()
			tc.edit(&s)
			v := Render(s)
			if v.Icon != tc.icon {
				t.Errorf("icon = %s, want %s", v.Icon, tc.icon)
			}
			if !strings.HasPrefix(v.Tooltip, tc.headline) {
				t.Errorf("tooltip = %q, want it to start with %q", v.Tooltip, tc.headline)
			}
			if _, err := assets.Icon(v.Icon); err != nil {
				t.Errorf("icon %s is not embedded: %v", v.Icon, err)
			}
		})
	}
}

func TestRenderEntries(t *testing.T) {
	s := ready()
	s.Pending = 2
	v := Render(s)
	want := map[Item]Entry{
		ItemOpenPanel: {Title: "Open control panel", Action: ActOpenPanel},
		ItemPermits:   {Title: "Pending permits (2)", Action: ActOpenPanel, Page: "/permits"},
		ItemEStop:     {Title: "Emergency stop", Action: ActEStop},
		ItemTunnel:    {Title: "Stop tunnel (ready)", Action: ActStopTunnel},
		ItemAutostart: {Title: "Start at logon", Checkbox: true, Checked: true, Action: ActDisableAutostart},
		ItemQuit:      {Title: "Quit Hearth", Action: ActQuit},
	}
	for item, w := range want {
		e := v.Entries[item]
		e.Tooltip = ""
		if e != w {
			t.Errorf("entry %d = %+v, want %+v", item, e, w)
		}
	}

	// Latched: the entry leads to the panel, where only the operator resets.
	s.EStop = true
	if e := Render(s).Entries[ItemEStop]; e.Action != ActOpenPanel || e.Page != "/safety" || !strings.Contains(e.Title, "reset in the control panel") {
		t.Errorf("latched e-stop entry = %+v", e)
	}
	// The logon task not (yet) known: unchecked and disabled.
	s.Autostart = AutostartState{}
	if e := Render(s).Entries[ItemAutostart]; e.Checked || !e.Disabled || e.Action != ActEnableAutostart {
		t.Errorf("unknown autostart entry = %+v", e)
	}
	s.Autostart = AutostartState{Known: true}
	if e := Render(s).Entries[ItemAutostart]; e.Checked || e.Disabled || e.Action != ActEnableAutostart {
		t.Errorf("autostart off entry = %+v", e)
	}
}

func TestRenderTunnelEntry(t *testing.T) {
	for st, want := range map[tunnel.State]struct {
		title  string
		action Action
	}{
		tunnel.StateNotConfigured: {"Set up the tunnel…", ActOpenPanel},
		tunnel.StateClientChanged: {"tunnel-client changed: check it…", ActOpenPanel},
		tunnel.StateKeyRefused:    {"Tunnel key refused: paste it again…", ActOpenPanel},
		tunnel.StateStopped:       {"Start tunnel (stopped)", ActStartTunnel},
		tunnel.StateCrashLoop:     {"Start tunnel (crashed repeatedly)", ActStartTunnel},
		tunnel.StateStarting:      {"Stop tunnel (starting)", ActStopTunnel},
		tunnel.StateReady:         {"Stop tunnel (ready)", ActStopTunnel},
		tunnel.StateUnhealthy:     {"Stop tunnel (not answering)", ActStopTunnel},
		tunnel.StateBackoff:       {"Stop tunnel (restarting)", ActStopTunnel},
	} {
		s := ready()
		s.Tunnel.State = st
		v := Render(s)
		if e := v.Entries[ItemTunnel]; e.Title != want.title || e.Action != want.action {
			t.Errorf("%s: entry = %q/%d, want %q/%d", st, e.Title, e.Action, want.title, want.action)
		}
		// What leads to the panel leads to the Setup page.
		if e := v.Entries[ItemTunnel]; (e.Action == ActOpenPanel) != (e.Page == "/setup") {
			t.Errorf("%s: entry %+v: an Open entry lands on /setup, no other has a page", st, e)
		}
		if !strings.Contains(v.Tooltip, "\nTunnel: ") {
			t.Errorf("%s: tooltip %q has no tunnel line", st, v.Tooltip)
		}
	}
}

// TestRenderTooltipFits keeps the tooltip within what Windows shows, and
// the tunnel line in it however long the e-stop reason.
func TestRenderTooltipFits(t *testing.T) {
	s := ready()
	s.EStop, s.EStopReason = true, strings.Repeat("é", 500)
	s.LastError = "Last action failed: " + strings.Repeat("x", 300)
	v := Render(s)
	if n := utf8.RuneCountInString(v.Tooltip); n > maxTooltip {
		t.Fatalf("tooltip is %d runes", n)
	}
	if !strings.Contains(v.Tooltip, "\nTunnel: ready") {
		t.Fatalf("the tunnel line was cut: %q", v.Tooltip)
	}
	if !utf8.ValidString(v.Tooltip) {
		t.Fatal("tooltip cut inside a character")
	}
}

// TestRenderShowsTheMode: the tooltip names the policy mode in force in
// the panel's words.
func TestRenderShowsTheMode(t *testing.T) {
	s := ready()
	s.Mode = "trusted"
	if v := Render(s); !strings.Contains(v.Tooltip, "\nMode: Trusted") {
		t.Fatalf("tooltip: %q", v.Tooltip)
	}
}

// TestStopTunnelSaysHowLong: with tunnel.autostart on, the tray's Stop
// says it lasts only until Hearth next starts, and where to stop for
// good; with it off it says nothing of the kind.
func TestStopTunnelSaysHowLong(t *testing.T) {
	s := ready()
	s.TunnelAutostart = true
	if e := Render(s).Entries[ItemTunnel]; e.Action != ActStopTunnel || !strings.Contains(e.Tooltip, "until Hearth next starts") {
		t.Fatalf("Stop with autostart on: %+v", e)
	}
	s.TunnelAutostart = false
	if e := Render(s).Entries[ItemTunnel]; strings.Contains(e.Tooltip, "next starts") {
		t.Fatalf("Stop with autostart off: %+v", e)
	}
}
