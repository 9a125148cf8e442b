// Package govern is Hearth's governance (DESIGN §5): the e-stop latch, the
// policy mode, operator allow-rules and permits, the UNKNOWN gate, command
// ids and the journal that records every side effect in the host ledger
// before it runs. The model reaches it only through the dispatcher's
// Governor interface and two primitives (machine.estop, task.reconcile);
// everything an operator decides goes through Operator, which no tool can
// reach.
package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/route"
	"github.com/hearth-dev/hearth/internal/store"
)

// ProgramUse is one program a call would start, for allow-rule matching.
type ProgramUse struct {
	Command string
	Cwd     string
	// EnvKeys are the environment variables the call sets.
	EnvKeys []string `json:",omitempty"`
}

// loaderEnv are variables that make any program load or run other code;
// an allow-rule never covers a call that sets one.
var loaderEnv = []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
	"DYLD_FRAMEWORK_PATH", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "BASH_ENV", "ENV",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_SSH_COMMAND", "COMSPEC", "PATHEXT"}

// IsLoaderEnv reports whether the environment variable name makes programs
// load or run other code (compared without case, as Windows does).
func IsLoaderEnv(name string) bool {
	if strings.HasPrefix(strings.ToUpper(name), "GIT_CONFIG_") {
		return true
	}
	for _, bad := range loaderEnv {
		if strings.EqualFold(name, bad) {
			return true
		}
	}
	return false
}

// Governor implements dispatch.Governor.
type Governor struct {
	DB     *store.DB
	Ledger *ledger.Ledger
	Log    *slog.Logger
	// DefaultMode is the config's policy mode; an operator change stored in
	// the database overrides it.
	DefaultMode string
	PermitTTL   time.Duration
	Now         func() time.Time
	// Programs extracts the programs an exec-class primitive would start,
	// keyed by primitive name; a primitive without an extractor always needs
	// a permit in ask mode.
	Programs map[string]func(json.RawMessage) []ProgramUse
	// Dispatcher is used to run approved permits and settle denied ones.
	Dispatcher *dispatch.Dispatcher
	// Jobs releases or settles a job run parked for a permit.
	Jobs ParkedJobs
	// OnEStop runs after the latch is set (cancel running work, hold jobs).
	OnEStop []func()
	// OnQueueResume runs after the operator resumes the queue.
	OnQueueResume []func()

	mu    sync.Mutex
	timer *time.Timer
}

func (g *Governor) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Setting keys.
const (
	keyEStop     = "estop"
	keyQueueHeld = "queue_held"
	keyPolicy    = "policy_mode"
)

// EStopState is the latch.
type EStopState struct {
	Latched bool      `json:"latched"`
	Reason  string    `json:"reason,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at,omitzero"`
}

func getSetting(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, key string, v any) (bool, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return true, json.Unmarshal([]byte(raw), v)
}

func putSetting(ctx context.Context, tx *sql.Tx, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, string(b))
	return err
}

// Status is the operator-controlled state, read in one query.
type Status struct {
	EStop     EStopState
	QueueHeld bool
	Mode      string
}

// Status reads the e-stop latch, the queue hold and the policy mode.
func (g *Governor) Status(ctx context.Context) (Status, error) {
	st := Status{Mode: g.DefaultMode}
	stmt, err := g.DB.ReadStmt(ctx, `SELECT key, value FROM settings WHERE key IN (?, ?, ?)`)
	if err != nil {
		return st, err
	}
	rows, err := stmt.QueryContext(ctx, keyEStop, keyQueueHeld, keyPolicy)
	if err != nil {
		return st, fmt.Errorf("read settings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return st, err
		}
		switch k {
		case keyEStop:
			err = json.Unmarshal([]byte(v), &st.EStop)
		case keyQueueHeld:
			err = json.Unmarshal([]byte(v), &st.QueueHeld)
		case keyPolicy:
			var m string
			if err = json.Unmarshal([]byte(v), &m); err == nil && m != "" {
				st.Mode = m
			}
		}
		if err != nil {
			return st, fmt.Errorf("decode setting %s: %w", k, err)
		}
	}
	return st, rows.Err()
}

