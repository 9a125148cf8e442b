package ledger

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// BundleFormat identifies an evidence bundle written by Export.
const BundleFormat = "hearth-ledger-bundle/1"

// InclusionAll is the largest ledger whose bundle carries an inclusion
// proof for every entry. A larger one carries proofs for a sample: every
// stride-th entry from seq 1, stride = ceil(size/InclusionAll), and the
// last entry. Either way the bundle carries every entry, and the verifier
// recomputes the root from all of them; the proofs let a reader who holds
// only the checkpoint and a few entries check those entries alone.
const InclusionAll = 100_000

// SinceLastExport, passed to Export, proves consistency from the size of
// the previous export (0 for the first).
const SinceLastExport int64 = -1

// An evidence bundle is one JSON object:
//
//	{
//	  "format":      "hearth-ledger-bundle/1",
//	  "public_key":  note verifier key of the checkpoint's signer,
//	  "checkpoint":  signed note "<origin>\n<size>\n<base64 root>\n" + signature,
//	  "consistency": {
//	    "old_size":       M (0: nothing to prove),
//	    "old_root":       base64 tree hash at M (when M > 0),
//	    "old_checkpoint": the signed checkpoint stored at M, when there is one,
//	    "proof":          RFC 6962 consistency proof from M to size (base64 hashes)
//	  },
//	  "entries":   every entry, seq 1..size in order, each its exact canonical
//	               bytes as a JSON string,
//	  "inclusion": [{"seq": S, "proof": [base64 hashes]}, …] proofs against the
//	               checkpoint, ascending seq (see InclusionAll)
//	}
type bundle struct {
	Format      string            `json:"format"`
	PublicKey   string            `json:"public_key"`
	Checkpoint  string            `json:"checkpoint"`
	Consistency bundleConsistency `json:"consistency"`
	Entries     []string          `json:"entries"`
	Inclusion   []bundleInclusion `json:"inclusion"`
}

type bundleConsistency struct {
	OldSize       int64       `json:"old_size"`
	OldRoot       *tlog.Hash  `json:"old_root,omitempty"`
	OldCheckpoint string      `json:"old_checkpoint,omitempty"`
	Proof         []tlog.Hash `json:"proof"`
}

type bundleInclusion struct {
	Seq   int64       `json:"seq"`
	Proof []tlog.Hash `json:"proof"`
}

// inclusionSeqs returns the seqs whose inclusion proofs a bundle of n
// entries carries, ascending.
func inclusionSeqs(n int64) []int64 {
	stride := max(1, (n+InclusionAll-1)/InclusionAll)
	seqs := make([]int64, 0, n/stride+1)
	for s := int64(1); s <= n; s += stride {
		seqs = append(seqs, s)
	}
	if n > 0 && seqs[len(seqs)-1] != n {
		seqs = append(seqs, n)
	}
	return seqs
}

// ExportFile writes Export's bundle to path through the one atomic
// writer: a reader, or a crash, sees the previous file or the whole new
// bundle, never part of one. A new file is private (0600).
func (l *Ledger) ExportFile(ctx context.Context, path string, sinceCheckpointSize int64) error {
	return atomicfile.WriteWith(path, 0o600, func(w io.Writer) error {
		return l.Export(ctx, w, sinceCheckpointSize)
	})
}

// Export signs a checkpoint of the whole ledger and writes the evidence
// bundle for it to w, with a consistency proof from sinceCheckpointSize
// (SinceLastExport: from the previous export's size). A successful export
// is recorded, so the next one can prove consistency from it. The bundle
// is streamed; VerifyBundle checks it.
func (l *Ledger) Export(ctx context.Context, w io.Writer, sinceCheckpointSize int64) error {
	signed, err := l.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("ledger export: %w", err)
	}
	cp, err := openCheckpoint(signed, l.vkey, "ledger key")
	if err != nil {
		return fmt.Errorf("ledger export: %w", err)
	}
	since := sinceCheckpointSize
	if since < 0 {
		err := l.db.R.QueryRowContext(ctx, `SELECT size FROM ledger_exports ORDER BY id DESC LIMIT 1`).Scan(&since)
		if errors.Is(err, sql.ErrNoRows) {
			since = 0
		} else if err != nil {
			return fmt.Errorf("ledger export: read last export: %w", err)
		}
	}
	if since > cp.size {
		return fmt.Errorf("ledger export: consistency from size %d, but the ledger has %d entries", since, cp.size)
	}
	tx, err := l.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("ledger export: %w", err)
	}
	defer tx.Rollback()
	if err := writeBundle(ctx, tx, w, l.vkey, signed, cp, since); err != nil {
		return fmt.Errorf("ledger export: %w", err)
	}
	if _, err := l.db.W.ExecContext(ctx, `INSERT INTO ledger_exports(size, created_at) VALUES (?, ?)`,
		cp.size, l.now().UnixMilli()); err != nil {
		return fmt.Errorf("ledger export: record export: %w", err)
	}
	return nil
}

