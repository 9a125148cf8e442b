package ledger

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestCheckEntryFastAgreesWithParseEntry: the allocation-free check accepts
// exactly what ParseEntry accepts, with the same seq and prev, on real
// entries and on entries damaged byte by byte and in their timestamps.
func TestCheckEntryFastAgreesWithParseEntry(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(raw []byte) {
		t.Helper()
		var prev [32]byte
		seq, ok := checkEntryFast(raw, &prev)
		e, err := ParseEntry(raw)
		if ok && err != nil {
			t.Fatalf("checkEntryFast accepts what ParseEntry refuses (%v): %s", err, raw)
		}
		if ok && (seq != e.Seq || fmt.Sprintf("%x", prev) != e.Prev) {
			t.Fatalf("checkEntryFast: seq %d prev %x, ParseEntry %d %s", seq, prev, e.Seq, e.Prev)
		}
		if !ok && err == nil {
			t.Fatalf("checkEntryFast refuses a well-formed entry: %s", raw)
		}
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 2000 {
		kind, data := benchData(i)
		body, err := canonicalData(data)
		if err != nil {
			t.Fatal(err)
		}
		ts := base.AddDate(rng.IntN(400)-200, 0, rng.IntN(366)).Add(time.Duration(rng.Int64N(int64(24 * time.Hour))))
		e := newEntry(int64(i+1), ts, kind, sha256Hex(i), body)
		check(e.Raw)
		for range 5 {
			raw := bytes.Clone(e.Raw)
			const alphabet = "0123456789abcdefz-:.TZ\"\\{} "
			raw[rng.IntN(len(raw))] = alphabet[rng.IntN(len(alphabet))]
			check(raw)
		}
		// Timestamps that look right but are not real instants, or not canonical.
		at := bytes.Index(e.Raw, []byte(`"ts":"`)) + len(`"ts":"`)
		for _, bad := range []string{"2026-02-29", "2024-02-29", "1900-02-29", "2000-02-29", "2026-04-31", "2026-13-01", "2026-00-10"} {
			raw := bytes.Clone(e.Raw)
			copy(raw[at:], bad)
			check(raw)
		}
		for _, bad := range []string{"T24:00:00.000Z", "T23:60:00.000Z", "T23:59:60.000Z", "T23:59:59.999Z"} {
			raw := bytes.Clone(e.Raw)
			copy(raw[at+10:], bad)
			check(raw)
		}
	}
}