// EStop reports the latch. It is read from the database on every check so
// that an operator reset from another process (the CLI) takes effect.
func (g *Governor) EStop(ctx context.Context) (EStopState, error) {
	var s EStopState
	_, err := getSetting(ctx, g.DB.R, keyEStop, &s)
	return s, err
}

// QueueHeld reports whether the durable job queue is held.
func (g *Governor) QueueHeld(ctx context.Context) (bool, error) {
	var held bool
	_, err := getSetting(ctx, g.DB.R, keyQueueHeld, &held)
	return held, err
}

// Mode returns the effective policy mode.
func (g *Governor) Mode(ctx context.Context) string {
	var m string
	if ok, err := getSetting(ctx, g.DB.R, keyPolicy, &m); ok && err == nil && m != "" {
		return m
	}
	return g.DefaultMode
}

// Replay implements dispatch.Governor. A command id is looked up where
// each stage of a call leaves it: the command record Begin writes with the
// intent; before that, a permit request (a parked call); before that, the
// durable future of a detached call that is queued, waiting, or claimed
// but not yet journaled. Without the last, a retry of a queued call ran it
// as a new call and the queued one then ended in a conflict.
func (g *Governor) Replay(ctx context.Context, a *dispatch.Admission) (*dispatch.Envelope, error) {
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
		return g.replayFuture(ctx, a)
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
func (g *Governor) replayStored(ctx context.Context, a *dispatch.Admission, stored, futureID string) (*dispatch.Envelope, error) {
	var env dispatch.Envelope
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
	var one int
	err := g.DB.R.QueryRowContext(ctx, `SELECT 1 FROM futures WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
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
func (g *Governor) replayRunning(ctx context.Context, a *dispatch.Admission, prim, futureID string) (*dispatch.Envelope, error) {
	inProgress := primitive.Blocked("in_progress", "command %s is still running; retry it shortly", a.CommandID).
		WithDetails(map[string]any{"command_id": a.CommandID})
	wait := replayRunningMargin
	if g.Dispatcher != nil {
		wait += g.Dispatcher.Budget
	}
	if a.Spec.Inline {
		wait = 0
	}
	pending := &dispatch.Envelope{State: primitive.StatePending, Primitive: prim, FutureID: futureID, CommandID: a.CommandID, Replayed: true}
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
func (g *Governor) replayFuture(ctx context.Context, a *dispatch.Admission) (*dispatch.Envelope, error) {
	var id, route, prim, digest, state string
	var result sql.NullString
	err := g.DB.R.QueryRowContext(ctx, `SELECT id, route, primitive, input_sha256, state, result FROM futures
		WHERE command_id = ? ORDER BY created_at, rowid LIMIT 1`, a.CommandID).
		Scan(&id, &route, &prim, &digest, &state, &result)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up the future of command %s: %w", a.CommandID, err)
	}
	if route != a.Route || prim != a.Spec.Name() || digest != a.Digest {
		// The future is not named: it may belong to another conversation.
		return nil, primitive.Conflict("command_id_reused", "command id %s is already in use (a call not started yet) with a different input or primitive; send a new command id", a.CommandID).
			WithDetails(map[string]any{"command_id": a.CommandID})
	}
	if result.Valid {
		var env dispatch.Envelope
		if err := json.Unmarshal([]byte(result.String), &env); err != nil {
			return nil, fmt.Errorf("decode stored outcome of %s: %w", a.CommandID, err)
		}
		env.Replayed, env.Arrivals, env.FutureID, env.CommandID = true, nil, id, a.CommandID
		return &env, nil
	}
	env := &dispatch.Envelope{State: primitive.StatePending, Primitive: prim, FutureID: id, CommandID: a.CommandID, Replayed: true}
	if dispatch.Settled(state) {
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

func (g *Governor) replayPermit(ctx context.Context, a *dispatch.Admission) (*dispatch.Envelope, error) {
	var route, prim, digest, futureID, pid, state string
	err := g.DB.R.QueryRowContext(ctx, `SELECT route, primitive, input_sha256, future_id, id, state FROM permits WHERE command_id = ? ORDER BY created_at DESC LIMIT 1`, a.CommandID).
		Scan(&route, &prim, &digest, &futureID, &pid, &state)
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
	var result sql.NullString
	if err := g.DB.R.QueryRowContext(ctx, `SELECT result FROM futures WHERE id = ?`, futureID).Scan(&result); err == nil && result.Valid {
		var env dispatch.Envelope
		if json.Unmarshal([]byte(result.String), &env) == nil {
			env.Replayed, env.Arrivals, env.PermitID, env.CommandID = true, nil, pid, a.CommandID
			return &env, nil
		}
	}
	return &dispatch.Envelope{State: primitive.StatePending, Primitive: prim, FutureID: futureID, PermitID: pid, CommandID: a.CommandID, Replayed: true}, nil
}

// Admit implements dispatch.Governor.
func (g *Governor) Admit(ctx context.Context, a *dispatch.Admission) error {
	return g.admit(ctx, a, "")
}

// admit is Admit; an UNKNOWN opened by a job of the task.submit command
// siblingsOf (a job run's own submit) does not refuse the call.
func (g *Governor) admit(ctx context.Context, a *dispatch.Admission, siblingsOf string) error {
	risk := a.Spec.Risk
	if risk == primitive.RiskRead || risk == primitive.RiskControl {
		return nil
	}
	st, err := g.Status(ctx)
	if err != nil {
		return err
	}
	if st.EStop.Latched {
		return primitive.Blocked("estop", "emergency stop is latched (%s); %s refused. Only the operator can reset it.", st.EStop.Reason, a.Spec.Name())
	}
	mode := st.Mode
	if mode == config.ModeReadOnly {
		return primitive.Blocked("read_only", "policy mode is read-only; %s is a %s primitive", a.Spec.Name(), risk)
	}
	// Request-scoped (anonymous) calls share one gate: a client cannot step
	// around an open UNKNOWN by dropping its conversation id.
	var open string
	cond, arg := route.Match("route", a.Route)
	openStmt, err := g.DB.ReadStmt(ctx, `SELECT command_id FROM unknowns WHERE `+cond+` AND reconciled_at IS NULL
		AND (? = '' OR command_id NOT IN (SELECT id FROM jobs WHERE command_id = ?)) ORDER BY created_at LIMIT 1`)
	if err != nil {
		return err
	}
	err = openStmt.QueryRowContext(ctx, arg, siblingsOf, siblingsOf).Scan(&open)
	if err == nil {
		return primitive.Blocked("unknown_open", "command %s has an UNKNOWN outcome; re-read the state it may have changed, then call task.reconcile {id: %q, observed}", open, open).
			WithDetails(map[string]any{"command_id": open})
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read unknown outcomes: %w", err)
	}
	if a.Approved {
		return nil
	}
	need, err := g.needsPermit(ctx, mode, a)
	if err != nil {
		return err
	}
	if need {
		return dispatch.ErrPermitRequired
	}
	return nil
}

func (g *Governor) needsPermit(ctx context.Context, mode string, a *dispatch.Admission) (bool, error) {
	// A primitive may declare inputs that need a permit in every mode that
	// runs anything (read-only was refused above): UI fallback input.
	if a.Spec.NeedsPermit != nil && a.Spec.NeedsPermit(a.Input) {
		return true, nil
	}
	switch a.Spec.Risk {
	case primitive.RiskKill:
		return true, nil
	case primitive.RiskExec:
		if mode == config.ModeTrusted {
			return false, nil
		}
		extract := g.Programs[a.Spec.Name()]
		if extract == nil {
			return true, nil
		}
		uses := extract(a.Input)
		if len(uses) == 0 {
			return true, nil
		}
		rules, err := g.Rules(ctx)
		if err != nil {
			return false, err
		}
		for _, u := range uses {
			if !anyRuleAllows(rules, u) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, nil
}

// RequestPermit implements dispatch.Governor.
func (g *Governor) RequestPermit(ctx context.Context, a *dispatch.Admission) (string, error) {
	return g.requestPermit(ctx, a, nil)
}

// Begin implements dispatch.Governor: command row and intent entry commit
// together, before the primitive runs. The e-stop latch is read again in
// this write transaction: Latch writes through the same single writer, so
// a call either begins before the latch (and its work context is then
// cancelled by the e-stop) or is refused here — an e-stop that lands
// between Admit and Begin cannot let a call run unstopped.
func (g *Governor) Begin(ctx context.Context, a *dispatch.Admission) error {
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		// A compound call (run.scatter) is admitted as a read: under the
		// e-stop it still answers, with every call it submits refused.
		if a.Spec.Risk != primitive.RiskControl && !a.Spec.Compound {
			var st EStopState
			if _, err := getSetting(ctx, tx, keyEStop, &st); err != nil {
				return err
			}
			if st.Latched {
				return primitive.Blocked("estop", "emergency stop is latched (%s); %s refused. Only the operator can reset it.", st.Reason, a.Spec.Name())
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO commands(command_id, route, primitive, input_sha256, future_id, state, created_at)
			VALUES (?,?,?,?,?,'running',?) ON CONFLICT(command_id) DO NOTHING`, a.CommandID, a.Route, a.Spec.Name(), a.Digest, a.FutureID, g.now().UnixMilli())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return primitive.Conflict("command_id_reused", "command id %s is already in use", a.CommandID)
		}
		_, err = g.Ledger.AppendTx(ctx, tx, "intent", map[string]any{
			"command_id": a.CommandID, "primitive": a.Spec.Name(), "risk": string(a.Spec.Risk),
			"route": a.Route, "input_sha256": a.Digest, "future_id": a.FutureID, "approved": a.Approved,
		})
		return err
	})
	if err != nil {
		var pe *primitive.Error
		if errors.As(err, &pe) {
			return pe
		}
		return primitive.Failed("journal_failed", "could not journal the intent, so %s did not run: %v", a.Spec.Name(), err)
	}
	return nil
}

