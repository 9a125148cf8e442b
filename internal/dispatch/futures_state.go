package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// A future's states and the moves between them, each written once:
//
//	queued → running           toRunning (a call's future, or a scheduled attempt, counted)
//	running → permit           toPermit (the call needs the operator's permit)
//	running → held             toHeld (a scheduled attempt an UNKNOWN refuses)
//	running, permit,
//	waiting or held → queued   toQueued (a claim undone, an approval, dependencies met,
//	                           an UNKNOWN reconciled)
//	not yet running → cancelled  toCancelled (task.cancel before it ran)
//	not ended → ended          toEnded (its outcome: completed, failed, blocked, cancelled…)
//
// Every UPDATE of the futures table is here (the ownership test in
// internal/store refuses one in another file of the package); the callers
// decide when a move happens and what goes with it in the same commit.

// futureWrite is where a move writes: inside tx (through db's prepared
// writer statements when db is set too), or, with no tx, alone on db's
// writer connection.
type futureWrite struct {
	db *store.DB
	tx *sql.Tx
}

// alone writes on db's writer, outside any transaction.
func alone(db *store.DB) futureWrite { return futureWrite{db: db} }

// inTx writes inside tx.
func inTx(tx *sql.Tx) futureWrite { return futureWrite{tx: tx} }

