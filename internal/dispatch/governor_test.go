package dispatch

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

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
	return &govern.Governor{DB: db, Ledger: l, DefaultMode: config.ModeTrusted, PermitTTL: time.Minute, InlineBudget: 100 * time.Millisecond}
}

// TestNewRequiresAGovernor: a dispatcher cannot be built, nor started,
// without governance.
func TestNewRequiresAGovernor(t *testing.T) {
	f := newDepsFixture(t)
	if _, err := New(Options{DB: f.db, Registry: f.reg}); err == nil {
		t.Fatal("New must refuse a dispatcher without a governor")
	}
	if err := (&Dispatcher{DB: f.db, Registry: f.reg}).Start(t.Context(), 1); err == nil {
		t.Fatal("Start must refuse a dispatcher without a governor")
	}
	d, err := New(Options{DB: f.db, Registry: f.reg, Gov: testGovernor(t, f.db)})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	d.Stop()
}
