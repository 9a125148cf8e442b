package update

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInstallUsesTheOfferedManifest: the person approves what they saw.
// When the published manifest changed between the offer and the click,
// nothing is installed and the new release is offered instead; when it
// did not, the plan handed over is the offer's version.
func TestInstallUsesTheOfferedManifest(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, _ := newService(t, r, "1.3.0", h)
	ctx := context.Background()
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	s.Check(ctx)
	if st := s.State(); st.Offer == nil || st.Offer.Version != "1.4.0" {
		t.Fatalf("offer: %+v", st)
	}
	r.publish(t, "1.4.1", "1.0.0", map[string][]byte{ProgramName(): append([]byte("1.4.1"), program...)})
	if err := s.Install(ctx); err != nil {
		t.Fatal(err)
	}
	st := settle(t, s)
	if h.count() != 0 {
		t.Fatalf("installed %s, which the person never saw", h.plans[0].To)
	}
	if st.Problem == nil || !strings.Contains(st.Problem.Plain, "changed on the update server after Hearth offered it") || !strings.Contains(st.Problem.Detail, "1.4.1") {
		t.Fatalf("problem: %+v", st.Problem)
	}
	if st.Offer == nil || st.Offer.Version != "1.4.1" || !st.CanInstall {
		t.Fatalf("the new release is not offered: %+v", st)
	}
	// Unchanged since the offer: the offer's version is what is handed over.
	if err := s.Install(ctx); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	if h.count() != 1 || h.plans[0].To != "1.4.1" {
		t.Fatalf("plans: %+v", h.plans)
	}
}

// TestReplayedOlderManifestRefused: a signed manifest published before the
// one Hearth accepted last is refused (it would keep the PC on an old
// version), also after a restart; the offer stays the newer one's.
func TestReplayedOlderManifestRefused(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, dataDir := newService(t, r, "1.3.0", h)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	r.publishAt(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program}, now)
	old := r.manifest
	r.publishAt(t, "1.5.0", "1.0.0", map[string][]byte{ProgramName(): program}, now.Add(time.Hour))
	s.Check(ctx)
	if st := s.State(); st.Offer == nil || st.Offer.Version != "1.5.0" {
		t.Fatalf("offer: %+v", st)
	}
	r.mu.Lock()
	r.manifest = old
	r.mu.Unlock()
	for i, svc := range []*Service{s, New(s.opts)} {
		svc.Check(ctx)
		st := svc.State()
		if st.Problem == nil || !strings.Contains(st.Problem.Plain, "not newer than what Hearth already had") {
			t.Fatalf("%d: replay accepted: %+v", i, st)
		}
		if st.Offer == nil || st.Offer.Version != "1.5.0" {
			t.Fatalf("%d: offer: %+v", i, st.Offer)
		}
	}
	_ = dataDir
}

