package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/hearth-dev/hearth/internal/store"
)

// verifySequential is the verifier as it was before blocks and workers:
// one walk, entry by entry. TestParallelVerifyMatchesSequential holds
// VerifyDB to it.
func verifySequential(ctx context.Context, tx *sql.Tx, cfg verifyConfig, rep *Report) error {
	n, err := size(ctx, tx)
	if err != nil {
		return err
	}
	cps, err := loadCheckpoints(ctx, tx, cfg, rep)
	if err != nil {
		return err
	}
	if rep.CheckpointSize > n {
		return fmt.Errorf("ledger truncated: checkpoint size %d but %d entries", rep.CheckpointSize, n)
	}
	rep.Unsigned = n - rep.CheckpointSize

	entries, err := tx.QueryContext(ctx, `SELECT body, hash FROM ledger_entries ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	defer entries.Close()
	hashes, err := tx.QueryContext(ctx, `SELECT idx, hash FROM ledger_hashes ORDER BY idx`)
	if err != nil {
		return fmt.Errorf("read tree hashes: %w", err)
	}
	defer hashes.Close()

	w := newWalker()
	checkRoot := func() error {
		for _, cp := range cps[w.n] {
			if root := w.root(); root != cp.root {
				return fmt.Errorf("checkpoint at size %d: root mismatch: entries hash to %s, checkpoint signed %s", w.n, root, cp.root)
			}
			rep.Checkpoints++
		}
		return nil
	}
	if err := checkRoot(); err != nil {
		return err
	}
	var nextIdx int64
	for entries.Next() {
		var body, sum []byte
		if err := entries.Scan(&body, &sum); err != nil {
			return fmt.Errorf("read entries: %w", err)
		}
		pos := w.n + 1
		e, stored, err := w.add(pos, body)
		if err != nil {
			return err
		}
		if !bytes.Equal(sum, w.last[:]) {
			return fmt.Errorf("entry seq %d: stored hash does not match its bytes", e.Seq)
		}
		for _, h := range stored {
			var (
				idx int64
				b   []byte
			)
			if !hashes.Next() {
				if err := hashes.Err(); err != nil {
					return fmt.Errorf("read tree hashes: %w", err)
				}
				return fmt.Errorf("entry seq %d: stored tree hash %d is missing", e.Seq, nextIdx)
			}
			if err := hashes.Scan(&idx, &b); err != nil {
				return fmt.Errorf("read tree hashes: %w", err)
			}
			if idx != nextIdx {
				return fmt.Errorf("entry seq %d: stored tree hash %d is missing", e.Seq, nextIdx)
			}
			if !bytes.Equal(b, h[:]) {
				return fmt.Errorf("entry seq %d: stored tree hash %d mismatch", e.Seq, idx)
			}
			nextIdx++
		}
		rep.Entries = w.n
		if err := checkRoot(); err != nil {
			return err
		}
	}
	if err := entries.Err(); err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	if w.n != n {
		return fmt.Errorf("ledger has %d entries but its highest seq is %d", w.n, n)
	}
	if hashes.Next() {
		return fmt.Errorf("stored tree hashes continue past entry seq %d", n)
	}
	if err := hashes.Err(); err != nil {
		return fmt.Errorf("read tree hashes: %w", err)
	}
	return nil
}

// checkpointAt stores a checkpoint of the first size entries signed by l,
// with the given root (the real one when root is nil).
func checkpointAt(t *testing.T, l *Ledger, db *store.DB, size int64, root *tlog.Hash) {
	t.Helper()
	ctx := context.Background()
	r, err := tlog.TreeHash(size, hashReader{ctx, db.R})
	if err != nil {
		t.Fatal(err)
	}
	if root != nil {
		r = *root
	}
	signed, err := note.Sign(&note.Note{Text: formatCheckpoint(l.Origin(), size, r)}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`INSERT INTO ledger_checkpoints(size, vkey, note, created_at) VALUES (?, ?, ?, ?)`, size, l.vkey, string(signed), size); err != nil {
		t.Fatal(err)
	}
}

// blockSize is the verifier's block size in TestParallelVerifyMatchesSequential:
// small, so that a ledger of a few hundred entries crosses several block
// edges and the test stays quick under -race.
const blockSize = 64

// withBlockSize verifies with blocks of n entries (a power of two).
func withBlockSize(n int64) VerifyOption {
	return func(c *verifyConfig) { c.blockSize = n }
}

// TestParallelVerifyMatchesSequential builds ledgers spanning several
// blocks with checkpoints inside and at the edges of blocks, damages them
// in ways that land on block boundaries and on high tree levels, and
// requires the parallel verifier to answer exactly as the sequential one:
// the same error (so found at the same entry) and the same report.
func TestParallelVerifyMatchesSequential(t *testing.T) {
	const n = 4*blockSize + 30
	ctx := context.Background()
	bodyOf := func(t *testing.T, db *store.DB, seq int) []byte {
		var body []byte
		if err := db.R.QueryRow(`SELECT body FROM ledger_entries WHERE seq = ?`, seq).Scan(&body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	setBody := func(t *testing.T, db *store.DB, seq int, body []byte, withHash bool) {
		set := fmt.Sprintf(`body = x'%x'`, body)
		if withHash {
			set += fmt.Sprintf(`, hash = x'%x'`, sha256Sum(body))
		}
		tamper(t, db, fmt.Sprintf(`UPDATE ledger_entries SET %s WHERE seq = %d`, set, seq))
	}
	edit := func(t *testing.T, db *store.DB, seq int, old, new string, withHash bool) {
		b := bodyOf(t, db, seq)
		nb := bytes.Replace(b, []byte(old), []byte(new), 1)
		if bytes.Equal(b, nb) {
			t.Fatalf("entry %d has no %q", seq, old)
		}
		setBody(t, db, seq, nb, withHash)
	}
	lastIdxOf := func(pos int64) int64 { return tlog.StoredHashIndex(0, pos+1) - 1 } // 0-based entry index
	cases := []struct {
		name   string
		damage func(t *testing.T, l *Ledger, db *store.DB)
	}{
		{"healthy", func(*testing.T, *Ledger, *store.DB) {}},
		{"entry bytes changed at a block's first entry", func(t *testing.T, l *Ledger, db *store.DB) {
			edit(t, db, blockSize+1, `"primitive":"fs.write"`, `"primitive":"fs.wrote"`, false)
		}},
		{"entry bytes and hash changed mid-block", func(t *testing.T, l *Ledger, db *store.DB) {
			edit(t, db, 2*blockSize+17, `"primitive":"fs.write"`, `"primitive":"fs.wrote"`, true)
		}},
		{"entry bytes and hash changed at a block's first entry", func(t *testing.T, l *Ledger, db *store.DB) {
			edit(t, db, 2*blockSize+1, `"primitive":"fs.write"`, `"primitive":"fs.wrote"`, true)
		}},
		{"prev changed at a block's first entry", func(t *testing.T, l *Ledger, db *store.DB) {
			edit(t, db, blockSize+1, `"prev":"`, `"prev":"0`, false) // still 65 chars: not hex of 32 bytes
		}},
		{"prev relinked at a block's first entry", func(t *testing.T, l *Ledger, db *store.DB) {
			b := bodyOf(t, db, 3*blockSize+1)
			i := bytes.Index(b, []byte(`"prev":"`)) + len(`"prev":"`)
			nb := append([]byte(nil), b...)
			copy(nb[i:], strings.Repeat("ab", 32))
			setBody(t, db, 3*blockSize+1, nb, true)
		}},
		{"not canonical", func(t *testing.T, l *Ledger, db *store.DB) {
			edit(t, db, 2*blockSize+40, `"kind":`, `"kind" :`, true)
		}},
		{"a leaf hash changed", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, fmt.Sprintf(`UPDATE ledger_hashes SET hash = zeroblob(32) WHERE idx = %d`, tlog.StoredHashIndex(0, blockSize+23)))
		}},
		{"the highest tree hash of a block changed", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, fmt.Sprintf(`UPDATE ledger_hashes SET hash = zeroblob(32) WHERE idx = %d`, lastIdxOf(4*blockSize-1)))
		}},
		{"a block-level tree hash changed", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, fmt.Sprintf(`UPDATE ledger_hashes SET hash = zeroblob(32) WHERE idx = %d`, lastIdxOf(2*blockSize-1)-1))
		}},
		{"a tree hash missing", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, fmt.Sprintf(`DELETE FROM ledger_hashes WHERE idx = %d`, lastIdxOf(blockSize-1)))
		}},
		{"the last tree hash missing", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `DELETE FROM ledger_hashes WHERE idx = (SELECT max(idx) FROM ledger_hashes)`)
		}},
		{"a tree hash too many", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, `INSERT INTO ledger_hashes(idx, hash) SELECT max(idx)+1, zeroblob(32) FROM ledger_hashes`)
		}},
		{"an entry deleted", func(t *testing.T, l *Ledger, db *store.DB) {
			tamper(t, db, fmt.Sprintf(`DELETE FROM ledger_entries WHERE seq = %d`, 3*blockSize+10))
		}},
		{"a checkpoint with another root", func(t *testing.T, l *Ledger, db *store.DB) {
			bad := tlog.Hash{1}
			checkpointAt(t, l, db, 3*blockSize+6, &bad)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := openTestDB(t)
			skey, vkey := testKey(t, "a")
			l, err := Open(db, skey, WithClock(testClock()))
			if err != nil {
				t.Fatal(err)
			}
			if err := bulkAppend(ctx, db, testClock(), n, benchData); err != nil {
				t.Fatal(err)
			}
			for _, size := range []int64{0, 1, blockSize - 1, blockSize, blockSize + 1, 2 * blockSize, 3*blockSize + 5, 4 * blockSize, n - 1, n} {
				checkpointAt(t, l, db, size, nil)
			}
			c.damage(t, l, db)
			for _, opts := range [][]VerifyOption{nil, {ExpectKey(vkey)}} {
				got, gotErr := VerifyDB(ctx, db, append(opts, withBlockSize(blockSize))...)
				var want Report
				var cfg verifyConfig
				for _, o := range opts {
					o(&cfg)
				}
				tx, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				wantErr := verifySequential(ctx, tx, cfg, &want)
				tx.Rollback()
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || got != want {
					t.Errorf("parallel: %v %+v\nsequential: %v %+v", gotErr, got, wantErr, want)
				}
				if c.name == "healthy" && (gotErr != nil || got.Entries != n || got.Checkpoints != 10) {
					t.Errorf("healthy ledger: %v %+v", gotErr, got)
				}
				if c.name != "healthy" && gotErr == nil {
					t.Errorf("damage not found: %+v", got)
				}
			}
		})
	}
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// TestVerifySecondSnapshot: the tree hashes are read from a second read
// transaction when a connection is free, and from the first when the pool
// is busy; both verify alike.
func TestVerifySecondSnapshot(t *testing.T) {
	ctx := context.Background()
	l, db := newTestLedger(t)
	appendN(t, l, 50)
	if _, err := l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other, release, err := sameSnapshot(ctx, db, tx)
	if err != nil || other == tx {
		t.Fatalf("with a free connection: %v, same transaction %v", err, other == tx)
	}
	release()
	// Hold every other connection of the read pool.
	var held []*sql.Conn
	for range db.R.Stats().MaxOpenConnections - 1 {
		c, err := db.R.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	same, release, err := sameSnapshot(ctx, db, tx)
	if err != nil || same != tx {
		t.Fatalf("with a busy pool: %v, same transaction %v", err, same == tx)
	}
	release()
	var rep Report
	if err := verifyDB(ctx, tx, same, verifyConfig{}, &rep); err != nil || rep.Entries != 50 || rep.Checkpoints != 1 {
		t.Fatalf("one snapshot: %v %+v", err, rep)
	}
	for _, c := range held {
		c.Close()
	}
}
