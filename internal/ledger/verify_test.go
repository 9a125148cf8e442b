package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/hearth-dev/hearth/internal/store"
)

// tamper runs stmts against db with the append-only triggers dropped, as
// someone with write access to the file could.
func tamper(t *testing.T, db *store.DB, stmts ...string) {
	t.Helper()
	all := append([]string{
		`DROP TRIGGER ledger_entries_no_update`, `DROP TRIGGER ledger_entries_no_delete`,
		`DROP TRIGGER ledger_hashes_no_update`, `DROP TRIGGER ledger_hashes_no_delete`,
	}, stmts...)
	err := db.InTx(context.Background(), func(tx *sql.Tx) error {
		for _, s := range all {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAppendOnlyTriggers(t *testing.T) {
	l, db := newTestLedger(t)
	appendN(t, l, 2)
	for _, s := range []string{
		`UPDATE ledger_entries SET kind = 'x' WHERE seq = 1`,
		`DELETE FROM ledger_entries WHERE seq = 2`,
		`UPDATE ledger_hashes SET hash = x'00' WHERE idx = 0`,
		`DELETE FROM ledger_hashes`,
	} {
		if _, err := db.W.Exec(s); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want append-only refusal", s, err)
		}
	}
}

func TestVerifyDBTamper(t *testing.T) {
	ctx := context.Background()
	otherSkey, otherVkey := testKey(t, "other")
	cases := []struct {
		name   string
		tamper func(t *testing.T, l *Ledger, db *store.DB)
		opts   func(l *Ledger) []VerifyOption
		want   string
	}{
		{"flip a byte in an entry", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `UPDATE ledger_entries SET body = CAST(replace(CAST(body AS TEXT), '"i":4', '"i":5') AS BLOB) WHERE seq = 5`)
		}, nil, "entry seq 5: stored hash does not match its bytes"},
		{"flip a byte and its stored hash", func(t *testing.T, l *Ledger, db *store.DB) {
			var body []byte
			if err := db.R.QueryRow(`SELECT body FROM ledger_entries WHERE seq = 5`).Scan(&body); err != nil {
				t.Fatal(err)
			}
			body = []byte(strings.Replace(string(body), `"i":4`, `"i":5`, 1))
			sum := sha256.Sum256(body)
			tamper(t, db, `UPDATE ledger_entries SET body = x'`+hex.EncodeToString(body)+`', hash = x'`+hex.EncodeToString(sum[:])+`' WHERE seq = 5`)
		}, nil, "entry seq 5: stored tree hash 7 mismatch"},
		{"drop the tail", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `DELETE FROM ledger_entries WHERE seq = 10`)
		}, nil, "ledger truncated: checkpoint size 10 but 9 entries"},
		{"drop a middle entry", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `DELETE FROM ledger_entries WHERE seq = 4`)
		}, nil, "entry 4 out of order: seq 5"},
		{"reorder two entries", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `UPDATE ledger_entries SET seq = -1 WHERE seq = 5`,
				`UPDATE ledger_entries SET seq = 5 WHERE seq = 6`,
				`UPDATE ledger_entries SET seq = 6 WHERE seq = -1`)
		}, nil, "entry 5 out of order: seq 6"},
		{"tamper a stored tree hash", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `UPDATE ledger_hashes SET hash = zeroblob(32) WHERE idx = 5`)
		}, nil, "stored tree hash 5 mismatch"},
		{"drop a stored tree hash", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `DELETE FROM ledger_hashes WHERE idx = 7`)
		}, nil, "stored tree hash 7 is missing"},
		{"rewrite the last entry with every hash", func(t *testing.T, l *Ledger, db *store.DB) {
			rewriteLast(t, db)
		}, nil, "checkpoint at size 10: root mismatch"},
		{"edit the checkpoint", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `UPDATE ledger_checkpoints SET note = replace(note, char(10) || '10' || char(10), char(10) || '9' || char(10))`)
		}, nil, "checkpoint at size 10: checkpoint signature: invalid"},
		{"swap the key", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `UPDATE ledger_checkpoints SET vkey = '`+otherVkey+`'`)
		}, nil, "checkpoint at size 10: checkpoint signature: not signed by its recorded key"},
		{"swap the key and re-sign", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `DELETE FROM ledger_checkpoints`)
			other, err := Open(db, otherSkey)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}, func(l *Ledger) []VerifyOption { return []VerifyOption{ExpectKey(l.PublicKey())} }, "public key does not match expected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, db := newTestLedger(t)
			appendN(t, l, 10)
			if _, err := l.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := VerifyDB(ctx, db); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			c.tamper(t, l, db)
			var opts []VerifyOption
			if c.opts != nil {
				opts = c.opts(l)
			}
			_, err := VerifyDB(ctx, db, opts...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("VerifyDB = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// rewriteLast replaces the last entry with a well-formed one and rewrites
// its hash and stored tree hashes, leaving only the signed checkpoint to
// tell.
func rewriteLast(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	var n int64
	var prev []byte
	if err := db.R.QueryRow(`SELECT seq, prev FROM (SELECT seq, hash AS prev FROM ledger_entries ORDER BY seq DESC LIMIT 1 OFFSET 1)`).Scan(&n, &prev); err != nil {
		t.Fatal(err)
	}
	e := newEntry(n+1, testClock()(), KindReset, hex.EncodeToString(prev), []byte(`{"forged":true}`))
	var hashes []tlog.Hash
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		hashes, err = tlog.StoredHashes(n, e.Raw, hashReader{ctx, tx})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(e.Raw)
	stmts := []string{
		`UPDATE ledger_entries SET body = x'` + hex.EncodeToString(e.Raw) + `', hash = x'` + hex.EncodeToString(sum[:]) + `' WHERE seq = ` + strconv.FormatInt(e.Seq, 10),
	}
	for i, h := range hashes {
		stmts = append(stmts, `UPDATE ledger_hashes SET hash = x'`+hex.EncodeToString(h[:])+`' WHERE idx = `+strconv.FormatInt(tlog.StoredHashIndex(0, n)+int64(i), 10))
	}
	tamper(t, db, stmts...)
}

func TestVerifierKey(t *testing.T) {
	for range 64 {
		skey, vkey, err := note.GenerateKey(rand.Reader, "hearth/0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		got, err := VerifierKey(skey)
		if err != nil || got != vkey {
			t.Fatalf("VerifierKey = %q, %v; want %q", got, err, vkey)
		}
		if _, err := newVerifier(vkey); err != nil {
			t.Fatalf("newVerifier(%q): %v", vkey, err)
		}
	}
	if _, err := VerifierKey("PRIVATE+KEY+x+00000000+AAAA"); err == nil {
		t.Fatal("VerifierKey accepted a malformed key")
	}
}

func TestFileKeyStore(t *testing.T) {
	dir := t.TempDir()
	ks := FileKeyStore{Path: filepath.Join(dir, "keys", "ledger.key")}
	skey, vkey, err := LoadOrCreateKey(ks)
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(vkey, "+")
	host, ok := strings.CutPrefix(name, "hearth/")
	if !ok || len(host) != 16 || strings.Trim(host, "0123456789abcdef") != "" {
		t.Fatalf("key name %q, want hearth/<16 hex digits>", name)
	}
	skey2, vkey2, err := LoadOrCreateKey(ks)
	if err != nil || skey2 != skey || vkey2 != vkey {
		t.Fatalf("second LoadOrCreateKey returned another key (%v)", err)
	}
	l, err := Open(openTestDB(t), skey)
	if err != nil || l.Origin() != name || l.PublicKey() != vkey {
		t.Fatalf("Open: origin %q key %q, %v", l.Origin(), l.PublicKey(), err)
	}
	if err := ks.Save([]byte(skey)); err == nil {
		t.Fatal("Save replaced an existing key")
	}
	if runtime.GOOS == "windows" {
		return
	}
	fi, err := os.Stat(ks.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if err := os.Chmod(ks.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateKey(ks); err == nil || !strings.Contains(err.Error(), "accessible by group or others") {
		t.Fatalf("world-readable key file: %v", err)
	}
	if _, _, err := LoadOrCreateKey(FileKeyStore{Path: dir}); err == nil {
		t.Fatal("a directory was accepted as a key file")
	}
}