// TestSameSecondOtherManifestRefused: of two manifests signed with the
// same published time, only the one accepted first is taken: the other,
// served after it, is a replay (either could be served forever otherwise);
// the accepted one served again is still fine.
func TestSameSecondOtherManifestRefused(t *testing.T) {
	r := newRelease(t)
	s, _ := newService(t, r, "1.3.0", &handoffs{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	r.publishAt(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program}, now)
	first := r.manifest
	r.publishAt(t, "1.5.0", "1.0.0", map[string][]byte{ProgramName(): program}, now)
	second := r.manifest
	for i, msg := range [][]byte{first, second, first} {
		r.mu.Lock()
		r.manifest = msg
		r.mu.Unlock()
		s.Check(ctx)
		st := s.State()
		if st.Offer == nil || st.Offer.Version != "1.4.0" {
			t.Fatalf("%d: offer: %+v", i, st.Offer)
		}
		if refused := st.Problem != nil && strings.Contains(st.Problem.Plain, "not newer than what Hearth already had"); refused != (i == 1) {
			t.Fatalf("%d: problem: %+v", i, st.Problem)
		}
	}
}

// TestFutureManifestRefused: a manifest dated more than PublishedSkew
// ahead (a signer's clock error) is not accepted, so it cannot block the
// real releases after it; one within the skew is; one kept on disk from
// before is ignored at start.
func TestFutureManifestRefused(t *testing.T) {
	r := newRelease(t)
	s, dataDir := newService(t, r, "1.3.0", &handoffs{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	r.publishAt(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program}, now.Add(365*24*time.Hour))
	future := r.manifest
	s.Check(ctx)
	st := s.State()
	if st.Offer != nil || st.Problem == nil || !strings.Contains(st.Problem.Plain, "dated in the future") {
		t.Fatalf("a manifest a year ahead: %+v", st)
	}
	r.publishAt(t, "1.4.1", "1.0.0", map[string][]byte{ProgramName(): program}, now.Add(time.Hour))
	s.Check(ctx)
	if st := s.State(); st.Problem != nil || st.Offer == nil || st.Offer.Version != "1.4.1" {
		t.Fatalf("the real release after it: %+v", st)
	}
	// Kept from a Hearth that accepted it: ignored at start.
	if err := writeFileAtomic(filepath.Join(Dir(dataDir), acceptedFile), future); err != nil {
		t.Fatal(err)
	}
	r.publishAt(t, "1.4.2", "1.0.0", map[string][]byte{ProgramName(): program}, now.Add(2*time.Hour))
	again := New(s.opts)
	again.Check(ctx)
	if st := again.State(); st.Problem != nil || st.Offer == nil || st.Offer.Version != "1.4.2" {
		t.Fatalf("after a kept future manifest: %+v", st)
	}
}

// TestStaleManifestIsSaid: the newest manifest Hearth could get is over
// StaleAfter old: State says since when, so Status does not say "up to
// date".
func TestStaleManifestIsSaid(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, _ := newService(t, r, "1.4.0", h)
	old := time.Now().UTC().Add(-31 * 24 * time.Hour).Truncate(time.Second)
	r.publishAt(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program}, old)
	s.Check(context.Background())
	if st := s.State(); !st.Stale.Equal(old) || st.Offer != nil {
		t.Fatalf("stale: %+v", st)
	}
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	s.Check(context.Background())
	if st := s.State(); !st.Stale.IsZero() {
		t.Fatalf("a fresh manifest is stale: %+v", st)
	}
}

// TestNoPackageForThisComputerIsSaid: a newer release without a package
// for this platform is said as such, not as "up to date".
func TestNoPackageForThisComputerIsSaid(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, _ := newService(t, r, "1.3.0", h)
	m := r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	other := "windows-arm64"
	if Platform() == other {
		other = "linux-amd64"
	}
	m.Platforms = map[string]Artifact{other: m.Platforms[Platform()]}
	msg, err := SignManifest(m, r.skey)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.manifest = msg
	r.mu.Unlock()
	s.Check(context.Background())
	if st := s.State(); st.NoPackage != "1.4.0" || st.Offer != nil || st.Problem != nil {
		t.Fatalf("state: %+v", st)
	}
}

// TestUpdateWhenDoneWaitsForAQuietMoment: "Update when they are done"
// installs nothing while work runs, and the offer at the first quiet
// moment, without update.auto.
func TestUpdateWhenDoneWaitsForAQuietMoment(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	var mu sync.Mutex
	quiet := false
	s := New(Options{
		Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, DataDir: t.TempDir(),
		QuietEvery: 20 * time.Millisecond, Handoff: h.request,
		Quiet: func() bool { mu.Lock(); defer mu.Unlock(); return quiet },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for s.State().Offer == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.InstallWhenDone(); err != nil {
		t.Fatal(err)
	}
	// Several looks at a busy moment install nothing.
	for i := 0; i < 5; i++ {
		s.wake <- struct{}{}
	}
	if st := s.State(); h.count() != 0 || !st.Waiting {
		t.Fatalf("installed while busy: %d, %+v", h.count(), st)
	}
	mu.Lock()
	quiet = true
	mu.Unlock()
	for h.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if h.count() != 1 || h.plans[0].To != "1.4.0" {
		t.Fatalf("not installed at the quiet moment: %+v", s.State())
	}
}
