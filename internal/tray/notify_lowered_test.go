package tray

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
)

// Each lowering is announced once: those already there at the first
// observation are not (the panel's banner shows them), each new one gets
// its own notice, and none is announced again while it stays unseen.
func TestNotifierAnnouncesEachLoweringOnce(t *testing.T) {
	var n Notifier
	now := time.Now()
	low := func(seqs ...int64) Observation {
		var o Observation
		for _, s := range seqs {
			o.Lowered = append(o.Lowered, LoweredSetting{Seq: s, What: "lowering " + string(rune('0'+s)), By: "Ada"})
		}
		return o
	}
	if got := n.Observe(now, low(1)); len(got) != 0 {
		t.Fatalf("first observation announced %+v", got)
	}
	got := n.Observe(now, low(1, 4, 7))
	if len(got) != 2 || got[0].Kind != NoticeLowered || got[1].Kind != NoticeLowered ||
		!strings.Contains(got[0].Text, "lowering 4") || !strings.Contains(got[1].Text, "lowering 7") {
		t.Fatalf("two new lowerings: %+v", got)
	}
	if again := n.Observe(now, low(1, 4, 7)); len(again) != 0 {
		t.Fatalf("the same lowerings again: %+v", again)
	}
	// Marked seen in the panel, then one more: only the new one.
	if got := n.Observe(now, low(9)); len(got) != 1 || !strings.Contains(got[0].Text, "lowering 9") {
		t.Fatalf("after seen, a new one: %+v", got)
	}
}

// On a real Hearth, switching to trusted, adding an always-rule and
// resetting the e-stop each raise one notification naming how the panel
// session was signed in, and each ledger entry carries that origin;
// switching to ask lowers nothing and raises none.
func TestNotificationsOfLoweredSafety(t *testing.T) {
	in := hearthtest.Start(t, nil)
	var shown []Notice
	w := NotificationsFor(hearthOf(in.App), func(nt Notice) error { shown = append(shown, nt); return nil })
	ctx := t.Context()
	if got := w.Poll(ctx); len(got) != 0 {
		t.Fatalf("a quiet Hearth: %+v", got)
	}
	panel := govern.WithOrigin(ctx, "control")
	if err := in.App.Operator.SetPolicy(panel, "Ada", config.ModeTrusted); err != nil {
		t.Fatal(err)
	}
	got := w.Poll(ctx)
	if len(got) != 1 || got[0].Kind != NoticeLowered || !strings.Contains(got[0].Text, "trusted") ||
		!strings.Contains(got[0].Text, "another program") {
		t.Fatalf("after switching to trusted: %+v", got)
	}
	if again := w.Poll(ctx); len(again) != 0 {
		t.Fatalf("the same lowering again: %+v", again)
	}
	if err := in.App.Operator.SetPolicy(panel, "Ada", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	if got := w.Poll(ctx); len(got) != 0 {
		t.Fatalf("switching to ask announced %+v", got)
	}
	if _, err := in.App.Operator.AddRule(govern.WithOrigin(ctx, "tray"), "Ada", "git", "", "status"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.EStop(ctx, "Ada", "test"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.Reset(govern.WithOrigin(ctx, "serve"), "Ada"); err != nil {
		t.Fatal(err)
	}
	got = w.Poll(ctx)
	// (The e-stop, latched and released between two polls, has no
	// notice of its own.)
	if len(got) != 2 || !strings.Contains(got[0].Text, "git status") || !strings.Contains(got[0].Text, "tray icon") ||
		!strings.Contains(got[1].Text, "reset") || !strings.Contains(got[1].Text, "printed") {
		t.Fatalf("after a rule, an e-stop and a reset: %+v", got)
	}
	if len(shown) != 3 {
		t.Fatalf("shown %d notices, want 3", len(shown))
	}

	want := map[string]string{ledger.KindPolicyChange: "control", ledger.KindRuleAdded: "tray", ledger.KindReset: "serve"}
	tail, err := in.App.Ledger.Tail(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, e := range tail {
		origin, ok := want[e.Kind]
		if !ok {
			continue
		}
		var d struct{ Session string }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Session != origin {
			t.Fatalf("%s entry has session %q, want %q: %s", e.Kind, d.Session, origin, e.Data)
		}
		found[e.Kind] = true
	}
	if len(found) != len(want) {
		t.Fatalf("ledger entries with a session: %v, want %v", found, want)
	}
}

// Switching to trusted by editing config.json (adopted when Hearth
// starts) is announced as a switch in the panel is: a tray notification
// from the first poll of the Hearth that adopted it, and an unseen
// lowering for the panel's banner, journaled as made by config.json. A
// later start with nothing changed announces nothing, and a Hearth that
// did not adopt it (a later start) does not announce it again.
func TestConfigTrustedIsAnnounced(t *testing.T) {
	home := t.TempDir()
	first := hearthtest.StartHome(t, home, nil)
	if m := first.App.Gov.Mode(t.Context()); m != config.ModeAsk {
		t.Fatalf("first start in mode %q", m)
	}
	first.Stop()

	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.Policy.Mode = config.ModeTrusted
		c.MCPAddr, c.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
		c.Roots = first.App.Config.Roots
	})
	started := time.Now()
	in := hearthtest.StartHome(t, home, nil)
	if m := in.App.Gov.Mode(t.Context()); m != config.ModeTrusted {
		t.Fatalf("config.json says trusted, Hearth is in %q", m)
	}
	h := hearthOf(in.App)
	h.Started = started
	w := NotificationsFor(h, func(Notice) error { return nil })
	got := w.Poll(t.Context())
	if len(got) != 1 || got[0].Kind != NoticeLowered || !strings.Contains(got[0].Text, "trusted") || !strings.Contains(got[0].Text, "config.json") {
		t.Fatalf("the first poll after adopting trusted from config.json: %+v", got)
	}
	if again := w.Poll(t.Context()); len(again) != 0 {
		t.Fatalf("announced again: %+v", again)
	}
	lowered, err := in.App.Gov.Lowered(t.Context())
	if err != nil || len(lowered) != 1 || lowered[0].By != govern.ConfigFileOperator {
		t.Fatalf("the banner's list: %v %+v", err, lowered)
	}
	in.Stop()

	// A later start: nothing changed, nothing new; the earlier lowering
	// (still unseen, shown by the banner) is not notified again.
	restarted := time.Now()
	again := hearthtest.StartHome(t, home, nil)
	h = hearthOf(again.App)
	h.Started = restarted
	if got := NotificationsFor(h, func(Notice) error { return nil }).Poll(t.Context()); len(got) != 0 {
		t.Fatalf("a start with nothing changed announced %+v", got)
	}
}
