package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/hearth-dev/hearth/internal/store"
)

// testKey returns a deterministic signer key named after label, so that
// bundles built in tests are byte-for-byte reproducible.
func testKey(t testing.TB, label string) (skey, vkey string) {
	t.Helper()
	seed := sha256.Sum256([]byte("hearth ledger test key " + label))
	skey, vkey, err := note.GenerateKey(bytes.NewReader(seed[:]), "hearth/test-"+label)
	if err != nil {
		t.Fatal(err)
	}
	return skey, vkey
}

// testClock returns a clock that starts at a fixed instant and advances one
// millisecond per reading.
func testClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

func openTestDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newTestLedger opens a ledger with the deterministic key "a" and clock.
func newTestLedger(t testing.TB) (*Ledger, *store.DB) {
	t.Helper()
	db := openTestDB(t)
	skey, _ := testKey(t, "a")
	l, err := Open(db, skey, WithClock(testClock()))
	if err != nil {
		t.Fatal(err)
	}
	return l, db
}

// appendN appends n deterministic entries of assorted kinds.
func appendN(t testing.TB, l *Ledger, n int) {
	t.Helper()
	kinds := []string{KindIntent, KindOutcome, KindEstop, KindReset, KindPermitRequested}
	for i := range n {
		data := map[string]any{
			"command_id":   "cmd-" + string(rune('a'+i%26)),
			"input_sha256": sha256Hex(i),
			"i":            i,
		}
		if _, err := l.Append(context.Background(), kinds[i%len(kinds)], data); err != nil {
			t.Fatal(err)
		}
	}
}

func sha256Hex(i int) string {
	h := sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	return hex.EncodeToString(h[:])
}

// exportBundle exports l's ledger and returns the bundle bytes.
func exportBundle(t testing.TB, l *Ledger, since int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := l.Export(context.Background(), &buf, since); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
