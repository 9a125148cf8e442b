package update

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestKilledHandoverInstallsAtMostTwice: with update.auto on, a release
// whose hand-overs are cut short (the watching Hearth is killed during
// the health wait, every time) is installed twice in all: the first cut
// may be no fault of the release, so it is tried once more; after the
// second it is refused, said on State, and not installed again.
func TestKilledHandoverInstallsAtMostTwice(t *testing.T) {
	r := newRelease(t)
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	data := t.TempDir()
	var mu sync.Mutex
	installs, handed := 0, 0
	// Each hand-over is killed right after it recorded itself on disk, as
	// Apply records it before the swap.
	handoff := func(p Plan) {
		mu.Lock()
		installs++
		mu.Unlock()
		if err := writeJSON(pendingPath(data), pending{ID: attemptID(), From: p.From, To: p.To, SHA256: p.SHA256, When: time.Now().UTC()}); err != nil {
			t.Error(err)
		}
		mu.Lock()
		handed++
		mu.Unlock()
	}
	opts := Options{Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, Auto: true, DataDir: data,
		QuietEvery: 10 * time.Millisecond, Quiet: func() bool { return true }, Handoff: handoff}
	for start := 1; start <= 4; start++ {
		// The next start finishes the cut-short hand-over first.
		if _, _, ok := Resume(context.Background(), Handoff{DataDir: data}, "1.3.0"); ok != (start > 1 && start <= 3) {
			t.Fatalf("start %d: resumed %v", start, ok)
		}
		s := New(opts)
		ctx, cancel := context.WithCancel(context.Background())
		go s.Run(ctx)
		deadline := time.Now().Add(20 * time.Second)
		for st := s.State(); st.Checked.IsZero() || st.Phase == PhaseChecking; st = s.State() {
			if time.Now().After(deadline) {
				t.Fatalf("start %d: never checked: %+v", start, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
		// Two more turns of Run, so an install it would start has
		// started, then until it handed over or stopped.
		s.wake <- struct{}{}
		s.wake <- struct{}{}
		handing := func(st State) bool {
			mu.Lock()
			defer mu.Unlock()
			return st.Phase == PhaseDownloading || (st.Phase == PhaseRestarting && handed < installs)
		}
		for st := s.State(); handing(st); st = s.State() {
			if time.Now().After(deadline) {
				t.Fatalf("start %d: the install never ended: %+v", start, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		mu.Lock()
		n := installs
		mu.Unlock()
		if want := min(start, 2); n != want {
			t.Fatalf("start %d: %d installs, want %d", start, n, want)
		}
		st := s.State()
		if start <= 2 && st.Refused != nil {
			t.Fatalf("start %d: refused after %d cut-short hand-overs: %+v", start, start-1, st.Refused)
		}
		if start > 2 && (st.Refused == nil || st.Refused.Unfinished != 2 || st.Offer != nil || !strings.Contains(st.Refused.Plain, "stopped 2 times while it checked the new version 1.4.0")) {
			t.Fatalf("start %d: not refused: %+v (refused %+v)", start, st, st.Refused)
		}
	}
	// A newer release is offered again.
	r.publish(t, "1.4.1", "1.0.0", map[string][]byte{ProgramName(): program})
	opts.Auto = false
	s := New(opts)
	s.Check(context.Background())
	if st := s.State(); st.Offer == nil || st.Offer.Version != "1.4.1" || st.Refused != nil {
		t.Fatalf("the newer release: %+v", st)
	}
}
