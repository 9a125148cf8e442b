package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Command-id replay: a repeat of a command id answers what the first call
// was told, wherever that call has got to.

// Replay implements callpath.Governor. A command id is looked up where
// each stage of a call leaves it: the command record Begin writes with the
// intent; before that, a permit request (a parked call); before that, the
// durable future of a detached call that is queued, waiting, or claimed
// but not yet journaled. Without the last, a retry of a queued call ran it
// as a new call and the queued one then ended in a conflict.
func (g *Governor) Replay(ctx context.Context, a *callpath.Admission) (*callpath.Envelope, error) {
	var route, prim, digest, futureID, state string
	var envelope sql.NullString
	err := g.DB.R.QueryRowContext(ctx, `SELECT route, primitive, input_sha256, future_id, state, envelope FROM commands WHERE command_id = ?`, a.CommandID).
		Scan(&route, &prim, &digest, &futureID, &state, &envelope)
	if errors.Is(err, sql.ErrNoRows) {
		// A permit request registers the command before Begin does.
		env, err := g.replayPermit(ctx, a)
		if env != nil || err != nil {
			return env, err
		}
		if env, err = g.replayFuture(ctx, a); env != nil || err != nil {
			return env, err
		}
		// A new command id: it may still repeat an approved call.
		return g.replayRepeat(ctx, a)
	}
	if err != nil {
		return nil, fmt.Errorf("look up command %s: %w", a.CommandID, err)
	}
	if route != a.Route || prim != a.Spec.Name() || digest != a.Digest {
		return nil, primitive.Conflict("command_id_reused", "command id %s was already used with a different input or primitive; send a new command id", a.CommandID).
			WithDetails(map[string]any{"command_id": a.CommandID})
	}
	if envelope.Valid {
		return g.replayStored(ctx, a, envelope.String, futureID)
	}
	return g.replayRunning(ctx, a, prim, futureID)
}

// replayStored answers a command whose outcome is stored. A call that had
// a durable future (detached, or slower than the inline budget) is
// answered with that future's id, as its first answer was; one answered
// inline never had a future.
func (g *Governor) replayStored(ctx context.Context, a *callpath.Admission, stored, futureID string) (*callpath.Envelope, error) {
	var env callpath.Envelope
	if err := json.Unmarshal([]byte(stored), &env); err != nil {
		return nil, fmt.Errorf("decode stored outcome of %s: %w", a.CommandID, err)
	}
	env.Replayed = true
	env.Arrivals = nil
	exists, err := g.futureExists(ctx, futureID)
	if err != nil {
		return nil, fmt.Errorf("look up the future of command %s: %w", a.CommandID, err)
	}
	if exists {
		env.FutureID = futureID
	}
	return &env, nil
}

func (g *Governor) futureExists(ctx context.Context, id string) (bool, error) {
	_, ok, err := g.Futures.Future(ctx, id)
	return ok, err
}

// replayRunningMargin is how long past the inline budget a retry waits
// for a running command's future to appear; replayRunningPoll is how often
// it looks.
var (
	replayRunningMargin = 2 * time.Second
	replayRunningPoll   = 20 * time.Millisecond
)

// replayRunning answers a command that began and has no outcome yet. Its
// future exists unless the first call is still racing its inline budget:
// then, within the budget, it either answers inline (and stores its
// outcome) or becomes that future. The retry waits for whichever comes
// first, so it never names a future that will not exist. A call that can
// never become a future (a primitive that always answers inline; anonymous
// calls carry no command id) and one that outlasts the wait are answered
// blocked with code in_progress: retry shortly.
func (g *Governor) replayRunning(ctx context.Context, a *callpath.Admission, prim, futureID string) (*callpath.Envelope, error) {
	inProgress := primitive.Blocked("in_progress", "command %s is still running; retry it shortly", a.CommandID).
		WithDetails(map[string]any{"command_id": a.CommandID})
	wait := replayRunningMargin
	wait += g.InlineBudget
	if a.Spec.Inline {
		wait = 0
	}
	pending := &callpath.Envelope{State: primitive.StatePending, Primitive: prim, FutureID: futureID, CommandID: a.CommandID, Replayed: true}
	deadline := time.Now().Add(wait)
	for {
		exists, err := g.futureExists(ctx, futureID)
		if err != nil {
			return nil, fmt.Errorf("look up the future of command %s: %w", a.CommandID, err)
		}
		if exists {
			return pending, nil
		}
		var envelope sql.NullString
		err = g.DB.R.QueryRowContext(ctx, `SELECT envelope FROM commands WHERE command_id = ?`, a.CommandID).Scan(&envelope)
		if err != nil {
			return nil, fmt.Errorf("look up command %s: %w", a.CommandID, err)
		}
		if envelope.Valid {
			return g.replayStored(ctx, a, envelope.String, futureID)
		}
		if !time.Now().Before(deadline) {
			return nil, inProgress
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(replayRunningPoll):
		}
	}
}

