package ledger

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"
)

// SubsetFormat identifies an evidence subset written by ExportSubset: some
// of the ledger's entries, each with its inclusion proof against one signed
// checkpoint of the whole ledger.
const SubsetFormat = "hearth-ledger-subset/1"

// An evidence subset is one JSON object:
//
//	{
//	  "format":     "hearth-ledger-subset/1",
//	  "scope":      what the entries were selected for (informational),
//	  "after_seq":  every entry's seq is greater than this,
//	  "public_key": note verifier key of the checkpoint's signer,
//	  "checkpoint": signed note "<origin>\n<size>\n<base64 root>\n" + signature,
//	  "entries":    [{"seq": S, "entry": exact canonical bytes as a JSON string,
//	                  "proof": [base64 hashes]}, …] ascending seq, each
//	                 proven included in the checkpoint's tree,
//	  "more":       true when a later subset, from after_seq = next_after_seq,
//	                 may hold more of the selection (a limit stopped this one),
//	  "next_after_seq": that seq, when more
//	}
//
// A subset proves that each of its entries is, unaltered and at its seq,
// in the ledger the checkpoint signs; where two entries are consecutive
// their prev link is checked too. It cannot prove that no other entry was
// selected: that is a property of the selection, not of the ledger.
type subsetBundle struct {
	Format     string        `json:"format"`
	Scope      string        `json:"scope"`
	AfterSeq   int64         `json:"after_seq"`
	PublicKey  string        `json:"public_key"`
	Checkpoint string        `json:"checkpoint"`
	Entries    []subsetEntry `json:"entries"`
	More       bool          `json:"more"`
	NextAfter  int64         `json:"next_after_seq,omitempty"`
}

type subsetEntry struct {
	Seq   int64       `json:"seq"`
	Entry string      `json:"entry"`
	Proof []tlog.Hash `json:"proof"`
}

// Subset selects the entries ExportSubset writes.
type Subset struct {
	// Scope says what the entries were selected for (for example "the
	// conversation r:…"); it is written as the subset's scope.
	Scope string
	// AfterSeq skips the entries up to and including this seq: a later
	// page of the same selection starts after the previous page's last.
	AfterSeq int64
	// Limit is the most entries one subset carries (at least 1).
	Limit int
	// MaxScan, when positive, is the most ledger entries one subset
	// looks at (from AfterSeq on): a sparse selection of a long ledger is
	// then read in parts of bounded cost, each ending with more set and
	// LastSeq at the last entry looked at.
	MaxScan int64
	// Match reports whether an entry, given its canonical bytes, belongs
	// to the selection. It sees every entry after AfterSeq: a quick look
	// at the bytes before any parsing keeps a long ledger cheap to scan.
	Match func(body []byte) bool
}

// SubsetInfo says what ExportSubset wrote.
type SubsetInfo struct {
	Entries int   // entries written
	Size    int64 // the checkpoint's size
	LastSeq int64 // where the next part starts after: the last entry's seq, or the last looked at (MaxScan)
	More    bool  // entries past LastSeq may match: the next part starts after LastSeq
}

// ExportSubset signs a checkpoint of the whole ledger (the stored one when
// nothing was appended since) and writes to w the entries up to it that
// sel.Match selects after sel.AfterSeq, at most sel.Limit of them, each
// with its inclusion proof. VerifyBundle checks the result offline.
func (l *Ledger) ExportSubset(ctx context.Context, w io.Writer, sel Subset) (SubsetInfo, error) {
	if sel.Limit < 1 {
		return SubsetInfo{}, errors.New("ledger subset: limit must be at least 1")
	}
	if sel.AfterSeq < 0 {
		return SubsetInfo{}, fmt.Errorf("ledger subset: after_seq %d is negative", sel.AfterSeq)
	}
	if sel.Match == nil {
		return SubsetInfo{}, errors.New("ledger subset: no selection")
	}
	signed, err := l.Checkpoint(ctx)
	if err != nil {
		return SubsetInfo{}, fmt.Errorf("ledger subset: %w", err)
	}
	cp, err := openCheckpoint(signed, l.vkey, "ledger key")
	if err != nil {
		return SubsetInfo{}, fmt.Errorf("ledger subset: %w", err)
	}
	tx, err := l.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return SubsetInfo{}, fmt.Errorf("ledger subset: %w", err)
	}
	defer tx.Rollback()
	info := SubsetInfo{Size: cp.size, LastSeq: sel.AfterSeq}
	if err := writeSubset(ctx, tx, w, l.vkey, signed, cp, sel, &info); err != nil {
		return SubsetInfo{}, fmt.Errorf("ledger subset: %w", err)
	}
	return info, nil
}

