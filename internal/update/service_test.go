package update

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// handoffs records the plans a Service hands over.
type handoffs struct {
	mu    sync.Mutex
	plans []Plan
}

func (h *handoffs) request(p Plan) { h.mu.Lock(); h.plans = append(h.plans, p); h.mu.Unlock() }
func (h *handoffs) count() int     { h.mu.Lock(); defer h.mu.Unlock(); return len(h.plans) }

func newService(t *testing.T, r *release, version string, h *handoffs) (*Service, string) {
	t.Helper()
	dir := t.TempDir()
	s := New(Options{
		Version: version, URL: r.url(), Key: r.vkey, Check: true, DataDir: dir,
		Limits:  Limits{ManifestTimeout: 2 * time.Second, DownloadTimeout: 5 * time.Second, StallTimeout: 300 * time.Millisecond},
		Handoff: h.request,
	})
	return s, dir
}

// settle waits until the service is idle again (or has handed over).
func settle(t *testing.T, s *Service) State {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st := s.State()
		if st.Phase == PhaseIdle || st.Phase == PhaseRestarting {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the update did not settle: %+v", s.State())
	return State{}
}

// nothingLeft: a failed update leaves no download or unpacked program in
// the update folder.
func nothingLeft(t *testing.T, dataDir string) {
	t.Helper()
	entries, _ := os.ReadDir(Dir(dataDir))
	for _, e := range entries {
		if e.Name() != acceptedFile { // the kept manifest is no leftover
			t.Errorf("left in the update folder: %s", e.Name())
		}
	}
}

var program = []byte("#!/bin/sh\necho new\n")

// TestCheckOffersNewerOnly: a newer signed version is offered with its
// changes; the same or an older version is not (no downgrade), and an
// Install then refuses; a release whose min_version is above the running
// version is offered but blocked, with the way out in words.
func TestCheckOffersNewerOnly(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, _ := newService(t, r, "1.3.0", h)
	ctx := context.Background()

	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	s.Check(ctx)
	st := s.State()
	if st.Offer == nil || st.Offer.Version != "1.4.0" || st.Offer.Changes != "Backups are faster." || !st.CanInstall || st.Problem != nil {
		t.Fatalf("newer: %+v", st)
	}

	for _, v := range []string{"1.3.0", "v1.2.9"} {
		r.publish(t, v, "1.0.0", map[string][]byte{ProgramName(): program})
		s.Check(ctx)
		if st := s.State(); st.Offer != nil || st.Problem != nil {
			t.Fatalf("%s offered to 1.3.0: %+v", v, st)
		}
		if err := s.Install(ctx); err == nil {
			t.Fatalf("%s: Install started with nothing newer", v)
		}
	}

	r.publish(t, "2.0.0", "1.5.0", map[string][]byte{ProgramName(): program})
	s.Check(ctx)
	st = s.State()
	if st.Offer == nil || st.Offer.Blocked == "" || st.CanInstall || !strings.Contains(st.Offer.Blocked, "1.5.0") {
		t.Fatalf("blocked: %+v", st)
	}
	if err := s.Install(ctx); err == nil {
		t.Fatal("Install of a blocked update started")
	}
	if h.count() != 0 {
		t.Fatal("handed over")
	}
}

// TestInstallDownloadsWithProgressAndHandsOver: the package is
// downloaded (the progress counts up to its size), verified and unpacked;
// the plan handed over names the new programs, whose bytes are the
// package's.
func TestInstallDownloadsWithProgressAndHandsOver(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, dataDir := newService(t, r, "1.3.0", h)
	big := make([]byte, 3<<20)
	copy(big, program)
	tc := []byte("tunnel-client 0.9.0")
	m := r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): big, TunnelClientName(): tc})
	size := m.Platforms[Platform()].Size
	// Slowly, so the progress is seen between the first and the last byte.
	r.onPackage = func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for off := 0; off < len(r.pkg); off += 256 << 10 {
			end := min(off+256<<10, len(r.pkg))
			w.Write(r.pkg[off:end])
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.Check(context.Background())
	if err := s.Install(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Install(context.Background()); err == nil {
		t.Fatal("a second Install started while one runs")
	}
	var seen []int64
	for st := s.State(); st.Phase == PhaseDownloading; st = s.State() {
		if st.Total == size && st.Done > 0 && st.Done < size {
			seen = append(seen, st.Done)
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := settle(t, s)
	if st.Phase != PhaseRestarting || st.Problem != nil || h.count() != 1 {
		t.Fatalf("after download: %+v, handoffs %d", st, h.count())
	}
	if len(seen) < 2 || seen[0] >= seen[len(seen)-1] {
		t.Fatalf("progress seen: %v", seen)
	}
	p := h.plans[0]
	if p.From != "1.3.0" || p.To != "1.4.0" || string(readFile(t, p.NewExe)) != string(big) || string(readFile(t, p.NewTunnel)) != string(tc) {
		t.Fatalf("plan: %+v", p)
	}
	if p.TunnelSHA256 != m.Platforms[Platform()].TunnelClient.SHA256 {
		t.Fatalf("tunnel pin %s", p.TunnelSHA256)
	}
	if matches, _ := os.ReadDir(Dir(dataDir)); len(matches) != 3 {
		t.Fatalf("update folder holds %d files, want the 2 unpacked programs and the kept manifest (the download is removed)", len(matches))
	}
}

// TestRequestCarriesNoIdentifier: the requests carry the version and
// platform in the User-Agent and nothing else of the person or the PC: no
// cookie, no query, no other header than Go's transport sets.
func TestRequestCarriesNoIdentifier(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	s, _ := newService(t, r, "1.3.0", h)
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	s.Check(context.Background())
	if err := s.Install(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	if len(r.requests) != 3 {
		t.Fatalf("%d requests, want manifest, manifest again, package", len(r.requests))
	}
	for _, req := range r.requests {
		if req.URL.RawQuery != "" {
			t.Errorf("query %q", req.URL.RawQuery)
		}
		if ua := req.Header.Get("User-Agent"); ua != "Hearth/1.3.0 ("+Platform()+")" {
			t.Errorf("User-Agent %q", ua)
		}
		for k := range req.Header {
			switch k {
			case "User-Agent", "Accept-Encoding":
			default:
				t.Errorf("header %s: %q", k, req.Header.Get(k))
			}
		}
	}
}

// TestBadManifestChangesNothing: each way the manifest can be bad leaves
// no offer, hands nothing over, and says why in plain words with the
// technical detail.
func TestBadManifestChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(t *testing.T, r *release)
		plain string
	}{
		{"bad signature", func(t *testing.T, r *release) {
			r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
			r.manifest = []byte(strings.Replace(string(r.manifest), "Backups", "Backdoors", 1))
		}, "not signed by Hearth's release key"},
		{"another key", func(t *testing.T, r *release) {
			r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
			other, _, _ := GenerateKey("hearth-release-test")
			m, _ := OpenManifest(r.manifest, r.vkey)
			r.manifest, _ = SignManifest(m, other)
		}, "not signed by Hearth's release key"},
		{"not JSON", func(t *testing.T, r *release) {
			r.manifest = signText(t, "<html>maintenance</html>\n", r.skey)
		}, "not in a form Hearth reads"},
		{"missing field", func(t *testing.T, r *release) {
			r.manifest = signText(t, `{"version":"1.4.0","changes":"x","platforms":{}}`+"\n", r.skey)
		}, "not in a form Hearth reads"},
		{"HTTP error", func(t *testing.T, r *release) {
			r.onManifest = func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusBadGateway) }
		}, "answered with an error"},
		{"hanging server", func(t *testing.T, r *release) {
			r.onManifest = func(w http.ResponseWriter, req *http.Request) { <-req.Context().Done() }
		}, "did not answer in time"},
		{"too large", func(t *testing.T, r *release) {
			r.onManifest = func(w http.ResponseWriter, _ *http.Request) { w.Write(make([]byte, MaxManifestBytes+10)) }
		}, "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRelease(t)
			h := &handoffs{}
			s, dataDir := newService(t, r, "1.3.0", h)
			s.opts.Limits.ManifestTimeout = 300 * time.Millisecond
			tc.serve(t, r)
			s.Check(context.Background())
			st := s.State()
			if st.Offer != nil || st.Problem == nil || !strings.Contains(st.Problem.Plain, tc.plain) || st.Problem.Detail == "" {
				t.Fatalf("state: %+v (problem %+v)", st, st.Problem)
			}
			if tc.name == "missing field" && !strings.Contains(st.Problem.Detail, `"min_version"`) {
				t.Fatalf("detail does not name the field: %s", st.Problem.Detail)
			}
			if err := s.Install(context.Background()); err == nil {
				t.Fatal("Install started")
			}
			if h.count() != 0 {
				t.Fatal("handed over")
			}
			nothingLeft(t, dataDir)
		})
	}
}

