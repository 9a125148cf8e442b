package dispatchtest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// State returns the state of future id, failing the test when there is
// no such future.
func State(t testing.TB, db *store.DB, id string) string {
	t.Helper()
	var st string
	if err := db.R.QueryRow(`SELECT state FROM futures WHERE id = ?`, id).Scan(&st); err != nil {
		t.Fatalf("read the state of future %s: %v", id, err)
	}
	return st
}

// Route returns the stored route of future id, "" when there is no such
// future.
func Route(t testing.TB, db *store.DB, id string) string {
	t.Helper()
	var route string
	err := db.R.QueryRow(`SELECT route FROM futures WHERE id = ?`, id).Scan(&route)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatalf("read the route of future %s: %v", id, err)
	}
	return route
}

// Count returns how many futures db holds.
func Count(t testing.TB, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM futures`).Scan(&n); err != nil {
		t.Fatalf("count the futures: %v", err)
	}
	return n
}

// InsertRunning records a detached machine.exec future id of route as
// running since now, as one whose result has not arrived yet.
func InsertRunning(t testing.TB, db *store.DB, id, route string) {
	t.Helper()
	now := time.Now().UnixMilli()
	InsertFutures(t, db.W, Future{ID: id, Route: route, Primitive: "machine.exec", State: "running", Detached: true, CreatedAt: now, StartedAt: now})
}

// Future is a future's row, as InsertFutures writes it.
type Future struct {
	ID, Route, Primitive string
	// Input is the call's arguments as JSON; "" writes {}.
	Input string
	// State is queued, waiting, running, completed, failed, blocked or
	// cancelled.
	State string
	// Result is the envelope's JSON once the future ended; "" before.
	Result string
	// CommandID is the journaled command the future runs as; "" for none.
	CommandID string
	// Class is the scheduled class of a future that waits its turn
	// ("job"), with RunAt and OnInterrupt; "" for a call's own future.
	Class, OnInterrupt string
	Detached           bool
	// CreatedAt, StartedAt, FinishedAt and RunAt are unix milliseconds;
	// StartedAt and FinishedAt 0 before the future started or ended.
	CreatedAt, StartedAt, FinishedAt, RunAt int64
}

// InsertFutures writes fs, failing the test on an error. Many futures
// are best written through a transaction (ex a *sql.Tx).
func InsertFutures(t testing.TB, ex storetest.Execer, fs ...Future) {
	t.Helper()
	ctx := context.Background()
	st, err := ex.PrepareContext(ctx, `INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, result, command_id,
		class, run_at, on_interrupt, created_at, started_at, finished_at) VALUES (?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatalf("insert futures: %v", err)
	}
	defer st.Close()
	for _, f := range fs {
		input := f.Input
		if input == "" {
			input = "{}"
		}
		var runAt any
		if f.Class != "" {
			runAt = f.RunAt
		}
		if _, err := st.ExecContext(ctx, f.ID, f.Route, f.Primitive, input, f.State, f.Detached, storetest.NullText(f.Result), storetest.NullText(f.CommandID),
			storetest.NullText(f.Class), runAt, storetest.NullText(f.OnInterrupt), f.CreatedAt, storetest.NullTime(f.StartedAt), storetest.NullTime(f.FinishedAt)); err != nil {
			t.Fatalf("insert future %s: %v", f.ID, err)
		}
	}
}

// InsertDeps records that future id waits for each of deps.
func InsertDeps(t testing.TB, ex storetest.Execer, id string, deps ...string) {
	t.Helper()
	for _, d := range deps {
		if _, err := ex.ExecContext(context.Background(), `INSERT INTO future_deps(future_id, dep_id) VALUES (?, ?)`, id, d); err != nil {
			t.Fatalf("make future %s wait for %s: %v", id, d, err)
		}
	}
}

// CompleteUnfinished ends every future not yet ended as completed (at 1
// ms), as though each had run: what referred to something through an
// unfinished future no longer does.
func CompleteUnfinished(t testing.TB, ex storetest.Execer) {
	t.Helper()
	if _, err := ex.ExecContext(context.Background(), `UPDATE futures SET state = 'completed', finished_at = 1 WHERE finished_at IS NULL`); err != nil {
		t.Fatalf("complete the unfinished futures: %v", err)
	}
}

// InputLen returns how many bytes of input future id keeps (the storage
// budget drops a finished future's input), failing the test when there
// is no such future.
func InputLen(t testing.TB, db *store.DB, id string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT length(input) FROM futures WHERE id = ?`, id).Scan(&n); err != nil {
		t.Fatalf("read the input of future %s: %v", id, err)
	}
	return n
}

// CountOfCommand returns how many futures run as command id (a retried
// call with the same command id must make no second one).
func CountOfCommand(t testing.TB, db *store.DB, commandID string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM futures WHERE command_id = ?`, commandID).Scan(&n); err != nil {
		t.Fatalf("count the futures of command %s: %v", commandID, err)
	}
	return n
}

// Running returns the futures of class running now, each with the
// command id it runs as ("" when it has none).
func Running(t testing.TB, db *store.DB, class string) map[string]string {
	t.Helper()
	rows, err := db.R.Query(`SELECT id, COALESCE(command_id, '') FROM futures WHERE class = ? AND state = 'running'`, class)
	if err != nil {
		t.Fatalf("read the running futures of %s: %v", class, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, cmd string
		if err := rows.Scan(&id, &cmd); err != nil {
			t.Fatalf("read the running futures of %s: %v", class, err)
		}
		out[id] = cmd
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the running futures of %s: %v", class, err)
	}
	return out
}