// outcomeKind maps an envelope to the ledger's outcome vocabulary.
func outcomeKind(env *dispatch.Envelope) string {
	switch {
	case env.State == primitive.StateCompleted:
		return "receipt"
	case env.State == primitive.StateCancelled:
		return "unknown"
	case env.Error != nil && env.Error.Code == "unknown":
		return "unknown"
	}
	return "tool_error"
}

// Finish implements dispatch.Governor: the command's stored envelope (what
// a replay returns), its outcome entry and, for an unknown outcome, the
// closed gate are written inside tx, the dispatcher's transaction that also
// completes the call's future.
func (g *Governor) Finish(ctx context.Context, tx *sql.Tx, a *dispatch.Admission, env *dispatch.Envelope) error {
	stored := *env
	stored.Arrivals = nil
	b, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("encode outcome of %s: %w", a.CommandID, err)
	}
	kind := outcomeKind(env)
	if _, err := tx.ExecContext(ctx, `UPDATE commands SET state = ?, envelope = ?, finished_at = ? WHERE command_id = ?`,
		env.State, string(b), g.now().UnixMilli(), a.CommandID); err != nil {
		return fmt.Errorf("record outcome of %s: %w", a.CommandID, err)
	}
	data := map[string]any{"command_id": a.CommandID, "outcome": kind, "state": env.State}
	if env.Error != nil {
		data["error_code"] = env.Error.Code
	}
	if kind == "unknown" {
		if err := openUnknown(ctx, tx, a.CommandID, a.Route, a.Spec.Name(), g.now()); err != nil {
			return fmt.Errorf("open unknown %s: %w", a.CommandID, err)
		}
	}
	_, err = g.Ledger.AppendTx(ctx, tx, "outcome", data)
	return err
}

