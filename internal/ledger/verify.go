package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/hearth-dev/hearth/internal/store"
)

// Report describes what a verification covered. A verification that fails
// returns the report so far with the error.
type Report struct {
	Origin          string `json:"origin"`
	PublicKey       string `json:"public_key"`
	Entries         int64  `json:"entries"`
	CheckpointSize  int64  `json:"checkpoint_size"`  // size of the latest signed checkpoint
	RootHash        string `json:"root_hash"`        // base64 tree hash at CheckpointSize
	Checkpoints     int    `json:"checkpoints"`      // signed checkpoints verified
	InclusionProofs int    `json:"inclusion_proofs"` // inclusion proofs verified (bundles)
	ConsistencyFrom int64  `json:"consistency_from"` // size proven to be a prefix (bundles); 0 if none
	Unsigned        int64  `json:"unsigned"`         // entries after the latest checkpoint (database)
	// Subset: the bundle was an evidence subset (SubsetFormat): Entries of
	// the CheckpointSize entries, each proven included; Scope is what it
	// was selected for.
	Subset bool   `json:"subset,omitempty"`
	Scope  string `json:"scope,omitempty"`
}

// VerifyOption adjusts a verification.
type VerifyOption func(*verifyConfig)

type verifyConfig struct {
	expectKey string
	// blockSize is VerifyDB's block size, a power of two; 0 is
	// defaultBlockSize (tests verify with small blocks, so that ledgers of
	// a few hundred entries cross several block edges).
	blockSize int64
}

// ExpectKey makes verification fail unless the latest checkpoint is signed
// by vkey. Without it, a bundle proves only that its own key signed it.
func ExpectKey(vkey string) VerifyOption {
	return func(c *verifyConfig) { c.expectKey = vkey }
}

// walker re-walks a ledger in order: it checks each entry's form, seq and
// prev link, and folds its leaf hash into the frontier of the Merkle tree.
type walker struct {
	n     int64       // entries accepted
	last  [32]byte    // SHA-256 of the last accepted entry
	prev  string      // last in hex: the next entry's prev
	stack []tlog.Hash // roots of the complete subtrees, largest first
}

func newWalker() *walker { return &walker{prev: GenesisPrev} }

// add accepts the entry at 1-based position pos with canonical bytes raw.
// It returns the entry, its leaf hash, and the tree hashes tlog stores for
// it (the leaf first), which are the same as tlog.StoredHashes returns.
func (w *walker) add(pos int64, raw []byte) (Entry, []tlog.Hash, error) {
	e, err := ParseEntry(raw)
	if err != nil {
		return Entry{}, nil, fmt.Errorf("entry %d: %w", pos, err)
	}
	if e.Seq != pos {
		return Entry{}, nil, fmt.Errorf("entry %d out of order: seq %d", pos, e.Seq)
	}
	if e.Prev != w.prev {
		return Entry{}, nil, fmt.Errorf("entry seq %d: prev hash mismatch", e.Seq)
	}
	w.last = sha256.Sum256(raw)
	w.prev = hex.EncodeToString(w.last[:])
	leaf := tlog.RecordHash(raw)
	stored := []tlog.Hash{leaf}
	w.stack = append(w.stack, leaf)
	for i := w.n; i&1 == 1; i >>= 1 {
		k := len(w.stack)
		h := tlog.NodeHash(w.stack[k-2], w.stack[k-1])
		w.stack = append(w.stack[:k-2], h)
		stored = append(stored, h)
	}
	w.n++
	return e, stored, nil
}

// emptyRoot is the RFC 6962 hash of the empty tree, SHA-256 of nothing.
var emptyRoot = tlog.Hash(sha256.Sum256(nil))

// root returns the RFC 6962 tree hash of the entries accepted so far.
func (w *walker) root() tlog.Hash {
	if len(w.stack) == 0 {
		return emptyRoot
	}
	h := w.stack[len(w.stack)-1]
	for i := len(w.stack) - 2; i >= 0; i-- {
		h = tlog.NodeHash(w.stack[i], h)
	}
	return h
}

// VerifyDB verifies the ledger in db from a read snapshot: every entry's
// canonical form, seq, prev link and stored hash; every stored tree hash;
// and every stored checkpoint's signature (by the key recorded with it) and
// root. The latest checkpoint must be signed by ExpectKey's key when given.
// Entries appended after the latest checkpoint are chained and hashed but
// not yet signed; the report counts them as Unsigned.
func VerifyDB(ctx context.Context, db *store.DB, opts ...VerifyOption) (Report, error) {
	var cfg verifyConfig
	for _, o := range opts {
		o(&cfg)
	}
	tx, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Report{}, fmt.Errorf("verify ledger: %w", err)
	}
	defer tx.Rollback()
	hashTx, release, err := sameSnapshot(ctx, db, tx)
	if err != nil {
		return Report{}, fmt.Errorf("verify ledger: %w", err)
	}
	defer release()
	var rep Report
	err = verifyDB(ctx, tx, hashTx, cfg, &rep)
	return rep, err
}

// loadCheckpoints verifies the signature and text of every stored
// checkpoint and returns them by size; it fills the report's checkpoint
// fields from the latest one.
func loadCheckpoints(ctx context.Context, tx *sql.Tx, cfg verifyConfig, rep *Report) (map[int64][]checkpoint, error) {
	rows, err := tx.QueryContext(ctx, `SELECT size, vkey, note FROM ledger_checkpoints ORDER BY size, created_at`)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	cps := make(map[int64][]checkpoint)
	var latestKey string
	for rows.Next() {
		var (
			n          int64
			vkey, text string
		)
		if err := rows.Scan(&n, &vkey, &text); err != nil {
			return nil, fmt.Errorf("read checkpoints: %w", err)
		}
		cp, err := openCheckpoint([]byte(text), vkey, "its recorded key")
		if err != nil {
			return nil, fmt.Errorf("checkpoint at size %d: %w", n, err)
		}
		if cp.size != n {
			return nil, fmt.Errorf("checkpoint at size %d: signed text says size %d", n, cp.size)
		}
		cps[n] = append(cps[n], cp)
		rep.CheckpointSize, rep.RootHash, rep.Origin, latestKey = n, cp.root.String(), cp.origin, vkey
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	rep.PublicKey = latestKey
	if cfg.expectKey != "" && latestKey != cfg.expectKey {
		if latestKey == "" {
			return nil, errors.New("no signed checkpoint to check against the expected key")
		}
		return nil, errors.New("public key does not match expected")
	}
	return cps, nil
}
