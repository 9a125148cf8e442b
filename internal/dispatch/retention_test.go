package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// TestLiveQueriesUseIndexes checks that every query of LiveText and Unfinished reads
// through an index (a partial one, where the table keeps its finished
// history): a plain "SCAN table" would read every finished row each batch
// of the artifact prune, with the write connection held.
func TestLiveQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append(liveQueries, unfinishedQuery) {
		plan, err := db.QueryPlan(ctx, q, 0)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN ") && !strings.Contains(d, " USING ") {
				t.Errorf("query scans a whole table (%s):\n%s\nplan: %q", d, q, plan)
			}
		}
	}
}