// TestBadDownloadChangesNothing: each way the package can be bad (wrong
// bytes, wrong size, cut off, endless, stalled, an HTTP error, a
// tunnel-client that is not the signed one) ends the update with nothing
// handed over, nothing left behind, and the reason in plain words.
func TestBadDownloadChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(t *testing.T, r *release)
		plain string
	}{
		{"hash mismatch", func(t *testing.T, r *release) {
			bad := append([]byte(nil), r.pkg...)
			bad[len(bad)/2] ^= 1
			r.onPackage = func(w http.ResponseWriter, _ *http.Request) { w.Write(bad) }
		}, "does not match the signed release"},
		{"size mismatch", func(t *testing.T, r *release) {
			r.onPackage = func(w http.ResponseWriter, _ *http.Request) { w.Write(append(r.pkg, 0)) }
		}, "not the size the signed release says"},
		{"truncated", func(t *testing.T, r *release) {
			r.onPackage = func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(len(r.pkg)))
				w.Write(r.pkg[:len(r.pkg)/2])
				// The handler returns short: the server closes the
				// connection.
			}
		}, "cut off"},
		{"endless", func(t *testing.T, r *release) {
			r.onPackage = func(w http.ResponseWriter, req *http.Request) {
				chunk := make([]byte, 32<<10)
				for req.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}
		}, "larger than the signed release says"},
		{"stalled", func(t *testing.T, r *release) {
			r.onPackage = func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(len(r.pkg)))
				w.Write(r.pkg[:10])
				w.(http.Flusher).Flush()
				<-req.Context().Done()
			}
		}, "too slow"},
		{"HTTP error", func(t *testing.T, r *release) {
			r.onPackage = func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }
		}, "answered with an error"},
		{"unsigned tunnel-client", func(t *testing.T, r *release) {
			m := r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program, TunnelClientName(): []byte("signed")})
			want := m.Platforms[Platform()].TunnelClient.SHA256
			r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program, TunnelClientName(): []byte("swapped")})
			m, _ = OpenManifest(r.manifest, r.vkey)
			a := m.Platforms[Platform()]
			a.TunnelClient.SHA256 = want
			m.Platforms[Platform()] = a
			r.manifest, _ = SignManifest(m, r.skey)
		}, "tunnel-client in the package does not match"},
		{"no program in the package", func(t *testing.T, r *release) {
			r.publish(t, "1.4.0", "1.0.0", map[string][]byte{"readme.txt": program})
		}, "holds no Hearth program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRelease(t)
			h := &handoffs{}
			s, dataDir := newService(t, r, "1.3.0", h)
			r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
			tc.serve(t, r)
			s.Check(context.Background())
			if err := s.Install(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := settle(t, s)
			if st.Phase != PhaseIdle || st.Problem == nil || !strings.Contains(st.Problem.Plain, tc.plain) || st.Problem.Detail == "" {
				t.Fatalf("state: %+v (problem %+v)", st, st.Problem)
			}
			if h.count() != 0 {
				t.Fatal("handed over")
			}
			if st.Offer == nil || !st.CanInstall {
				t.Fatalf("the offer should stay, to try again: %+v", st)
			}
			nothingLeft(t, dataDir)
		})
	}
}

