package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// TestFutureOfCommandUsesItsIndex: the replay's lookup of a command id's
// future is an index search, not a scan of every future.
func TestFutureOfCommandUsesItsIndex(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan, err := db.QueryPlan(ctx, futureOfCommandQuery, "cmd")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "; "), "USING INDEX futures_command") {
		t.Errorf("plan %q does not use futures_command", plan)
	}
}