// InFlight journals, inside tx (the one that records the call's running
// future), that a command outlived the inline budget and is still running
// (outcome in_flight); its final outcome follows.
func (g *Governor) InFlight(ctx context.Context, tx *sql.Tx, a *dispatch.Admission) error {
	_, err := g.Ledger.AppendTx(ctx, tx, "outcome", map[string]any{"command_id": a.CommandID, "outcome": "in_flight", "future_id": a.FutureID})
	return err
}

// OpenUnknownTx records, inside tx, an UNKNOWN outcome for id (a command
// or job id) that closes route's gate until it is reconciled. The job
// queue calls it for a run interrupted with on_interrupt "block".
func OpenUnknownTx(ctx context.Context, tx *sql.Tx, id, route, prim string, at time.Time) error {
	return openUnknown(ctx, tx, id, route, prim, at)
}

func openUnknown(ctx context.Context, tx *sql.Tx, cmd, route, prim string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO unknowns(command_id, route, primitive, created_at) VALUES (?,?,?,?) ON CONFLICT(command_id) DO NOTHING`,
		cmd, route, prim, at.UnixMilli())
	return err
}

// ApprovedFuture reports whether the operator approved a permit for
// futureID (dispatch asks at start-up for queued futures).
func (g *Governor) ApprovedFuture(ctx context.Context, futureID string) bool {
	var n int
	err := g.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM permits WHERE future_id = ? AND state = 'approved'`, futureID).Scan(&n)
	return err == nil && n > 0
}

