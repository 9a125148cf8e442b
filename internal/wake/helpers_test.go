//go:build !windows

package wake

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

// rig is a wake service over a real database and ledger in dir.
type rig struct {
	t   testing.TB
	dir string
	db  *store.DB
	led *ledger.Ledger
	svc *Service
}

// fastSettings are timings short enough for tests.
func fastSettings() Settings {
	return Settings{BrowserPath: TestBrowser, Debounce: 0, Quiet: 0, Cooldown: time.Hour, MaxAttempts: 3, ProbeTTL: time.Hour}
}

func newRig(t testing.TB, dir string, armed bool, set Settings, fake *FakeChatGPT) *rig {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(dir, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	skey, _, err := note.GenerateKey(rand.Reader, "hearth/wake-test")
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{DB: db, Journal: led, DataDir: dir, Armed: armed, Settings: set,
		Undelivered: func(ctx context.Context, route string) (int, time.Time, error) {
			return dispatch.Undelivered(ctx, db, route)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if fake != nil {
		AllowOriginForTest(svc, fake.Origin())
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, dir: dir, db: db, led: led, svc: svc}
	t.Cleanup(r.stop)
	return r
}

func (r *rig) stop() {
	if r.svc == nil {
		return
	}
	r.svc.Stop()
	r.db.Close()
	r.svc = nil
}

func (r *rig) open() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := r.svc.Open(ctx); err != nil {
		r.t.Fatalf("open the window: %v", err)
	}
}

func (r *rig) tab(url string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := OpenTabForTest(ctx, r.svc, url)
	if err != nil {
		r.t.Fatalf("open tab %s: %v", url, err)
	}
	return id
}

func (r *rig) binding(route string) (Binding, bool) {
	for _, b := range r.svc.Bindings() {
		if b.Route == route {
			return b, true
		}
	}
	return Binding{}, false
}

// bindConv opens a tab on conv, shows route's probe in it, and waits for
// the binding.
func (r *rig) bindConv(fake *FakeChatGPT, conv, route string) string {
	r.t.Helper()
	target := r.tab(fake.URL(conv))
	nonce, _, ok := r.svc.RouteProbe(route)
	if !ok {
		r.t.Fatalf("no probe for %s", route)
	}
	fake.Show(conv, "tool", "machine.exec: pending (future fut_1)\nRoute probe "+nonce)
	waitFor(r.t, "binding of "+route, func() bool { b, ok := r.binding(route); return ok && b.Live })
	return target
}

// arrive queues a terminal arrival for route, as dispatch does.
func (r *rig) arrive(route, future, state string) {
	r.t.Helper()
	payload := `{"state":"` + state + `","primitive":"machine.exec","future_id":"` + future + `"}`
	err := r.db.InTx(context.Background(), func(tx *sql.Tx) error {
		return dispatch.EnqueueArrival(context.Background(), tx, route, future, []byte(payload), time.Now())
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// kinds returns the ledger's entries of kind, as decoded data.
func (r *rig) entries(kind string) []map[string]any {
	r.t.Helper()
	es, err := r.led.Tail(context.Background(), 1000)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range es {
		if e.Kind == kind {
			var m map[string]any
			if err := json.Unmarshal(e.Data, &m); err != nil {
				r.t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// passes waits until the loop has made n more armed waker passes.
func (r *rig) passes(n int) {
	r.t.Helper()
	start := r.svc.Stats().Checks
	waitFor(r.t, "waker passes", func() bool {
		PokeForTest(r.svc)
		return r.svc.Stats().Checks >= start+n
	})
}
