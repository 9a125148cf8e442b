package artifacts

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// TestLiveQueriesUseIndexes checks that every live-row query of Prune
// reads through an index (a partial one, for the tables that keep their
// finished history): a plain "SCAN table" would read every finished
// future, job or run each batch, with the write connection held.
func TestLiveQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range liveQueries {
		rows, err := db.R.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, 0)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN ") && !strings.Contains(d, " USING ") {
				t.Errorf("query scans a whole table (%s):\n%s\nplan: %q", d, q, plan)
			}
		}
	}
}
