package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// One approval, one result: a model that is told "pending, waiting for a
// permit" often calls the same thing again once the operator has said
// "Allow once", under a new command id. That repeat is the same call — the
// same primitive and input digest in the same conversation — and is
// answered with the approved call's outcome (or, while the approved call
// still runs, its pending answer), never with a second permit for work
// already approved. Before the operator decides, an identical call is a
// call of its own (the operator may allow one and deny the other).

// replayRepeat answers a new command that repeats, in a's conversation, a
// call whose permit the operator approved within the permit lifetime. The
// approved call's outcome answers one repeat only — recorded as a command
// of the repeat's own id that points at the approved call's future (a
// retry of the repeat replays it) — and a later repeat is a new call. A
// denied, expired or withdrawn permit is not repeated: asking again is a
// new request for the operator.
func (g *Governor) replayRepeat(ctx context.Context, a *callpath.Admission) (*callpath.Envelope, error) {
	if a.Scheduled || a.Approved || strings.Contains(a.CommandID, "/") {
		// A job's attempt, an approved call itself, or a call a scatter
		// or recipe made (its command id derives from its parent's, which
		// replays it): not a model's repeat.
		return nil, nil
	}
	if k, _ := risk.KindOf(a.Spec.Name()); k == risk.KindSee {
		// Seeing the screen or the clipboard: the approval allows such
		// calls for the rest of the conversation, so the repeat runs and
		// sees what is there now (a screenshot's picture is not kept to
		// be answered again).
		return nil, nil
	}
	// The newest such permit whose future the engine still has.
	cands, err := g.approvedRepeats(ctx, a.Route, a.Spec.Name(), a.Digest, g.now().Add(-g.PermitTTL))
	if err != nil {
		return nil, fmt.Errorf("look up an earlier permit for this call: %w", err)
	}
	var pid, futureID, commandID, futureState string
	var result sql.NullString
	for _, c := range cands {
		f, ok, err := g.Futures.Future(ctx, c.FutureID)
		if err != nil {
			return nil, fmt.Errorf("look up an earlier permit for this call: %w", err)
		}
		if ok {
			pid, futureID, commandID, futureState, result = c.ID, c.FutureID, c.CommandID, f.State, f.Result
			break
		}
	}
	if pid == "" {
		return nil, nil
	}
	pending := &callpath.Envelope{State: primitive.StatePending, Primitive: a.Spec.Name(), FutureID: futureID, PermitID: pid,
		CommandID: commandID, Replayed: true}
	if !result.Valid || !callpath.Settled(futureState) {
		pending.Result = map[string]any{"approved": true, "note": "the operator approved this call; it is running, and its result will be the answer to the next identical call, or arrive"}
		return pending, nil
	}
	var env callpath.Envelope
	if err := json.Unmarshal([]byte(result.String), &env); err != nil {
		return nil, fmt.Errorf("decode the outcome of approved call %s: %w", commandID, err)
	}
	env.Replayed, env.Arrivals, env.FutureID, env.PermitID, env.CommandID = true, nil, futureID, pid, commandID
	stored, err := json.Marshal(&env)
	if err != nil {
		return nil, fmt.Errorf("encode the outcome of approved call %s: %w", commandID, err)
	}
	now := g.now().UnixMilli()
	// Only the first repeat gets it: a concurrent one that lost the race
	// finds the repeat recorded and is a new call.
	var answered bool
	err = g.DB.InTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM commands WHERE future_id = ? AND command_id <> ?`, futureID, commandID).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		res, err := g.DB.TxExec(ctx, tx, `INSERT INTO commands(command_id, route, primitive, input_sha256, future_id, state, envelope, created_at, finished_at)
			VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(command_id) DO NOTHING`,
			a.CommandID, a.Route, a.Spec.Name(), a.Digest, futureID, env.State, string(stored), now, now)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		answered = n == 1
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record the answer to a repeat of approved call %s: %w", commandID, err)
	}
	if !answered {
		return nil, nil
	}
	return &env, nil
}