func writeSubset(ctx context.Context, tx *sql.Tx, w io.Writer, vkey string, signed []byte, cp checkpoint, sel Subset, info *SubsetInfo) error {
	hr := hashReader{ctx, tx}
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 4<<10)
	b = append(b, `{"format":`...)
	b = appendString(b, SubsetFormat)
	b = append(b, `,"scope":`...)
	b = appendString(b, sel.Scope)
	b = append(b, `,"after_seq":`...)
	b = strconv.AppendInt(b, sel.AfterSeq, 10)
	b = append(b, `,"public_key":`...)
	b = appendString(b, vkey)
	b = append(b, `,"checkpoint":`...)
	b = appendString(b, string(signed))
	b = append(b, ",\n\"entries\":["...)
	if _, err := bw.Write(b); err != nil {
		return fmt.Errorf("write subset: %w", err)
	}

	// Seqs are contiguous: the window's end is a seq.
	end, cut := cp.size, false
	if sel.MaxScan > 0 && sel.AfterSeq+sel.MaxScan < cp.size {
		end, cut = sel.AfterSeq+sel.MaxScan, true
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, body FROM ledger_entries WHERE seq > ? AND seq <= ? ORDER BY seq`, sel.AfterSeq, end)
	if err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq  int64
			body []byte
		)
		if err := rows.Scan(&seq, &body); err != nil {
			return fmt.Errorf("read entries: %w", err)
		}
		if !sel.Match(body) {
			continue
		}
		if info.Entries == sel.Limit {
			info.More = true
			break
		}
		p, err := tlog.ProveRecord(cp.size, seq-1, hr)
		if err != nil {
			return fmt.Errorf("inclusion proof for entry seq %d: %w", seq, err)
		}
		b = b[:0]
		if info.Entries > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n{\"seq\":"...)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"entry":`...)
		b = appendString(b, string(body))
		b = append(b, `,"proof":`...)
		b = appendHashes(b, p)
		b = append(b, '}')
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write subset: %w", err)
		}
		info.Entries++
		info.LastSeq = seq
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	if cut && !info.More {
		info.More, info.LastSeq = true, end
	}
	b = append(b[:0], "],\n\"more\":"...)
	b = strconv.AppendBool(b, info.More)
	if info.More {
		b = strconv.AppendInt(append(b, `,"next_after_seq":`...), info.LastSeq, 10)
	}
	b = append(b, "}\n"...)
	if _, err := bw.Write(b); err != nil {
		return fmt.Errorf("write subset: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write subset: %w", err)
	}
	return nil
}

// verifySubset verifies an evidence subset (SubsetFormat): the checkpoint's
// signature by the bundled key (and that key against ExpectKey's, when
// given), every entry's canonical form and seq, ascending seqs after
// after_seq and within the checkpoint, the prev link of every two
// consecutive entries, and every entry's inclusion proof. Errors say what
// failed and where.
func verifySubset(data []byte, cfg verifyConfig) (Report, error) {
	rep := Report{Subset: true}
	var b subsetBundle
	if err := decodeStrict(data, "evidence subset", &b); err != nil {
		return rep, err
	}
	rep.PublicKey, rep.Scope = b.PublicKey, b.Scope
	if cfg.expectKey != "" && b.PublicKey != cfg.expectKey {
		return rep, errors.New("public key does not match expected")
	}
	cp, err := openCheckpoint([]byte(b.Checkpoint), b.PublicKey, "bundled key")
	if err != nil {
		return rep, err
	}
	rep.Origin, rep.CheckpointSize, rep.RootHash, rep.Checkpoints = cp.origin, cp.size, cp.root.String(), 1
	if b.AfterSeq < 0 || b.AfterSeq > cp.size {
		return rep, fmt.Errorf("evidence subset: after_seq %d outside 0..%d", b.AfterSeq, cp.size)
	}
	last := b.AfterSeq
	var lastHash string
	for i, se := range b.Entries {
		pos := i + 1
		switch {
		case se.Seq <= b.AfterSeq:
			return rep, fmt.Errorf("entry %d: seq %d is not after after_seq %d", pos, se.Seq, b.AfterSeq)
		case se.Seq <= last:
			return rep, fmt.Errorf("entry %d out of order: seq %d after seq %d", pos, se.Seq, last)
		case se.Seq > cp.size:
			return rep, fmt.Errorf("entry %d: seq %d is past the checkpoint (size %d): unsigned", pos, se.Seq, cp.size)
		}
		raw := []byte(se.Entry)
		e, err := ParseEntry(raw)
		if err != nil {
			return rep, fmt.Errorf("entry %d (seq %d): %w", pos, se.Seq, err)
		}
		if e.Seq != se.Seq {
			return rep, fmt.Errorf("entry %d: listed at seq %d but the entry says seq %d", pos, se.Seq, e.Seq)
		}
		if i > 0 && se.Seq == last+1 && e.Prev != lastHash {
			return rep, fmt.Errorf("entry seq %d: prev hash mismatch with entry seq %d", e.Seq, last)
		}
		if tlog.CheckRecord(se.Proof, cp.size, cp.root, se.Seq-1, tlog.RecordHash(raw)) != nil {
			return rep, fmt.Errorf("entry seq %d: inclusion proof does not lead to the checkpoint root (entry or proof altered)", se.Seq)
		}
		last, lastHash = se.Seq, e.Hash()
		rep.Entries++
		rep.InclusionProofs++
	}
	switch {
	case !b.More && b.NextAfter != 0:
		return rep, errors.New("evidence subset: next_after_seq without more")
	case b.More && (b.NextAfter < last || b.NextAfter > cp.size):
		return rep, fmt.Errorf("evidence subset: next_after_seq %d outside %d..%d", b.NextAfter, last, cp.size)
	}
	return rep, nil
}
