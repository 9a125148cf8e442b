// Package ledger is Hearth's host ledger (docs/DESIGN.md, "Governance"): an append-only journal
// of every side effect and operator action, kept in the store database.
//
// Each entry is canonical JSON (see Canonical and Entry) whose prev is the
// SHA-256 of the previous entry's bytes, so the entries form a hash chain.
// The same bytes are the leaves of an RFC 6962 Merkle tree
// (golang.org/x/mod/sumdb/tlog) whose stored hashes are persisted, so the
// tree hash and proofs for any size never reread the leaves. A checkpoint
// is the signed (golang.org/x/mod/sumdb/note, Ed25519) text
//
//	<origin>\n<size>\n<base64 root hash>\n
//
// — the C2SP tlog-checkpoint body, which is tlog.FormatTree's with the
// origin in place of the go.sum first line. The origin is the signer key's
// name, "hearth/<host-id>".
//
// Entry data must never carry a secret or a raw OpenAI identifier: callers
// pass digests, and Append refuses data with a key that names one (see
// ErrForbiddenKey) rather than redacting it.
//
// Export writes an evidence bundle that VerifyBundle checks offline;
// ExportSubset writes some of the entries (one conversation's), each with
// its inclusion proof, which VerifyBundle checks too; VerifyDB checks the
// live database.
package ledger

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/hearth-dev/hearth/internal/store"
)

// Ledger appends to and checkpoints the host ledger of one database.
// Appends are serialized by the database: every append runs in a write
// transaction, and the store has a single write connection.
type Ledger struct {
	db     *store.DB
	signer note.Signer
	vkey   string
	now    func() time.Time
}

// Option configures a Ledger.
type Option func(*Ledger)

// WithClock sets the clock that stamps entries and checkpoints (tests).
func WithClock(now func() time.Time) Option {
	return func(l *Ledger) { l.now = now }
}

// Open returns the ledger of db, signing checkpoints with skey (a note
// Ed25519 signer key, as LoadOrCreateKey returns).
func Open(db *store.DB, skey string, opts ...Option) (*Ledger, error) {
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, errors.New("open ledger: signer key is not a valid note key")
	}
	vkey, err := VerifierKey(skey)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	l := &Ledger{db: db, signer: signer, vkey: vkey, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// Origin returns the origin line of this ledger's checkpoints.
func (l *Ledger) Origin() string { return l.signer.Name() }

// PublicKey returns the note verifier key for this ledger's checkpoints.
func (l *Ledger) PublicKey() string { return l.vkey }

// Append appends one entry in its own transaction.
func (l *Ledger) Append(ctx context.Context, kind string, data any) (Entry, error) {
	var e Entry
	err := l.db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		e, err = l.AppendTx(ctx, tx, kind, data)
		return err
	})
	return e, err
}

// AppendTx appends one entry inside tx, a write transaction of the store,
// so that a caller's state change and its ledger entry commit together.
// The returned entry exists only if tx commits.
func (l *Ledger) AppendTx(ctx context.Context, tx *sql.Tx, kind string, data any) (Entry, error) {
	if !validKind(kind) {
		return Entry{}, fmt.Errorf("ledger append: kind %q is not a lowercase name", kind)
	}
	body, err := canonicalData(data)
	if err != nil {
		return Entry{}, fmt.Errorf("ledger append %s: %w", kind, err)
	}
	var (
		last     int64
		lastHash []byte
	)
	err = l.db.TxQueryRow(ctx, tx, `SELECT seq, hash FROM ledger_entries ORDER BY seq DESC LIMIT 1`).Scan(&last, &lastHash)
	prev := GenesisPrev
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return Entry{}, fmt.Errorf("ledger append %s: read head: %w", kind, err)
	default:
		prev = hex.EncodeToString(lastHash)
	}
	e := newEntry(last+1, l.now(), kind, prev, body)
	hashes, err := tlog.StoredHashes(last, e.Raw, hashReader{ctx, txQuerier{l.db, tx}})
	if err != nil {
		return Entry{}, fmt.Errorf("ledger append %s: tree hashes: %w", kind, err)
	}
	sum := sha256.Sum256(e.Raw)
	if _, err := l.db.TxExec(ctx, tx, `INSERT INTO ledger_entries(seq, kind, ts, body, hash) VALUES (?, ?, ?, ?, ?)`,
		e.Seq, e.Kind, e.Time.UnixMilli(), e.Raw, sum[:]); err != nil {
		return Entry{}, fmt.Errorf("ledger append %s: %w", kind, err)
	}
	if err := insertHashes(ctx, l.db, tx, tlog.StoredHashIndex(0, last), hashes); err != nil {
		return Entry{}, fmt.Errorf("ledger append %s: %w", kind, err)
	}
	return e, nil
}

