package tray

import (
	"context"
	"errors"
	"testing"

	"github.com/hearth-dev/hearth/internal/tunnel"
)

func TestMenuTitle(t *testing.T) {
	for in, want := range map[string]string{
		`MenuItem[3, "Pending permits (2)"]`:           "Pending permits (2)",
		`MenuItem[4, parent 1, "Say \"hi\""]`:          `Say "hi"`,
		`MenuItem[5, "Emergency stop is on: reset …"]`: "Emergency stop is on: reset …",
		`not a menu item`:                              "not a menu item",
	} {
		if got := menuTitle(in); got != want {
			t.Errorf("menuTitle(%q) = %q, want %q", in, got, want)
		}
	}
	if got := systrayErrors("2026/12/01 other: x\n2026/12/01 systray error: unable to set icon: Access denied\n"); got != "2026/12/01 systray error: unable to set icon: Access denied" {
		t.Errorf("systrayErrors: %q", got)
	}
}

// TestShowStates draws the real icon in two states and reads back what
// the shell and the menu hold. Where Windows offers no notification area
// (Wine without a display) it must say so with ErrNoIcon, promptly.
func TestShowStates(t *testing.T) {
	snaps := []Snapshot{
		{Tunnel: tunnel.Status{State: tunnel.StateReady}},
		{EStop: true, EStopReason: "test", Tunnel: tunnel.Status{State: tunnel.StateReady}},
	}
	res, err := ShowStates(context.Background(), snaps, [2]string{"Hearth test", "a notification"})
	if errors.Is(err, ErrNoIcon) {
		t.Skipf("no notification area here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.States) != 2 {
		t.Fatalf("%d states", len(res.States))
	}
	for i, s := range res.States {
		if s.ShellErr != "" || s.View != Render(snaps[i]) || len(s.Menu) != len(s.View.Entries) {
			t.Fatalf("state %d: %+v", i, s)
		}
		for j, e := range s.View.Entries {
			if s.Menu[j].Title != e.Title {
				t.Errorf("state %d entry %d: menu %q, view %q", i, j, s.Menu[j].Title, e.Title)
			}
		}
	}
	if res.Notice != nil {
		t.Errorf("notification: %v", res.Notice)
	}
}