// TestOffInDevelopmentBuild: a development build without update.url
// checks nothing and says so; update.check off says so too.
func TestOffInDevelopmentBuild(t *testing.T) {
	r := newRelease(t)
	s := New(Options{Version: "dev", Key: r.vkey, Check: true, DataDir: t.TempDir()})
	s.Check(context.Background())
	if st := s.State(); st.Off != "Updates are off in a development build." || len(r.requests) != 0 {
		t.Fatalf("dev: %+v, %d requests", st, len(r.requests))
	}
	s = New(Options{Version: "1.0.0", URL: r.url(), Key: r.vkey, DataDir: t.TempDir()})
	s.Check(context.Background())
	if st := s.State(); !strings.Contains(st.Off, "update.check") || len(r.requests) != 0 {
		t.Fatalf("check off: %+v, %d requests", st, len(r.requests))
	}
	// A development build with update.url checks (how the tests here run).
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	s = New(Options{Version: "dev", URL: r.url(), Key: r.vkey, Check: true, DataDir: t.TempDir()})
	s.Check(context.Background())
	if st := s.State(); st.Off != "" || st.Offer == nil {
		t.Fatalf("dev with update.url: %+v", st)
	}
}

// TestAutoWaitsForAQuietMoment: with update.auto the offer is installed
// by itself, but only once Quiet says the moment is quiet.
func TestAutoWaitsForAQuietMoment(t *testing.T) {
	r := newRelease(t)
	h := &handoffs{}
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	var mu sync.Mutex
	quiet := false
	s := New(Options{
		Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, Auto: true, DataDir: t.TempDir(),
		QuietEvery: 20 * time.Millisecond, Handoff: h.request,
		Quiet: func() bool { mu.Lock(); defer mu.Unlock(); return quiet },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	time.Sleep(300 * time.Millisecond)
	if h.count() != 0 || s.State().Offer == nil {
		t.Fatalf("installed while busy: %d, %+v", h.count(), s.State())
	}
	mu.Lock()
	quiet = true
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for h.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if h.count() != 1 {
		t.Fatalf("not installed at the quiet moment: %+v", s.State())
	}
}

// TestAutoIsRecordedFirst: an automatic update is recorded (BeforeQuiet,
// with the versions) before it starts, and one that cannot be recorded
// does not start.
func TestAutoIsRecordedFirst(t *testing.T) {
	r := newRelease(t)
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	for _, fail := range []bool{true, false} {
		h := &handoffs{}
		var mu sync.Mutex
		var recorded []string
		s := New(Options{
			Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, Auto: true, DataDir: t.TempDir(),
			QuietEvery: 20 * time.Millisecond, Handoff: h.request, Quiet: func() bool { return true },
			BeforeQuiet: func(_ context.Context, from, to string, _ bool) error {
				mu.Lock()
				defer mu.Unlock()
				recorded = append(recorded, from+"→"+to)
				if fail {
					return errors.New("the ledger is full")
				}
				return nil
			},
		})
		ctx, cancel := context.WithCancel(context.Background())
		go s.Run(ctx)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := len(recorded)
			mu.Unlock()
			if (fail && n >= 2) || (!fail && h.count() > 0) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		mu.Lock()
		first := ""
		if len(recorded) > 0 {
			first = recorded[0]
		}
		mu.Unlock()
		if first != "1.3.0→1.4.0" {
			t.Fatalf("fail=%v: recorded %q, want 1.3.0→1.4.0", fail, first)
		}
		if fail && h.count() != 0 {
			t.Fatalf("an automatic update that could not be recorded started")
		}
		if !fail && h.count() != 1 {
			t.Fatalf("the recorded automatic update did not start: %+v", s.State())
		}
	}
}

// TestOutcomeRecordedOnce: the last outcome is Unrecorded until
// RecordedOutcome, which survives a restart (outcome.json).
func TestOutcomeRecordedOnce(t *testing.T) {
	data := t.TempDir()
	want := Outcome{From: "1.3.0", To: "1.4.0", When: time.Now().UTC().Truncate(time.Second), Result: ResultRolledBack, Plain: "went back"}
	if err := writeOutcome(data, want); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Version: "1.3.0", DataDir: data})
	o, ok := s.Unrecorded()
	if !ok || o.To != "1.4.0" || o.Result != ResultRolledBack {
		t.Fatalf("Unrecorded: %+v %v", o, ok)
	}
	if err := s.RecordedOutcome(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Unrecorded(); ok {
		t.Fatal("still unrecorded after RecordedOutcome")
	}
	if _, ok := New(Options{Version: "1.3.0", DataDir: data}).Unrecorded(); ok {
		t.Fatal("the next start would record it again")
	}
	if st := New(Options{Version: "1.3.0", DataDir: data}).State(); st.Last == nil || st.Last.Result != ResultRolledBack {
		t.Fatalf("Status lost the outcome: %+v", st.Last)
	}
}