// exec runs query where w writes and returns how many futures it changed.
func (w futureWrite) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if w.tx == nil {
		res, err = w.db.W.ExecContext(ctx, query, args...)
	} else {
		res, err = txExec(ctx, w.db, w.tx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// toRunning claims queued future id at at. A call's future is claimed
// with attempt "" and keeps its command id; a scheduled attempt is
// counted and runs as command attempt.
func toRunning(ctx context.Context, w futureWrite, id string, at time.Time, attempt string) (bool, error) {
	count, cmd := 0, sql.NullString{}
	if attempt != "" {
		count, cmd = 1, sql.NullString{String: attempt, Valid: true}
	}
	n, err := w.exec(ctx, `UPDATE futures SET state = 'running', attempts = attempts + ?, started_at = ?, command_id = COALESCE(?, command_id) WHERE id = ? AND state = 'queued'`,
		count, at.UnixMilli(), cmd, id)
	return n > 0, err
}

// errNotRunning says a future to park was no longer running.
var errNotRunning = errors.New("the future is no longer running")

// toPermit parks running future id for a permit, in tx, or fails with
// errNotRunning. uncount takes back a scheduled attempt's count: the
// attempt runs again once approved.
func toPermit(ctx context.Context, tx *sql.Tx, id string, uncount bool) error {
	n, err := inTx(tx).exec(ctx, `UPDATE futures SET state = 'permit', attempts = attempts - ?, started_at = CASE WHEN ? THEN NULL ELSE started_at END WHERE id = ? AND state = 'running'`,
		boolInt(uncount), boolInt(uncount), id)
	if err != nil {
		return fmt.Errorf("park future %s: %w", id, err)
	}
	if n == 0 {
		return errNotRunning
	}
	return nil
}

// toHeld holds running scheduled attempt id for an UNKNOWN, in tx: the
// attempt is not counted. It fails with errNotRunning when id no longer
// runs.
func toHeld(ctx context.Context, tx *sql.Tx, id string) error {
	n, err := inTx(tx).exec(ctx, `UPDATE futures SET state = 'held', attempts = attempts - 1, started_at = NULL WHERE id = ? AND state = 'running'`, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotRunning
	}
	return nil
}

// queueMove says which futures a move to queued takes, and what else it
// records. Exactly one of id, heldOf and dependentsOf is set.
type queueMove struct {
	// id is one future, moved from the state from (running, permit or
	// waiting).
	id, from string
	// heldOf is a class: every future of it held for an UNKNOWN.
	heldOf string
	// dependentsOf is a completed future: its waiting scheduled
	// dependents all of whose dependencies completed.
	dependentsOf string
	// From running: uncount takes back the attempt's count (it never
	// started), interrupted counts an interruption.
	uncount, interrupted bool
	// From waiting: the input with its references resolved, and its
	// digest (a nil input keeps the stored one).
	input  []byte
	digest string
}

// releaseQuery queues the waiting scheduled dependents of a completed
// future whose dependencies all completed. The unary + keeps SQLite from
// reaching them through futures_state (every waiting future) rather than
// through the future's own dependents (future_deps_dep).
const releaseQuery = `UPDATE futures SET state = 'queued' WHERE id IN (SELECT future_id FROM future_deps WHERE dep_id = ?)
	AND +state = 'waiting' AND +class IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM future_deps fd CROSS JOIN futures g ON g.id = fd.dep_id WHERE fd.future_id = futures.id AND g.state != 'completed')`

// toQueued queues the futures m names and returns how many it moved.
func toQueued(ctx context.Context, w futureWrite, m queueMove) (int64, error) {
	switch {
	case m.dependentsOf != "":
		return w.exec(ctx, releaseQuery, m.dependentsOf)
	case m.heldOf != "":
		return w.exec(ctx, `UPDATE futures SET state = 'queued' WHERE state = 'held' AND class = ?`, m.heldOf)
	case m.from != "running" && m.from != "permit" && m.from != StateWaiting:
		return 0, fmt.Errorf("queue future %s: no move from %q", m.id, m.from)
	}
	// One future: a running one forgets when it started; a waiting one
	// may take its resolved input.
	var input, digest any
	if m.input != nil {
		input, digest = string(m.input), m.digest
	}
	return w.exec(ctx, `UPDATE futures SET state = 'queued', attempts = MAX(attempts - ?, 0), interruptions = interruptions + ?,
		started_at = CASE WHEN state = 'running' THEN NULL ELSE started_at END,
		input = COALESCE(?, input), input_sha256 = COALESCE(?, input_sha256) WHERE id = ? AND state = ?`,
		boolInt(m.uncount), boolInt(m.interrupted), input, digest, m.id, m.from)
}

// toCancelled cancels future id of route before it ran (queued, waiting,
// parked for a permit or held), in tx, with payload as its result; false
// when it had started or ended meanwhile.
func toCancelled(ctx context.Context, tx *sql.Tx, id, route string, payload []byte, at time.Time) (bool, error) {
	n, err := inTx(tx).exec(ctx, `UPDATE futures SET state = 'cancelled', result = ?, finished_at = ? WHERE id = ? AND route = ? AND state IN ('queued', 'waiting', 'permit', 'held')`,
		string(payload), at.UnixMilli(), id, route)
	return n > 0, err
}

// toEnded records, in tx (through db's prepared statements when db is
// set), an unended future's terminal state envState with payload as its
// result; false when it had already ended (cancelled meanwhile).
func toEnded(ctx context.Context, db *store.DB, tx *sql.Tx, id, envState string, payload []byte, at time.Time) (bool, error) {
	n, err := futureWrite{db: db, tx: tx}.exec(ctx, `UPDATE futures SET state = ?, result = ?, finished_at = ? WHERE id = ? AND state IN ('queued','running','permit','waiting','held')`,
		futureState(envState), string(payload), at.UnixMilli(), id)
	return n > 0, err
}

// markUnknown records that interrupted future id's outcome is unknown,
// counting interruptions more; its state is ended by toEnded.
func markUnknown(ctx context.Context, w futureWrite, id string, interruptions int) error {
	_, err := w.exec(ctx, `UPDATE futures SET outcome = 'unknown', interruptions = interruptions + ? WHERE id = ?`, interruptions, id)
	return err
}

// emptyFinishedInputs empties, in one bounded pass (up to 1000 futures),
// the stored input of finished futures larger than kept bytes (no change
// of state).
func emptyFinishedInputs(ctx context.Context, w futureWrite, kept int) (int64, error) {
	return w.exec(ctx, `UPDATE futures SET input = '{}'
		WHERE finished_at IS NOT NULL AND length(input) > ? AND rowid IN (
			SELECT rowid FROM futures WHERE finished_at IS NOT NULL AND length(input) > ? LIMIT 1000)`, kept, kept)
}
