//go:build !windows

package wake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
)

// TestWakerFakeChatGPT covers the waker against the fake ChatGPT page in
// real headless Chromium: a wake when terminal arrivals wait and the tab
// is quiet; none for pending-only work, while a reply is generated, when
// disarmed, when unbound, or while the conversation is not quiet; the
// debounce, the cooldown and the attempt limit, each counted and shown.
func TestWakerFakeChatGPT(t *testing.T) {
	fake := NewFakeChatGPT(t)
	r := newRig(t, t.TempDir(), true, fastSettings(), fake)
	r.open()
	ctx := context.Background()
	set := func(edit func(*Settings)) {
		s := r.svc.Settings()
		edit(&s)
		if err := r.svc.SetSettings(ctx, "test", s); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("wake when terminal arrivals wait and the tab is quiet", func(t *testing.T) {
		r.t = t
		r.bindConv(fake, "w1", "r:w1")
		r.arrive("r:w1", "fut_w1", "completed")
		waitFor(t, "the wake prompt sent", func() bool { return len(fake.Sent("w1")) == 1 })
		if got := fake.Sent("w1")[0]; got != WakePrompt {
			t.Fatalf("sent %q, want the wake prompt", got)
		}
		waitFor(t, "the wake journaled", func() bool { return len(r.entries(KindWake)) == 1 })
		e := r.entries(KindWake)[0]
		b, _ := r.binding("r:w1")
		if e["route"] != "r:w1" || e["target_id"] != b.TargetID || e["attempt"] != float64(1) || len(e) != 3 {
			t.Fatalf("journaled %v", e)
		}
		if b.Attempts != 1 || b.LastWakeAt == nil {
			t.Fatalf("binding %+v", b)
		}
	})

	t.Run("armed and idle, no page is read", func(t *testing.T) {
		r.t = t
		// w1's arrival was offered to it (as a call would), nothing else
		// waits, and no probe is live: passes read the database only.
		dispatchtest.OfferAll(t, r.db, "r:w1")
		b, _ := r.binding("r:w1")
		r.passes(2)
		before := r.svc.Stats().PageReads[b.TargetID]
		r.passes(5)
		if after := r.svc.Stats().PageReads[b.TargetID]; after != before {
			t.Fatalf("%d page reads in 5 idle passes", after-before)
		}
		dispatchtest.ForgetOffered(t, r.db, "r:w1")
	})

	t.Run("cooldown, then the attempt limit and a give-up", func(t *testing.T) {
		r.t = t
		// w1 was woken once and did not call: the cooldown (an hour)
		// holds the second wake.
		r.passes(3)
		if n := len(fake.Sent("w1")); n != 1 {
			t.Fatalf("%d wakes within the cooldown", n)
		}
		set(func(s *Settings) { s.Cooldown, s.MaxAttempts = 0, 2 })
		waitFor(t, "the second wake after the cooldown", func() bool { return len(fake.Sent("w1")) == 2 })
		waitFor(t, "the give-up", func() bool { return len(r.entries(KindGiveUp)) == 1 })
		r.passes(3)
		if n := len(fake.Sent("w1")); n != 2 {
			t.Fatalf("%d wakes with max_attempts 2", n)
		}
		b, _ := r.binding("r:w1")
		if !b.GaveUp || b.Attempts != 2 {
			t.Fatalf("binding %+v", b)
		}
		var stored, gaveUp int
		if err := r.db.R.QueryRow(`SELECT attempts, gave_up FROM wake_bindings WHERE route = 'r:w1'`).Scan(&stored, &gaveUp); err != nil || stored != 2 || gaveUp != 1 {
			t.Fatalf("stored attempts %d gave_up %d (%v)", stored, gaveUp, err)
		}
		// The conversation calls again: the count starts over.
		r.svc.Called("r:w1")
		if b, _ := r.binding("r:w1"); b.Attempts != 0 || b.GaveUp {
			t.Fatalf("after a call: %+v", b)
		}
		set(func(s *Settings) { s.Cooldown, s.MaxAttempts = time.Hour, 3 })
	})

	t.Run("no wake for pending-only work", func(t *testing.T) {
		r.t = t
		r.bindConv(fake, "w2", "r:w2")
		dispatchtest.InsertRunning(t, r.db, "fut_p", "r:w2")
		// Non-terminal arrivals, as a job parked on a permit (pending) or
		// not yet finished queues them: undelivered, but not results.
		for i, state := range []string{"pending", "queued", "running"} {
			r.arrive("r:w2", fmt.Sprintf("fut_p%d", i), state)
		}
		r.passes(3)
		if n := len(fake.Sent("w2")); n != 0 {
			t.Fatalf("pending-only work woke the tab %d times", n)
		}
	})

	t.Run("no wake while a reply is being generated", func(t *testing.T) {
		r.t = t
		fake.SetGenerating("w2", true)
		waitFor(t, "the stop button", func() bool {
			var gen bool
			b, _ := browserForTest(r.svc)
			bd, _ := r.binding("r:w2")
			st, err := r.svc.read(ctx, b, bd.TargetID)
			gen = err == nil && st.Generating
			return gen
		})
		before := r.svc.Stats().SkippedGen
		r.arrive("r:w2", "fut_w2", "failed")
		waitFor(t, "a skipped wake", func() bool { return r.svc.Stats().SkippedGen > before })
		if n := len(fake.Sent("w2")); n != 0 {
			t.Fatalf("woke a generating tab %d times", n)
		}
		fake.SetGenerating("w2", false)
		waitFor(t, "the wake once the reply is done", func() bool { return len(fake.Sent("w2")) == 1 })
	})

	t.Run("no wake while the conversation is not quiet, nor within the debounce", func(t *testing.T) {
		r.t = t
		r.bindConv(fake, "w3", "r:w3")
		set(func(s *Settings) { s.Quiet = time.Hour })
		r.svc.Called("r:w3")
		r.arrive("r:w3", "fut_w3", "completed")
		r.passes(3)
		if n := len(fake.Sent("w3")); n != 0 {
			t.Fatalf("a conversation that just called was woken %d times", n)
		}
		set(func(s *Settings) { s.Quiet, s.Debounce = 0, time.Hour })
		r.passes(3)
		if n := len(fake.Sent("w3")); n != 0 {
			t.Fatalf("woken %d times within the debounce", n)
		}
		set(func(s *Settings) { s.Debounce = 0 })
		waitFor(t, "the wake after the debounce", func() bool { return len(fake.Sent("w3")) == 1 })
	})

	t.Run("no wake when disarmed", func(t *testing.T) {
		r.t = t
		r.bindConv(fake, "w4", "r:w4")
		if err := r.svc.SetArmed(ctx, "test", false); err != nil {
			t.Fatal(err)
		}
		r.arrive("r:w4", "fut_w4", "completed")
		r.passesAny(5)
		if n := len(fake.Sent("w4")); n != 0 {
			t.Fatalf("disarmed, the tab was woken %d times", n)
		}
		if err := r.svc.SetArmed(ctx, "test", true); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the wake once armed", func() bool { return len(fake.Sent("w4")) == 1 })
		armed := r.entries(KindArmed)
		if len(armed) != 2 || armed[0]["armed"] != false || armed[1]["armed"] != true {
			t.Fatalf("journaled arming %v", armed)
		}
	})

	t.Run("no wake when unbound", func(t *testing.T) {
		r.t = t
		r.tab(fake.URL("w5")) // open, shown, never bound
		r.arrive("r:w5", "fut_w5", "completed")
		r.passes(3)
		if n := len(fake.Sent("w5")); n != 0 {
			t.Fatalf("an unbound conversation's tab was woken %d times", n)
		}
		if err := r.svc.Unbind(ctx, "test", "r:w4"); err != nil {
			t.Fatal(err)
		}
		// No cooldown: only the unbinding keeps w4's tab from a second wake.
		set(func(s *Settings) { s.Cooldown = 0 })
		r.arrive("r:w4", "fut_w4b", "completed")
		r.passes(3)
		if n := len(fake.Sent("w4")); n != 1 {
			t.Fatalf("an unbound tab was woken again (%d)", n)
		}
		var n int
		if err := r.db.R.QueryRow(`SELECT COUNT(*) FROM wake_bindings WHERE route = 'r:w4'`).Scan(&n); err != nil && err != sql.ErrNoRows || n != 0 {
			t.Fatalf("unbound binding still stored (%d, %v)", n, err)
		}
	})
	t.Run("a bound tab that left for another origin is neither read nor typed into", func(t *testing.T) {
		r.t = t
		target := r.bindConv(fake, "w6", "r:w6")
		other := NewFakeChatGPT(t) // another loopback port: another origin
		// The binder has not looked since: the binding still says live.
		HoldScansForTest(r.svc, true)
		defer HoldScansForTest(r.svc, false)
		if err := PageForTest(ctx, r.svc, target, "Page.navigate", map[string]any{"url": other.URL("w6")}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the tab on the other origin", func() bool {
			v, err := EvalForTest(ctx, r.svc, target, "location.origin + (document.getElementById('prompt-textarea') ? ' composer' : '')")
			return err == nil && v == other.Origin()+" composer"
		})
		if b, _ := r.binding("r:w6"); !b.Live || b.TargetID != target {
			t.Fatalf("the binding already followed the navigation (%+v); the test proves nothing", b)
		}
		before := r.svc.Stats().PageReads[target]
		if err := r.svc.WakeTab(ctx, "r:w6", "bound", "typed into a page of another origin"); !errors.Is(err, errNotAllowed) {
			t.Fatalf("WakeTab on a tab now on another origin: %v, want errNotAllowed", err)
		}
		if n := r.svc.Stats().PageReads[target] - before; n != 0 {
			t.Fatalf("the tab on another origin was read %d times", n)
		}
		if _, err := ReadTabForTest(ctx, r.svc, target); !errors.Is(err, errNotAllowed) {
			t.Fatalf("the read script ran in a tab on another origin: %v", err)
		}
		if sent := other.Sent("w6"); len(sent) != 0 {
			t.Fatalf("typed into a page of another origin: %q", sent)
		}
	})
}
