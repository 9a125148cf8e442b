package runs

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// TestMigrationMovesCallHistory: a database whose call history is rows of
// events (schema 15) keeps each conversation's calls, in order, in
// call_history after migration 16; its other events stay, and events is
// then append-only without exception.
func TestMigrationMovesCallHistory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	raw := storetest.AtVersion(t, path, 15)
	exec := raw.MustExec
	want := map[string][]string{}
	for i := range 300 {
		route := []string{"r:a", "r:b", "r:a"}[i%3]
		sig := fmt.Sprintf("t.op%d", i)
		want[route] = append(want[route], sig)
		exec(`INSERT INTO events(at, route, kind, entity_id) VALUES (?,?,'call',?)`, int64(1000+i), route, sig)
		if i%100 == 0 {
			exec(`INSERT INTO events(at, route, kind, entity_id) VALUES (?,'','run.created',?)`, int64(1000+i), fmt.Sprintf("run_%d", i))
		}
	}
	raw.Close()

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ev := &Events{DB: db}
	for route, sigs := range want {
		h, err := ev.History(ctx, route, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h, sigs) {
			t.Fatalf("%s after migration: %v, want %v", route, h, sigs)
		}
	}
	// The history goes on from where it was.
	ev.record(ctx, []callRec{{at: 5000, route: "r:b", sig: "t.next"}})
	if h, _ := ev.History(ctx, "r:b", 2); !slices.Equal(h, []string{want["r:b"][len(want["r:b"])-1], "t.next"}) {
		t.Fatalf("r:b after a new call: %v", h)
	}
	var calls, others int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM events WHERE kind = 'call'`).Scan(&calls); err != nil {
		t.Fatal(err)
	}
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM events WHERE kind = 'run.created'`).Scan(&others); err != nil {
		t.Fatal(err)
	}
	if calls != 0 || others != 3 {
		t.Fatalf("events after migration: %d call rows (want 0), %d run.created (want 3)", calls, others)
	}
	for _, kind := range []string{"run.created", "call"} {
		if _, err := db.W.ExecContext(ctx, `INSERT INTO events(at, kind) VALUES (1, ?)`, kind); err != nil {
			t.Fatal(err)
		}
		if _, err := db.W.ExecContext(ctx, `DELETE FROM events WHERE kind = ?`, kind); err == nil {
			t.Fatalf("an event of kind %s was deleted", kind)
		}
	}
}
