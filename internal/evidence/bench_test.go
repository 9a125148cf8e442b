package evidence

import (
	"context"
	"fmt"
	"testing"

	"github.com/hearth-dev/hearth/internal/ledger"
)

// BenchmarkReadEvidence reads one conversation's evidence (its 40 entries)
// from a ledger of 20,000 entries: the read scans the ledger after
// after_seq and proves each selected entry.
func BenchmarkReadEvidence(b *testing.B) {
	f := newFixtureTB(b)
	ctx := context.Background()
	for i := range 20_000 {
		if i%1000 == 0 {
			f.command(b, routeA, fmt.Sprintf("cmd_a%d", i), int64(i))
			continue
		}
		if _, err := f.led.Append(ctx, ledger.KindIntent, map[string]any{"command_id": fmt.Sprintf("cmd_o%d", i), "route": routeB}); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(f.gov, f.led, f.art, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		c, err := s.Read(ctx, routeA, EvidenceURI(routeA, 0))
		if err != nil {
			b.Fatal(err)
		}
		if c.Meta["hearth/entries"] != 40 {
			b.Fatalf("%v entries", c.Meta["hearth/entries"])
		}
	}
}
