package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// exportSubset writes the subset of l selected by sel and returns it.
func exportSubset(t *testing.T, l *Ledger, sel Subset) ([]byte, SubsetInfo) {
	t.Helper()
	var buf bytes.Buffer
	info, err := l.ExportSubset(context.Background(), &buf, sel)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), info
}

// commandIs selects the entries whose data has command_id id.
func commandIs(id string) func([]byte) bool {
	return func(body []byte) bool {
		e, err := ParseEntry(body)
		var d struct {
			CommandID string `json:"command_id"`
		}
		return err == nil && json.Unmarshal(e.Data, &d) == nil && d.CommandID == id
	}
}

// seqIn selects the entries whose seq is in lo..hi.
func seqIn(lo, hi int64) func([]byte) bool {
	return func(body []byte) bool {
		e, err := ParseEntry(body)
		return err == nil && e.Seq >= lo && e.Seq <= hi
	}
}

func TestExportSubsetVerifies(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 60) // command ids cmd-a … cmd-z, in turn
	raw, info := exportSubset(t, l, Subset{Scope: "test cmd-c", Limit: 100, Match: commandIs("cmd-c")})
	if info.Entries != 3 || info.More || info.Size != 60 || info.LastSeq != 55 {
		t.Fatalf("info %+v, want 3 entries (seqs 3, 29, 55) of 60, no more", info)
	}
	rep, err := VerifyBundle(bytes.NewReader(raw), ExpectKey(l.PublicKey()))
	if err != nil {
		t.Fatalf("verify subset: %v\n%s", err, raw)
	}
	if !rep.Subset || rep.Entries != 3 || rep.InclusionProofs != 3 || rep.CheckpointSize != 60 || rep.Scope != "test cmd-c" {
		t.Fatalf("report %+v", rep)
	}
	// The full export's verifier refuses nothing it accepted before: a
	// full bundle still verifies as one.
	if rep, err := VerifyBundle(bytes.NewReader(exportBundle(t, l, 0))); err != nil || rep.Subset {
		t.Fatalf("full bundle: %+v, %v", rep, err)
	}
}

func TestExportSubsetPages(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 30)
	all := func([]byte) bool { return true }
	var seqs []int64
	after := int64(0)
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("paging does not end")
		}
		raw, info := exportSubset(t, l, Subset{AfterSeq: after, Limit: 7, Match: all})
		if info.Entries > 7 {
			t.Fatalf("page %d: %d entries, limit 7", page, info.Entries)
		}
		if _, err := VerifyBundle(bytes.NewReader(raw)); err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		var b subsetBundle
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		for _, e := range b.Entries {
			seqs = append(seqs, e.Seq)
		}
		if b.More != info.More {
			t.Fatalf("page %d: bundle says more=%v, info %v", page, b.More, info.More)
		}
		if !info.More {
			break
		}
		after = info.LastSeq
	}
	if len(seqs) != 30 {
		t.Fatalf("pages carried %d entries, want 30: %v", len(seqs), seqs)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("pages carried seqs %v, want 1..30 once each", seqs)
		}
	}
}

func TestExportSubsetRefusesBadSelection(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 3)
	for _, sel := range []Subset{
		{Limit: 0, Match: func([]byte) bool { return true }},
		{Limit: 1, AfterSeq: -1, Match: func([]byte) bool { return true }},
		{Limit: 1},
	} {
		if _, err := l.ExportSubset(context.Background(), &bytes.Buffer{}, sel); err == nil {
			t.Errorf("selection %+v accepted", sel)
		}
	}
}