// replayFuture answers a command id that has a durable future but no
// command record: the future has not journaled its intent yet (queued,
// waiting for dependencies, or claimed and about to begin), or it ended
// without ever beginning (cancelled before it started, refused when it was
// about to start). The same input gets that future — pending with its id,
// or its stored terminal envelope — and never a second run; another input
// or primitive under the id, or another conversation, is a conflict. When
// several futures carry the id (left by a version of Hearth without this
// lookup), the first one is the command.
func (g *Governor) replayFuture(ctx context.Context, a *callpath.Admission) (*callpath.Envelope, error) {
	f, ok, err := g.Futures.FutureOfCommand(ctx, a.CommandID)
	if err != nil {
		return nil, fmt.Errorf("look up the future of command %s: %w", a.CommandID, err)
	}
	if !ok {
		return nil, nil
	}
	id, route, prim, digest, state, result := f.ID, f.Route, f.Primitive, f.InputSHA256, f.State, f.Result
	if route != a.Route || prim != a.Spec.Name() || digest != a.Digest {
		// The future is not named: it may belong to another conversation.
		return nil, primitive.Conflict("command_id_reused", "command id %s is already in use (a call not started yet) with a different input or primitive; send a new command id", a.CommandID).
			WithDetails(map[string]any{"command_id": a.CommandID})
	}
	if result.Valid {
		var env callpath.Envelope
		if err := json.Unmarshal([]byte(result.String), &env); err != nil {
			return nil, fmt.Errorf("decode stored outcome of %s: %w", a.CommandID, err)
		}
		env.Replayed, env.Arrivals, env.FutureID, env.CommandID = true, nil, id, a.CommandID
		return &env, nil
	}
	env := &callpath.Envelope{State: primitive.StatePending, Primitive: prim, FutureID: id, CommandID: a.CommandID, Replayed: true}
	if callpath.Settled(state) {
		env.State = state
	}
	return env, nil
}

// Journaled reports whether the intent of commandID was journaled for
// futureID. Begin writes the command record and the intent entry in one
// transaction before the primitive runs, so a side-effecting future whose
// command has no record naming it provably never ran (dispatch asks at
// start-up about futures a previous process had claimed).
func (g *Governor) Journaled(ctx context.Context, commandID, futureID string) (bool, error) {
	var fut string
	err := g.DB.R.QueryRowContext(ctx, `SELECT future_id FROM commands WHERE command_id = ?`, commandID).Scan(&fut)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up command %s: %w", commandID, err)
	}
	return fut == futureID, nil
}

func (g *Governor) replayPermit(ctx context.Context, a *callpath.Admission) (*callpath.Envelope, error) {
	p, route, err := g.latestPermitOfCommand(ctx, a.CommandID)
	prim, digest, futureID, pid := p.Primitive, p.Digest, p.FutureID, p.ID
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if route != a.Route || prim != a.Spec.Name() || digest != a.Digest {
		return nil, primitive.Conflict("command_id_reused", "command id %s is waiting for a permit with a different input; the permit covers only its journaled input", a.CommandID)
	}
	// A denied or expired permit (or an approved call that has finished)
	// has a terminal future: replay its outcome rather than "pending".
	if f, ok, err := g.Futures.Future(ctx, futureID); err == nil && ok && f.Result.Valid {
		var env callpath.Envelope
		if json.Unmarshal([]byte(f.Result.String), &env) == nil {
			env.Replayed, env.Arrivals, env.PermitID, env.CommandID = true, nil, pid, a.CommandID
			return &env, nil
		}
	}
	return &callpath.Envelope{State: primitive.StatePending, Primitive: prim, FutureID: futureID, PermitID: pid, CommandID: a.CommandID, Replayed: true}, nil
}