func writeBundle(ctx context.Context, tx *sql.Tx, w io.Writer, vkey string, signed []byte, cp checkpoint, since int64) error {
	hr := hashReader{ctx, tx}
	cons := bundleConsistency{OldSize: since}
	if since > 0 {
		root, err := tlog.TreeHash(since, hr)
		if err != nil {
			return fmt.Errorf("tree hash at size %d: %w", since, err)
		}
		cons.OldRoot = &root
		if cons.Proof, err = tlog.ProveTree(cp.size, since, hr); err != nil {
			return fmt.Errorf("consistency proof %d→%d: %w", since, cp.size, err)
		}
		err = tx.QueryRowContext(ctx, `SELECT note FROM ledger_checkpoints WHERE size = ? AND vkey = ?`, since, vkey).Scan(&cons.OldCheckpoint)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read checkpoint at size %d: %w", since, err)
		}
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 64<<10)
	b = append(b, `{"format":`...)
	b = appendString(b, BundleFormat)
	b = append(b, `,"public_key":`...)
	b = appendString(b, vkey)
	b = append(b, `,"checkpoint":`...)
	b = appendString(b, string(signed))
	b = append(b, `,"consistency":{"old_size":`...)
	b = strconv.AppendInt(b, cons.OldSize, 10)
	if cons.OldRoot != nil {
		b = append(b, `,"old_root":`...)
		b = appendString(b, cons.OldRoot.String())
	}
	if cons.OldCheckpoint != "" {
		b = append(b, `,"old_checkpoint":`...)
		b = appendString(b, cons.OldCheckpoint)
	}
	b = append(b, `,"proof":`...)
	b = appendHashes(b, cons.Proof)
	b = append(b, "},\n\"entries\":["...)
	if _, err := bw.Write(b); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}

	rows, err := tx.QueryContext(ctx, `SELECT body FROM ledger_entries WHERE seq <= ? ORDER BY seq`, cp.size)
	if err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return fmt.Errorf("read entries: %w", err)
		}
		b = b[:0]
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = appendString(b, string(body))
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write bundle: %w", err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	if n != cp.size {
		return fmt.Errorf("read entries: %d entries up to checkpoint size %d", n, cp.size)
	}

	if _, err := bw.WriteString("],\n\"inclusion\":["); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	for i, seq := range inclusionSeqs(cp.size) {
		p, err := tlog.ProveRecord(cp.size, seq-1, hr)
		if err != nil {
			return fmt.Errorf("inclusion proof for entry seq %d: %w", seq, err)
		}
		b = b[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n{\"seq\":"...)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"proof":`...)
		b = appendHashes(b, p)
		b = append(b, '}')
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write bundle: %w", err)
		}
	}
	if _, err := bw.WriteString("]}\n"); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	return nil
}

func appendHashes(b []byte, hs []tlog.Hash) []byte {
	b = append(b, '[')
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, h.String())
	}
	return append(b, ']')
}

// VerifyBundle verifies an evidence bundle offline: the checkpoint's
// signature by the bundled key (and that key against ExpectKey's, when
// given), the entries' canonical form, contiguous seqs from 1 and prev
// links, the Merkle root of their leaves against the checkpoint, every
// inclusion proof, and the consistency proof (and the old checkpoint's
// signature, when bundled). Errors say what failed and where.
//
// The whole bundle is decoded in memory: about twice its size.
//
// An evidence subset (SubsetFormat, as ExportSubset writes) is verified
// as verifySubset says.
func VerifyBundle(r io.Reader, opts ...VerifyOption) (Report, error) {
	var cfg verifyConfig
	for _, o := range opts {
		o(&cfg)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return Report{}, fmt.Errorf("bundle: read: %w", err)
	}
	var head struct {
		Format string `json:"format"`
	}
	// A subset cut short is still reported as one: ExportSubset writes
	// its format first.
	if err := json.Unmarshal(data, &head); err == nil && head.Format == SubsetFormat ||
		err != nil && bytes.HasPrefix(data, []byte(`{"format":"`+SubsetFormat+`"`)) {
		return verifySubset(data, cfg)
	}
	var rep Report
	var b bundle
	if err := decodeStrict(data, "bundle", &b); err != nil {
		return rep, err
	}
	if b.Format != BundleFormat {
		return rep, fmt.Errorf("bundle format %q, want %q", b.Format, BundleFormat)
	}
	rep.PublicKey = b.PublicKey
	if cfg.expectKey != "" && b.PublicKey != cfg.expectKey {
		return rep, errors.New("public key does not match expected")
	}
	cp, err := openCheckpoint([]byte(b.Checkpoint), b.PublicKey, "bundled key")
	if err != nil {
		return rep, err
	}
	rep.Origin, rep.CheckpointSize, rep.RootHash, rep.Checkpoints = cp.origin, cp.size, cp.root.String(), 1
	n := cp.size
	if got := int64(len(b.Entries)); got < n {
		return rep, fmt.Errorf("bundle truncated: checkpoint size %d but %d entries", n, got)
	} else if got > n {
		return rep, fmt.Errorf("bundle has %d entries but checkpoint size %d: entries past the checkpoint are unsigned", got, n)
	}

	want := inclusionSeqs(n)
	if len(b.Inclusion) != len(want) {
		return rep, fmt.Errorf("inclusion: %d proofs, want %d for %d entries", len(b.Inclusion), len(want), n)
	}
	for i, p := range b.Inclusion {
		if p.Seq != want[i] {
			return rep, fmt.Errorf("inclusion proof %d: seq %d, want %d", i+1, p.Seq, want[i])
		}
	}

	c := b.Consistency
	var oldRoot tlog.Hash
	switch {
	case c.OldSize < 0 || c.OldSize > n:
		return rep, fmt.Errorf("consistency: old size %d outside 0..%d", c.OldSize, n)
	case c.OldSize == 0:
		if len(c.Proof) != 0 || c.OldRoot != nil || c.OldCheckpoint != "" {
			return rep, errors.New("consistency: old size 0 takes no root, checkpoint or proof")
		}
	default:
		if c.OldRoot == nil {
			return rep, fmt.Errorf("consistency: old size %d without old_root", c.OldSize)
		}
		oldRoot = *c.OldRoot
		if err := tlog.CheckTree(c.Proof, n, cp.root, c.OldSize, oldRoot); err != nil {
			return rep, fmt.Errorf("consistency: proof from size %d to %d does not verify", c.OldSize, n)
		}
		if c.OldCheckpoint != "" {
			old, err := openCheckpoint([]byte(c.OldCheckpoint), b.PublicKey, "bundled key")
			if err != nil {
				return rep, fmt.Errorf("consistency: old %w", err)
			}
			if old.size != c.OldSize || old.root != oldRoot {
				return rep, fmt.Errorf("consistency: old checkpoint is for size %d root %s, not size %d root %s", old.size, old.root, c.OldSize, oldRoot)
			}
			rep.Checkpoints++
		}
	}

	w := newWalker()
	next := 0 // index into b.Inclusion
	for i, s := range b.Entries {
		pos := int64(i) + 1
		e, stored, err := w.add(pos, []byte(s))
		if err != nil {
			return rep, err
		}
		rep.Entries = w.n
		if next < len(b.Inclusion) && b.Inclusion[next].Seq == pos {
			if tlog.CheckRecord(b.Inclusion[next].Proof, n, cp.root, pos-1, stored[0]) != nil {
				return rep, fmt.Errorf("entry seq %d: inclusion proof does not lead to the checkpoint root (entry or proof altered)", e.Seq)
			}
			rep.InclusionProofs++
			next++
		}
		if w.n == c.OldSize {
			if root := w.root(); root != oldRoot {
				return rep, fmt.Errorf("consistency: entries 1..%d hash to %s, not the old root %s", w.n, root, oldRoot)
			}
		}
	}
	if root := w.root(); root != cp.root {
		return rep, fmt.Errorf("tree root mismatch: entries hash to %s but the checkpoint signed %s", root, cp.root)
	}
	rep.ConsistencyFrom = c.OldSize
	return rep, nil
}

// decodeStrict decodes the one JSON document data into v, refusing
// unknown fields and anything after the document; errors start with what
// (the kind of bundle) and name the byte of a syntax error.
func decodeStrict(data []byte, what string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("%s: invalid JSON at byte %d: %v", what, syn.Offset, err)
		}
		return fmt.Errorf("%s: %v", what, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: data after the JSON document", what)
	}
	return nil
}