// TestVerifySubsetTamper: a subset with an altered, reordered, moved,
// unsigned or re-signed entry fails, saying where.
func TestVerifySubsetTamper(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 40)
	// Consecutive entries (seqs 10..14) and scattered ones (cmd-a: 1, 27).
	match := func(b []byte) bool { return seqIn(10, 14)(b) || commandIs("cmd-a")(b) }
	valid, _ := exportSubset(t, l, Subset{Scope: "s", Limit: 100, Match: match})
	if _, err := VerifyBundle(bytes.NewReader(valid)); err != nil {
		t.Fatalf("untampered: %v", err)
	}
	var orig subsetBundle
	if err := json.Unmarshal(valid, &orig); err != nil {
		t.Fatal(err)
	}
	if got := len(orig.Entries); got != 7 {
		t.Fatalf("subset has %d entries, want 7 (1, 10..14, 27)", got)
	}
	otherSkey, otherVkey := testKey(t, "other")
	otherSigner, err := note.NewSigner(otherSkey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(*subsetBundle)
		raw    func([]byte) []byte
		opts   []VerifyOption
		want   string
	}{
		{name: "flip a byte in an entry", mutate: func(b *subsetBundle) {
			b.Entries[2].Entry = strings.Replace(b.Entries[2].Entry, `"i":10`, `"i":11`, 1)
		}, want: "entry seq 11: inclusion proof does not lead to the checkpoint root"},
		{name: "break canonical form", mutate: func(b *subsetBundle) {
			b.Entries[1].Entry = strings.Replace(b.Entries[1].Entry, `{"data":{`, `{"data": {`, 1)
		}, want: "entry 2 (seq 10): not in canonical form"},
		{name: "reorder two entries", mutate: func(b *subsetBundle) {
			b.Entries[2], b.Entries[3] = b.Entries[3], b.Entries[2]
		}, want: "entry 4 out of order: seq 11 after seq 12"},
		{name: "repeat an entry", mutate: func(b *subsetBundle) {
			b.Entries = append(b.Entries[:3:3], b.Entries[2:]...)
		}, want: "entry 4 out of order: seq 11 after seq 11"},
		{name: "list an entry at another seq", mutate: func(b *subsetBundle) {
			b.Entries[6].Seq = 28
		}, want: "entry 7: listed at seq 28 but the entry says seq 27"},
		{name: "entry before after_seq", mutate: func(b *subsetBundle) {
			b.AfterSeq = 5
		}, want: "entry 1: seq 1 is not after after_seq 5"},
		{name: "entry past the checkpoint", mutate: func(b *subsetBundle) {
			b.Entries[6].Seq = 41
		}, want: "entry 7: seq 41 is past the checkpoint (size 40): unsigned"},
		{name: "swap the proofs of two entries", mutate: func(b *subsetBundle) {
			b.Entries[0].Proof, b.Entries[6].Proof = b.Entries[6].Proof, b.Entries[0].Proof
		}, want: "entry seq 1: inclusion proof does not lead to the checkpoint root"},
		{name: "re-sign with another key", mutate: func(b *subsetBundle) {
			text := b.Checkpoint[:strings.Index(b.Checkpoint, "\n\n")+1]
			text = strings.Replace(text, "hearth/test-a", "hearth/test-other", 1)
			signed, err := note.Sign(&note.Note{Text: text}, otherSigner)
			if err != nil {
				t.Fatal(err)
			}
			b.Checkpoint, b.PublicKey = string(signed), otherVkey
		}, opts: []VerifyOption{ExpectKey(l.PublicKey())}, want: "public key does not match expected"},
		{name: "alter the checkpoint text", mutate: func(b *subsetBundle) {
			b.Checkpoint = strings.Replace(b.Checkpoint, "\n40\n", "\n41\n", 1)
		}, want: "checkpoint signature: invalid"},
		{name: "cut the bundle short", raw: func(v []byte) []byte { return v[:len(v)/2] }, want: "evidence subset: unexpected EOF"},
		{name: "an unknown field", raw: func(v []byte) []byte {
			return bytes.Replace(v, []byte(`"more":false`), []byte(`"more":false,"complete":true`), 1)
		}, want: `unknown field "complete"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := valid
			if c.mutate != nil {
				var b subsetBundle
				if err := json.Unmarshal(valid, &b); err != nil {
					t.Fatal(err)
				}
				c.mutate(&b)
				var err error
				if raw, err = json.Marshal(b); err != nil {
					t.Fatal(err)
				}
			}
			if c.raw != nil {
				raw = c.raw(raw)
			}
			_, err := VerifyBundle(bytes.NewReader(raw), c.opts...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestVerifySubsetPrevLink: of two consecutive entries, the second's prev
// must be the first's hash; it is checked before the second's proof, so
// the error names the broken link.
func TestVerifySubsetPrevLink(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 8)
	raw, _ := exportSubset(t, l, Subset{Limit: 10, Match: seqIn(4, 5)})
	var b subsetBundle
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	e := b.Entries[1].Entry
	at := strings.Index(e, `"prev":"`) + len(`"prev":"`)
	b.Entries[1].Entry = e[:at] + strings.Repeat("ab", 32) + e[at+64:]
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyBundle(bytes.NewReader(out)); err == nil || !strings.Contains(err.Error(), "entry seq 5: prev hash mismatch with entry seq 4") {
		t.Fatalf("got %v, want a prev hash mismatch at seq 5", err)
	}
	// Entries that are not neighbours carry no link to check.
	raw3, _ := exportSubset(t, l, Subset{Limit: 10, Match: func(b []byte) bool { return seqIn(3, 3)(b) || seqIn(5, 5)(b) }})
	if _, err := VerifyBundle(bytes.NewReader(raw3)); err != nil {
		t.Fatalf("non-consecutive entries: %v", err)
	}
}

// TestExportSubsetMaxScan: with MaxScan, a sparse selection is read in
// parts that each look at no more than MaxScan entries (some parts hold
// none), chained by next_after_seq, together the whole selection.
func TestExportSubsetMaxScan(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 30) // cmd-c at seqs 3 and 29
	var seqs []int64
	after, parts := int64(0), 0
	for {
		if parts++; parts > 10 {
			t.Fatal("parts do not end")
		}
		looked := 0
		match := commandIs("cmd-c")
		raw, info := exportSubset(t, l, Subset{AfterSeq: after, Limit: 10, MaxScan: 5, Match: func(b []byte) bool { looked++; return match(b) }})
		if looked > 5 {
			t.Fatalf("part %d looked at %d entries, MaxScan 5", parts, looked)
		}
		if _, err := VerifyBundle(bytes.NewReader(raw)); err != nil {
			t.Fatalf("part %d: %v\n%s", parts, err, raw)
		}
		var b subsetBundle
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		for _, e := range b.Entries {
			seqs = append(seqs, e.Seq)
		}
		if !info.More {
			break
		}
		if b.NextAfter != info.LastSeq || info.LastSeq <= after {
			t.Fatalf("part %d: next_after_seq %d, info %+v, after %d", parts, b.NextAfter, info, after)
		}
		after = info.LastSeq
	}
	if parts != 6 || len(seqs) != 2 || seqs[0] != 3 || seqs[1] != 29 {
		t.Fatalf("%d parts carried seqs %v, want 6 parts with 3 and 29", parts, seqs)
	}
	// next_after_seq is checked: before the last entry, or without more.
	raw, _ := exportSubset(t, l, Subset{Limit: 1, Match: commandIs("cmd-c")})
	for from, to := range map[string]string{
		`"next_after_seq":3`:             `"next_after_seq":2`,
		`"more":true,"next_after_seq":3`: `"more":false,"next_after_seq":3`,
	} {
		bad := bytes.Replace(raw, []byte(from), []byte(to), 1)
		if bytes.Equal(bad, raw) {
			t.Fatalf("no %s in %s", from, raw)
		}
		if _, err := VerifyBundle(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "next_after_seq") {
			t.Errorf("%s: %v, want an error naming next_after_seq", to, err)
		}
	}
}
