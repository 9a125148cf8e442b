package governtest

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// Command is a journaled command's row, as InsertCommand writes it.
type Command struct {
	ID, Route, Primitive, InputSHA256, FutureID, State string
	// Envelope is the terminal envelope's JSON; "" while the command runs.
	Envelope string
	// CreatedAt and FinishedAt are unix milliseconds; FinishedAt 0 while
	// the command runs.
	CreatedAt, FinishedAt int64
}

// InsertCommand writes c as the governor journals a command (its row
// only: the ledger's entries are the caller's), failing the test on an
// error. ex may be a database an earlier Hearth left (its commands table
// has had these columns from the start).
func InsertCommand(t testing.TB, ex storetest.Execer, c Command) {
	t.Helper()
	_, err := ex.ExecContext(context.Background(), `INSERT INTO commands(command_id, route, primitive, input_sha256, future_id, state, envelope, created_at, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Route, c.Primitive, c.InputSHA256, c.FutureID, c.State, storetest.NullText(c.Envelope), c.CreatedAt, storetest.NullTime(c.FinishedAt))
	if err != nil {
		t.Fatalf("insert command %s: %v", c.ID, err)
	}
}

// Permit is a permit's row, as InsertPermit writes it.
type Permit struct {
	ID, Route, Primitive, Input, InputSHA256, FutureID, CommandID string
	// State is pending, approved, denied or expired.
	State string
	// CreatedAt, ExpiresAt and DecidedAt are unix milliseconds; DecidedAt
	// 0 while the permit waits.
	CreatedAt, ExpiresAt, DecidedAt int64
}

// InsertPermits writes ps as the governor asks for permits (and as the
// operator decided them, by their State), failing the test on an error.
// ex may be a database an earlier Hearth left (its permits table has had
// these columns from the start).
func InsertPermits(t testing.TB, ex storetest.Execer, ps ...Permit) {
	t.Helper()
	ctx := context.Background()
	st, err := ex.PrepareContext(ctx, `INSERT INTO permits(id, route, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at, decided_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatalf("insert permits: %v", err)
	}
	defer st.Close()
	for _, p := range ps {
		if _, err := st.ExecContext(ctx, p.ID, p.Route, p.Primitive, p.Input, p.InputSHA256, p.FutureID, p.CommandID, p.State,
			p.CreatedAt, p.ExpiresAt, storetest.NullTime(p.DecidedAt)); err != nil {
			t.Fatalf("insert permit %s: %v", p.ID, err)
		}
	}
}

// SetPermitStates puts every permit in state (pending, approved, denied,
// expired), as though the operator had decided them all.
func SetPermitStates(t testing.TB, ex storetest.Execer, state string) {
	t.Helper()
	if _, err := ex.ExecContext(context.Background(), `UPDATE permits SET state = ?`, state); err != nil {
		t.Fatalf("set every permit %s: %v", state, err)
	}
}

// SetSetting writes value under key in the governor's settings (estop,
// queue_held, policy…) behind the governor's back, as a Hearth stopped
// with that setting would have left it; a running governor does not
// notice until it reads the setting again.
func SetSetting(t testing.TB, ex storetest.Execer, key, value string) {
	t.Helper()
	_, err := ex.ExecContext(context.Background(), `INSERT INTO settings(key, value) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
}

// MarkUnknownReconciled marks the UNKNOWN of command id reconciled in its
// row alone, without what reconciling it also does (releasing what the
// UNKNOWN held): what a crash between the two leaves behind.
func MarkUnknownReconciled(t testing.TB, ex storetest.Execer, id string) {
	t.Helper()
	res, err := ex.ExecContext(context.Background(), `UPDATE unknowns SET reconciled_at = 1, reconciled_by = 'test' WHERE command_id = ?`, id)
	if err != nil {
		t.Fatalf("mark the UNKNOWN of %s reconciled: %v", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("mark the UNKNOWN of %s reconciled: %d rows (%v)", id, n, err)
	}
}
