package storetest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// ReadThroughIndexes fails t for each of queries (no arguments bound)
// whose plan on a freshly migrated database reads a whole table: a plain
// "SCAN table", where the table keeps its finished history, would read
// every finished row each time the query runs.
func ReadThroughIndexes(t *testing.T, queries ...string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range queries {
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
