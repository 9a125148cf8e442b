package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
	"github.com/hearth-dev/hearth/internal/store"
)

// openTestDB opens a fresh database in a temporary directory, closed
// when the test ends.
func openTestDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// startTestDispatcher builds and starts a governed dispatcher over db
// with the given inline budget serving specs, stopped when the test ends.
func startTestDispatcher(t testing.TB, db *store.DB, budget time.Duration, specs ...*primitive.Spec) *Dispatcher {
	t.Helper()
	reg, err := primitive.NewRegistry(specs...)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{DB: db, Registry: reg, Gov: testGovernor(t, db), MaxFutures: 2, Budget: budget, MaxResultBytes: 1 << 20, MaxArrivals: 10, MaxArrivalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d
}

// testGovernor is the real governor over db (trusted mode, a real signed
// ledger): a dispatcher never runs ungoverned, in tests neither.
func testGovernor(t testing.TB, db *store.DB) *govern.Governor {
	t.Helper()
	skey, _, err := ledger.LoadOrCreateKey(ledger.FileKeyStore{Path: filepath.Join(t.TempDir(), "ledger.key")})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	futures, err := NewFutureReader(db)
	if err != nil {
		t.Fatal(err)
	}
	g, err := govern.New(govern.Options{DB: db, Ledger: l, Futures: futures, Startup: startuptest.Index(t), DefaultMode: config.ModeTrusted, PermitTTL: time.Minute, InlineBudget: 100 * time.Millisecond,
		// The test primitives' rows beside the one table.
		Rows: risk.Rows.With(risk.Table{
			"t.block": risk.KindRead, "t.c": risk.KindRead, "t.count": risk.KindRead, "t.echo": risk.KindRead,
			"t.engine": risk.KindRead, "t.fail": risk.KindRead, "t.picky": risk.KindRead, "t.quick": risk.KindRead,
			"t.r": risk.KindRead, "t.probe": risk.KindRecords, "t.probe_kill": risk.KindKill, "t.w": risk.KindRecords,
			"test.block": risk.KindRecords,
		})})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestNewRequiresAGovernor: a dispatcher cannot be built, nor started,
// without governance.
func TestNewRequiresAGovernor(t *testing.T) {
	f := newDepsFixture(t)
	if _, err := New(Options{DB: f.db, Registry: f.reg}); err == nil {
		t.Fatal("New must refuse a dispatcher without a governor")
	}
	if err := (&Dispatcher{DB: f.db, Registry: f.reg}).Start(t.Context()); err == nil {
		t.Fatal("Start must refuse a dispatcher without a governor")
	}
	if _, err := New(Options{DB: f.db, Registry: f.reg, Gov: testGovernor(t, f.db)}); err == nil || !strings.Contains(err.Error(), "MaxFutures") {
		t.Fatalf("New must refuse a dispatcher where no call's future can run, naming MaxFutures: %v", err)
	}
	d, err := New(Options{DB: f.db, Registry: f.reg, Gov: testGovernor(t, f.db), MaxFutures: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Stop()
}