// insertHashes stores hashes at the consecutive storage indexes from first.
func insertHashes(ctx context.Context, db *store.DB, tx *sql.Tx, first int64, hashes []tlog.Hash) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO ledger_hashes(idx, hash) VALUES `)
	args := make([]any, 0, 2*len(hashes))
	for i, h := range hashes {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?,?)")
		args = append(args, first+int64(i), h[:])
	}
	if _, err := db.TxExec(ctx, tx, q.String(), args...); err != nil {
		return fmt.Errorf("store tree hashes: %w", err)
	}
	return nil
}

// querier is what hashReader and the read helpers need from *sql.Tx or *sql.DB.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txQuerier reads inside a transaction of db through its prepared writer
// statements (store.DB.TxQuery).
type txQuerier struct {
	db *store.DB
	tx *sql.Tx
}

func (q txQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.db.TxQuery(ctx, q.tx, query, args...)
}

func (q txQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.db.TxQueryRow(ctx, q.tx, query, args...)
}

// hashReader reads stored tree hashes through q.
type hashReader struct {
	ctx context.Context
	q   querier
}

// ReadHashes implements tlog.HashReader.
func (r hashReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	var q strings.Builder
	q.WriteString(`SELECT idx, hash FROM ledger_hashes WHERE idx IN (`)
	args := make([]any, len(indexes))
	for i, idx := range indexes {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteByte('?')
		args[i] = idx
	}
	q.WriteByte(')')
	rows, err := r.q.QueryContext(r.ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("read tree hashes: %w", err)
	}
	defer rows.Close()
	found := make(map[int64]tlog.Hash, len(indexes))
	for rows.Next() {
		var (
			idx int64
			b   []byte
		)
		if err := rows.Scan(&idx, &b); err != nil {
			return nil, fmt.Errorf("read tree hashes: %w", err)
		}
		if len(b) != tlog.HashSize {
			return nil, fmt.Errorf("stored tree hash %d has %d bytes", idx, len(b))
		}
		found[idx] = tlog.Hash(b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read tree hashes: %w", err)
	}
	out := make([]tlog.Hash, len(indexes))
	for i, idx := range indexes {
		h, ok := found[idx]
		if !ok {
			return nil, fmt.Errorf("stored tree hash %d is missing", idx)
		}
		out[i] = h
	}
	return out, nil
}

// size returns the number of entries visible to q.
func size(ctx context.Context, q querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM ledger_entries`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read ledger size: %w", err)
	}
	return n, nil
}

// Size returns the number of entries.
func (l *Ledger) Size(ctx context.Context) (int64, error) {
	return size(ctx, l.db.R)
}