// CancelPermitsOf withdraws the pending permit of a future that was
// cancelled before the operator decided (task.cancel of a parked call).
func (g *Governor) CancelPermitsOf(ctx context.Context, futureID string) {
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM permits WHERE future_id = ? AND state = 'pending'`, futureID)
		if err != nil {
			return err
		}
		var pids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			pids = append(pids, id)
		}
		rows.Close()
		for _, id := range pids {
			if _, err := tx.ExecContext(ctx, `UPDATE permits SET state = 'cancelled', decided_at = ? WHERE id = ?`, g.now().UnixMilli(), id); err != nil {
				return err
			}
			if _, err := g.Ledger.AppendTx(ctx, tx, "permit_cancelled", map[string]any{"permit_id": id, "future_id": futureID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.Log.Error("withdraw permits", "future", futureID, "err", err)
	}
}

// SettleParked settles futures a previous process left parked without a
// pending permit: a permit denied or expired just before a crash (the call
// arrives as blocked), or a parking interrupted before its permit was
// recorded. It runs once the dispatcher has started.
func (g *Governor) SettleParked(ctx context.Context) error {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT f.id, f.primitive, COALESCE((SELECT p.state FROM permits p WHERE p.future_id = f.id ORDER BY p.created_at DESC LIMIT 1), '')
		FROM futures f WHERE f.state = 'permit'`)
	if err != nil {
		return fmt.Errorf("find parked futures: %w", err)
	}
	type parked struct{ id, prim, permit string }
	var ps []parked
	for rows.Next() {
		var p parked
		if err := rows.Scan(&p.id, &p.prim, &p.permit); err != nil {
			rows.Close()
			return err
		}
		ps = append(ps, p)
	}
	rows.Close()
	for _, p := range ps {
		var why *primitive.Error
		switch p.permit {
		case "pending":
			continue
		case "denied":
			why = primitive.Blocked("permit_denied", "the operator denied the permit for this call")
		case "expired":
			why = primitive.Blocked("permit_expired", "the operator did not decide on the permit for this call before it expired")
		default:
			why = primitive.Blocked("permit_lost", "Hearth stopped before this call's permit request was recorded; nothing ran. Call again to ask the operator.")
		}
		g.Dispatcher.Settle(p.id, dispatch.ErrorEnvelope(p.prim, why))
	}
	return nil
}