// Tail returns the last n entries, oldest first.
func (l *Ledger) Tail(ctx context.Context, n int) ([]Entry, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := l.db.R.QueryContext(ctx,
		`SELECT body FROM (SELECT seq, body FROM ledger_entries ORDER BY seq DESC LIMIT ?) ORDER BY seq`, n)
	if err != nil {
		return nil, fmt.Errorf("read ledger tail: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("read ledger tail: %w", err)
		}
		e, err := ParseEntry(b)
		if err != nil {
			return nil, fmt.Errorf("read ledger tail: entry %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ledger tail: %w", err)
	}
	return out, nil
}

// Checkpoint signs the tree of all entries appended so far and stores the
// signed note; it returns the note. Checkpointing an unchanged ledger
// returns the stored note (Ed25519 signatures are deterministic, so it is
// the same bytes).
func (l *Ledger) Checkpoint(ctx context.Context) ([]byte, error) {
	var signed []byte
	err := l.db.InTx(ctx, func(tx *sql.Tx) error {
		n, err := size(ctx, tx)
		if err != nil {
			return err
		}
		var stored string
		err = tx.QueryRowContext(ctx, `SELECT note FROM ledger_checkpoints WHERE size = ? AND vkey = ?`, n, l.vkey).Scan(&stored)
		if err == nil {
			signed = []byte(stored)
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read checkpoint: %w", err)
		}
		root, err := tlog.TreeHash(n, hashReader{ctx, tx})
		if err != nil {
			return fmt.Errorf("tree hash at size %d: %w", n, err)
		}
		signed, err = note.Sign(&note.Note{Text: formatCheckpoint(l.Origin(), n, root)}, l.signer)
		if err != nil {
			return fmt.Errorf("sign checkpoint: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_checkpoints(size, vkey, note, created_at) VALUES (?, ?, ?, ?)`,
			n, l.vkey, string(signed), l.now().UnixMilli()); err != nil {
			return fmt.Errorf("store checkpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger checkpoint: %w", err)
	}
	return signed, nil
}

func formatCheckpoint(origin string, n int64, root tlog.Hash) string {
	return origin + "\n" + strconv.FormatInt(n, 10) + "\n" + root.String() + "\n"
}

// checkpoint is a verified checkpoint.
type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

// openCheckpoint verifies signed with vkey, which keyDesc names in errors,
// and parses its text. Errors say whether the signature or the text is at
// fault.
func openCheckpoint(signed []byte, vkey, keyDesc string) (checkpoint, error) {
	v, err := newVerifier(vkey)
	if err != nil {
		return checkpoint{}, err
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			return checkpoint{}, errors.New("checkpoint signature: not signed by " + keyDesc)
		case errors.As(err, &invalid):
			return checkpoint{}, errors.New("checkpoint signature: invalid (checkpoint text or signature altered)")
		default:
			return checkpoint{}, fmt.Errorf("checkpoint: signed note: %v", err)
		}
	}
	cp, err := parseCheckpoint(n.Text)
	if err != nil {
		return checkpoint{}, err
	}
	if cp.origin != v.Name() {
		return checkpoint{}, fmt.Errorf("checkpoint origin %q is not the key's name %q", cp.origin, v.Name())
	}
	return cp, nil
}

// newVerifier parses an Ed25519 note verifier key, refusing any spelling
// but the one note.NewEd25519VerifierKey writes (the key hash in lowercase
// hex, the key in canonical base64), so that one key has one string.
func newVerifier(vkey string) (note.Verifier, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("public key: %v", err)
	}
	parts := strings.SplitN(vkey, "+", 3)
	key, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != 1 {
		return nil, errors.New("public key: not an Ed25519 note verifier key")
	}
	if canon, err := note.NewEd25519VerifierKey(v.Name(), key[1:]); err != nil || canon != vkey {
		return nil, errors.New("public key: not in canonical form")
	}
	return v, nil
}

// parseCheckpoint parses "<origin>\n<size>\n<base64 root>\n".
func parseCheckpoint(text string) (checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return checkpoint{}, errors.New("checkpoint text: want origin, size and root hash lines")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return checkpoint{}, fmt.Errorf("checkpoint text: size %q is not a decimal count", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return checkpoint{}, fmt.Errorf("checkpoint text: root hash %q: %v", lines[2], err)
	}
	return checkpoint{origin: lines[0], size: n, root: root}, nil
}