// Recover settles what a previous process left: every command journaled as
// running gets an `unknown` outcome and closes its conversation's gate;
// pending permits get their expiry timer back.
func (g *Governor) Recover(ctx context.Context) error {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT command_id, route, primitive, future_id FROM commands WHERE state = 'running'`)
	if err != nil {
		return fmt.Errorf("find interrupted commands: %w", err)
	}
	type cmd struct{ id, route, prim string }
	var cmds []cmd
	for rows.Next() {
		var c cmd
		var fut string
		if err := rows.Scan(&c.id, &c.route, &c.prim, &fut); err != nil {
			rows.Close()
			return err
		}
		if IsJobRun(fut) {
			continue // the job queue's recovery settles it, by on_interrupt
		}
		cmds = append(cmds, c)
	}
	rows.Close()
	for _, c := range cmds {
		err := g.DB.InTx(ctx, func(tx *sql.Tx) error {
			env := dispatch.Envelope{State: primitive.StateBlocked, Primitive: c.prim, CommandID: c.id,
				Error: &dispatch.ErrorBody{Code: "unknown", Message: "Hearth stopped while this command was running; its outcome is unknown"}}
			b, _ := json.Marshal(&env)
			if _, err := tx.ExecContext(ctx, `UPDATE commands SET state = 'unknown', envelope = ?, finished_at = ? WHERE command_id = ?`, string(b), g.now().UnixMilli(), c.id); err != nil {
				return err
			}
			if err := openUnknown(ctx, tx, c.id, c.route, c.prim, g.now()); err != nil {
				return err
			}
			_, err := g.Ledger.AppendTx(ctx, tx, "outcome", map[string]any{"command_id": c.id, "outcome": "unknown", "state": "blocked", "interrupted": true})
			return err
		})
		if err != nil {
			return fmt.Errorf("settle interrupted command %s: %w", c.id, err)
		}
	}
	var next sql.NullInt64
	if err := g.DB.R.QueryRowContext(ctx, `SELECT MIN(expires_at) FROM permits WHERE state = 'pending'`).Scan(&next); err != nil {
		return err
	}
	if next.Valid {
		g.armExpiry(time.UnixMilli(next.Int64))
	}
	return nil
}

// armExpiry makes sure a timer fires by at to expire pending permits: one
// timer for the earliest expiry, no polling.
func (g *Governor) armExpiry(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := max(at.Sub(g.now()), 0) + 10*time.Millisecond
	if g.timer != nil {
		g.timer.Stop()
	}
	g.timer = time.AfterFunc(d, func() {
		if err := g.ExpirePermits(context.Background()); err != nil {
			g.Log.Error("expire permits", "err", err)
		}
	})
}

// Stop stops the expiry timer.
func (g *Governor) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer != nil {
		g.timer.Stop()
	}
}

// ExpirePermits expires every pending permit past its expiry: the parked
// call arrives as blocked. It re-arms the timer for the next one.
func (g *Governor) ExpirePermits(ctx context.Context) error {
	now := g.now()
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, future_id, primitive FROM permits WHERE state = 'pending' AND expires_at <= ?`, now.UnixMilli())
	if err != nil {
		return err
	}
	type p struct{ id, fut, prim string }
	var ps []p
	for rows.Next() {
		var x p
		if err := rows.Scan(&x.id, &x.fut, &x.prim); err != nil {
			rows.Close()
			return err
		}
		ps = append(ps, x)
	}
	rows.Close()
	for _, x := range ps {
		why := primitive.Blocked("permit_expired", "the operator did not decide on permit %s before it expired", x.id)
		changed, err := g.decide(ctx, x.id, "expired", "", "permit_expired", g.refuseJob(x.fut, why))
		if err != nil {
			return err
		}
		if changed && IsJobRun(x.fut) {
			g.Jobs.Changed(x.fut)
		} else if changed && g.Dispatcher != nil {
			g.Dispatcher.Settle(x.fut, dispatch.ErrorEnvelope(x.prim, primitive.Blocked("permit_expired", "the operator did not decide on permit %s before it expired", x.id)))
		}
	}
	var next sql.NullInt64
	if err := g.DB.R.QueryRowContext(ctx, `SELECT MIN(expires_at) FROM permits WHERE state = 'pending'`).Scan(&next); err != nil {
		return err
	}
	if next.Valid {
		g.armExpiry(time.UnixMilli(next.Int64))
	}
	return nil
}

// refuseJob returns, for a permit of a job run, what settles the job
// blocked with why inside the decision's transaction (nil otherwise).
func (g *Governor) refuseJob(futureID string, why *primitive.Error) func(tx *sql.Tx) error {
	if !IsJobRun(futureID) || g.Jobs == nil {
		return nil
	}
	return func(tx *sql.Tx) error { return g.Jobs.RefuseTx(context.Background(), tx, futureID, why) }
}

// decide moves a pending permit to state and journals kind, atomically.
// It reports false when the permit was no longer pending.
func (g *Governor) decide(ctx context.Context, permitID, state, by, kind string, extra func(tx *sql.Tx) error) (bool, error) {
	changed := false
	err := g.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE permits SET state = ?, decided_at = ?, decided_by = ? WHERE id = ? AND state = 'pending'`,
			state, g.now().UnixMilli(), by, permitID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		data := map[string]any{"permit_id": permitID}
		if by != "" {
			data["operator"] = by
		}
		if _, err := g.Ledger.AppendTx(ctx, tx, kind, data); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	return changed, err
}

// interpreters are programs that run arbitrary code from their arguments;
// an allow-rule for one is flagged to the operator.
var interpreters = []string{"cmd", "powershell", "pwsh", "python", "python3", "pythonw", "py", "pyw", "node", "deno", "bun",
	"wsl", "bash", "sh", "dash", "zsh", "ksh", "fish", "perl", "ruby", "php", "lua", "tclsh", "wish", "rscript",
	"awk", "gawk", "mawk", "osascript", "cscript", "wscript", "mshta"}

// IsInterpreter reports whether program names a general interpreter.
func IsInterpreter(program string) bool {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(program, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	for _, i := range interpreters {
		if base == i {
			return true
		}
	}
	return false
}

// Rule is an operator allow-rule: a program (absolute path, base name or
// glob) and an optional working-directory root.
type Rule struct {
	ID          string    `json:"id"`
	Program     string    `json:"program"`
	CwdRoot     string    `json:"cwd_root,omitempty"`
	Interpreter bool      `json:"interpreter"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
}

// Rules lists the allow-rules.
func (g *Governor) Rules(ctx context.Context) ([]Rule, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, program, cwd_root, interpreter, created_by, created_at FROM rules ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	defer rows.Close()
	var out []Rule
	for rows.Next() {
		var r Rule
		var interp int
		var at int64
		if err := rows.Scan(&r.ID, &r.Program, &r.CwdRoot, &interp, &r.CreatedBy, &at); err != nil {
			return nil, err
		}
		r.Interpreter = interp != 0
		r.CreatedAt = time.UnixMilli(at).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func foldPath(p string) string {
	p = filepath.Clean(p)
	if runtime.GOOS == "windows" {
		return strings.ToLower(p)
	}
	return p
}

// ruleAllows reports whether r allows running u. The program is resolved
// the way exec resolves it; a base-name rule matches the resolved file's
// base name, a path or glob rule the resolved absolute path. A rule with a
// cwd root requires an explicit cwd under that root.
func ruleAllows(r Rule, u ProgramUse) bool {
	for _, k := range u.EnvKeys {
		if IsLoaderEnv(k) {
			return false
		}
	}
	// A base-name rule ("git") covers only a command resolved through
	// PATH, never a path the caller chose ("./git", "C:\\tmp\\git.exe").
	if !strings.ContainsAny(r.Program, `/\`) && strings.ContainsAny(u.Command, `/\`) {
		return false
	}
	prog := u.Command
	if resolved, err := exec.LookPath(u.Command); err == nil {
		if abs, err := filepath.Abs(resolved); err == nil {
			prog = abs
		}
	}
	pattern := r.Program
	target := prog
	if !strings.ContainsAny(pattern, `/\`) {
		target = filepath.Base(prog)
	}
	if runtime.GOOS == "windows" {
		pattern, target = strings.ToLower(pattern), strings.ToLower(target)
		if filepath.Ext(pattern) == "" && filepath.Ext(target) == ".exe" {
			target = strings.TrimSuffix(target, ".exe")
		}
	}
	ok, err := filepath.Match(pattern, target)
	if err != nil || !ok {
		return false
	}
	if r.CwdRoot == "" {
		return true
	}
	if u.Cwd == "" {
		return false
	}
	root, cwd := foldPath(r.CwdRoot), foldPath(u.Cwd)
	rel, err := filepath.Rel(root, cwd)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func anyRuleAllows(rules []Rule, u ProgramUse) bool {
	for _, r := range rules {
		if ruleAllows(r, u) {
			return true
		}
	}
	return false
}
