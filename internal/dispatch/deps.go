package dispatch

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// This file holds dependent futures: a future that runs only after other
// futures of its conversation settled, with exact reference objects
//
//	{"$future": "<future id>", "$path": "result.field"}
//
// in its input replaced by values from their stored envelopes. run.scatter
// builds its DAG on it. Dependencies are durable (table future_deps): a
// waiting future is released when a dependency completes (the hook in
// settleFuture), when one settles otherwise (a watcher on Watch, e.g. a
// cancellation), and at start-up (the hook in recover).

// StateWaiting is the state of a future whose dependencies have not all
// settled yet.
const StateWaiting = "waiting"

type nestedKey struct{}

// WithNested marks ctx as belonging to work started by another call (a
// scatter item, a recipe step), so that observers of top-level calls can
// tell the two apart.
func WithNested(ctx context.Context) context.Context {
	return context.WithValue(ctx, nestedKey{}, true)
}

// Nested reports whether ctx was marked by WithNested.
func Nested(ctx context.Context) bool {
	v, _ := ctx.Value(nestedKey{}).(bool)
	return v
}

// Settled reports whether a future state is final for its dependents:
// anything but queued, running, waiting for a permit, or waiting for its
// own dependencies.
func Settled(state string) bool { return callpath.Settled(state) }

// Enqueue stores req as a durable future at once and returns its id. With
// no dependencies (deps plus the future ids its input references) it is
// queued and started like a detached call. Otherwise it waits until every
// dependency settled; then it is blocked (dependency_failed) if one did
// not complete, or its references are replaced by values from the
// dependencies' envelopes, the input is validated strictly, and it runs.
// A dependency that is unknown or belongs to another conversation, a
// malformed reference, or a refusal by the gates or the governor makes the
// future blocked at once. The error is only for a failure to record it.
func (d *Dispatcher) Enqueue(ctx context.Context, req Request, deps []string) (string, error) {
	id, _, err := d.EnqueueChecked(ctx, req, deps)
	return id, err
}

// EnqueueChecked is Enqueue that also says whether the call was refused
// when it was submitted (its future is then already settled): unlike the
// future's state read afterwards, which a call that runs and fails at once
// reaches too, this does not depend on timing.
func (d *Dispatcher) EnqueueChecked(ctx context.Context, req Request, deps []string) (id string, refused bool, err error) {
	id, err = d.enqueue(ctx, req, deps, &refused)
	return id, refused, err
}

func (d *Dispatcher) enqueue(ctx context.Context, req Request, deps []string, refused *bool) (string, error) {
	name := req.Spec.Name()
	a := NewAdmission(req, "")
	req.CommandID = a.CommandID
	req.Detach = true
	id := a.FutureID

	refusal := d.checkDeps(ctx, req, &deps)
	if refusal == nil {
		refusal = d.admitLater(ctx, a)
	}
	if refusal != nil {
		refusal.Primitive = name
		refusal.CommandID = a.CommandID
		*refused = true
		return id, d.insertSettled(ctx, id, req, refusal)
	}
	if len(deps) == 0 {
		if err := d.insertFuture(ctx, id, req, "queued"); err != nil {
			return "", err
		}
		d.startQueued(id, req, false)
		return id, nil
	}
	wctx := context.WithoutCancel(ctx)
	err := d.DB.InTx(wctx, func(tx *sql.Tx) error {
		if err := insertFutureTx(wctx, tx, callRecord(id, req, StateWaiting), time.Now().UnixMilli()); err != nil {
			return err
		}
		for _, dep := range deps {
			if _, err := tx.ExecContext(wctx, `INSERT OR IGNORE INTO future_deps(future_id, dep_id) VALUES (?,?)`, id, dep); err != nil {
				return fmt.Errorf("record dependency: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	// A dependency may have settled before this future existed, when its
	// completion hook could not see it.
	if !d.tryRelease(id) {
		d.watchDeps(id, deps)
	}
	return id, nil
}

// checkDeps adds the future ids referenced by req.Input to deps
// (deduplicated) and refuses a malformed or index reference, or a
// dependency that is not a future of req.Route.
func (d *Dispatcher) checkDeps(ctx context.Context, req Request, deps *[]string) *Envelope {
	v, err := DecodeJSON(req.Input)
	if err != nil {
		return ErrorEnvelope("", primitive.Failed("invalid_input", "input is not JSON: %v", err))
	}
	all := append([]string(nil), *deps...)
	_, err = MapRefs(v, "", func(at string, r Ref) (any, error) {
		if r.ID() == "" {
			return nil, &RefError{At: at, Msg: fmt.Sprintf("$future %v is an unresolved batch index; only run.scatter resolves indexes", r.Future)}
		}
		all = append(all, r.ID())
		return nil, nil
	})
	if err != nil {
		return ErrorEnvelope("", primitive.Blocked("bad_reference", "%v", err))
	}
	seen := map[string]bool{}
	out := all[:0]
	for _, dep := range all {
		if seen[dep] {
			continue
		}
		seen[dep] = true
		var route string
		err := d.DB.R.QueryRowContext(ctx, `SELECT route FROM futures WHERE id = ?`, dep).Scan(&route)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && route != req.Route) {
			return ErrorEnvelope("", primitive.Blocked("unknown_dependency", "dependency %s is not a future of this conversation", dep).
				WithDetails(map[string]any{"dependency": dep}))
		}
		if err != nil {
			return ErrorEnvelope("", primitive.Failed("internal", "read dependency %s: %v", dep, err))
		}
		out = append(out, dep)
	}
	*deps = out
	return nil
}

// admitLater runs the gates and asks the governor whether the call may run
// at all. A permit requirement is not decided here: the future is admitted
// again when it starts (runQueued), and parked for the operator then, with
// the input it will really run (references resolved).
func (d *Dispatcher) admitLater(ctx context.Context, a *Admission) *Envelope {
	v, _ := d.admit(ctx, a, admitOpts{gates: true})
	if v.refused == nil {
		return nil
	}
	return ErrorEnvelope(a.Spec.Name(), v.refused)
}

// insertSettled records a future refused at submit, terminal from the
// start, together with its arrival.
func (d *Dispatcher) insertSettled(ctx context.Context, id string, req Request, env *Envelope) error {
	ctx = context.WithoutCancel(ctx)
	payload := d.Arrivals.Payload(ctx, req.Route, id, env)
	now := time.Now()
	return d.DB.InTx(ctx, func(tx *sql.Tx) error {
		r := callRecord(id, req, futureState(env.State))
		r.result, r.finished = string(payload), now.UnixMilli()
		if err := insertFutureTx(ctx, tx, r, now.UnixMilli()); err != nil {
			return err
		}
		return EnqueueArrival(ctx, tx, req.Route, id, payload, now)
	})
}

// dependentsQuery finds the waiting dependents of a future. CROSS JOIN
// keeps the order, from the future's few dependents to their rows: through
// futures_state it would read every waiting future (a 1000-job chain holds
// 999) on every completion.
const dependentsQuery = `SELECT fd.future_id FROM future_deps fd CROSS JOIN futures f ON f.id = fd.future_id
	WHERE fd.dep_id = ? AND f.state = 'waiting'`

// releaseDependents releases the waiting futures that depend on id. It is
// called when id settles.
func (d *Dispatcher) releaseDependents(id string) {
	waiting, err := d.ids(dependentsQuery, id)
	if err != nil {
		if d.ctx.Err() == nil {
			d.Log.Error("find dependents", "future", id, "err", err)
		}
		return
	}
	for _, w := range waiting {
		d.tryRelease(w)
	}
}

// ids reads the one-column id rows of query (prepared once).
func (d *Dispatcher) ids(query string, args ...any) ([]string, error) {
	st, err := d.DB.ReadStmt(d.ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(d.ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// recoverWaiting is called at start-up: waiting futures whose dependencies
// all settled are released; the others keep waiting.
func (d *Dispatcher) recoverWaiting() {
	waiting, err := d.ids(`SELECT id FROM futures WHERE state = 'waiting' ORDER BY created_at`)
	if err != nil {
		d.Log.Error("find waiting futures", "err", err)
		return
	}
	scheduled, err := d.ids(`SELECT id FROM futures WHERE state = 'waiting' AND class IS NOT NULL`)
	if err != nil {
		d.Log.Error("find waiting futures", "err", err)
		return
	}
	isScheduled := map[string]bool{}
	for _, id := range scheduled {
		isScheduled[id] = true
	}
	for _, w := range waiting {
		// A scheduled future depends only on futures of its class, whose
		// every end releases their dependents: it needs no watcher.
		if d.tryRelease(w) || isScheduled[w] {
			continue
		}
		deps, _, err := d.depStates(w)
		if err != nil {
			d.Log.Error("read dependencies", "future", w, "err", err)
			continue
		}
		ids := make([]string, len(deps))
		for i, dep := range deps {
			ids[i] = dep.id
		}
		d.watchDeps(w, ids)
	}
}

// watchDeps waits, in the background, for every dependency of id to
// settle and then tries to release id. It covers settlements that do not
// pass through settleFuture (a queued future cancelled by task.cancel).
func (d *Dispatcher) watchDeps(id string, deps []string) {
	d.spawn(func() {
		for _, dep := range deps {
			for {
				ch, stop := d.Watch(dep)
				var state string
				err := d.DB.R.QueryRowContext(d.ctx, `SELECT state FROM futures WHERE id = ?`, dep).Scan(&state)
				if err != nil || Settled(state) {
					stop()
					break
				}
				select {
				case <-ch:
				case <-d.ctx.Done():
					stop()
					return
				}
			}
		}
		d.tryRelease(id)
	})
}

type depState struct {
	id, state string
	result    sql.NullString
}

func (d *Dispatcher) depStates(id string) ([]depState, bool, error) {
	st, err := d.DB.ReadStmt(d.ctx, `SELECT f.id, f.state, f.result FROM future_deps fd JOIN futures f ON f.id = fd.dep_id
		WHERE fd.future_id = ? ORDER BY f.created_at, f.id`)
	if err != nil {
		return nil, false, err
	}
	rows, err := st.QueryContext(d.ctx, id)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []depState
	all := true
	for rows.Next() {
		var s depState
		if err := rows.Scan(&s.id, &s.state, &s.result); err != nil {
			return nil, false, err
		}
		all = all && Settled(s.state)
		out = append(out, s)
	}
	return out, all, rows.Err()
}

// tryRelease settles or starts the waiting future id when all its
// dependencies settled. It reports whether id is no longer waiting.
// Concurrent calls are safe: only one moves the future out of waiting.
func (d *Dispatcher) tryRelease(id string) bool {
	var route, prim, input string
	var cmd, class sql.NullString
	var state string
	st, err := d.DB.ReadStmt(d.ctx, `SELECT route, primitive, input, command_id, state, class FROM futures WHERE id = ?`)
	if err == nil {
		err = st.QueryRowContext(d.ctx, id).Scan(&route, &prim, &input, &cmd, &state, &class)
	}
	if err != nil {
		if d.ctx.Err() == nil {
			d.Log.Error("read waiting future", "future", id, "err", err)
		}
		return false
	}
	if state != StateWaiting {
		return true
	}
	deps, all, err := d.depStates(id)
	if err != nil {
		d.Log.Error("read dependencies", "future", id, "err", err)
		return false
	}
	if !all {
		return false
	}
	if class.Valid {
		return d.releaseScheduled(d.classes[class.String], id, route, prim, deps)
	}
	blocked := func(e *primitive.Error) bool {
		env := ErrorEnvelope(prim, e)
		env.CommandID = cmd.String
		d.settleFuture(id, route, env)
		return true
	}
	spec, ok := d.Registry.Lookup(prim)
	if !ok {
		return blocked(primitive.Blocked("unknown_primitive", "primitive %s no longer exists", prim))
	}
	envs := map[string]any{}
	for _, dep := range deps {
		if dep.state != primitive.StateCompleted {
			return blocked(primitive.Blocked("dependency_failed", "dependency %s ended %s, so this call did not run", dep.id, dep.state).
				WithDetails(map[string]any{"dependency": dep.id, "dependency_state": dep.state}))
		}
		env, err := d.storedEnvelope(dep)
		if err != nil {
			return blocked(primitive.Blocked("dependency_unreadable", "the result of dependency %s cannot be read: %v", dep.id, err).
				WithDetails(map[string]any{"dependency": dep.id}))
		}
		envs[dep.id] = env
	}
	v, err := DecodeJSON([]byte(input))
	if err != nil {
		return blocked(primitive.Failed("invalid_input", "%s: stored input is not JSON: %v", prim, err))
	}
	var missing *primitive.Error
	resolved, err := MapRefs(v, "", func(at string, r Ref) (any, error) {
		env, ok := envs[r.ID()]
		if !ok {
			missing = primitive.Blocked("bad_reference", "%s: $future %v is not a dependency of this call", at, r.Future)
			return nil, missing
		}
		val, ok := Lookup(env, r.Path)
		if !ok {
			missing = primitive.Blocked("missing_path", "%s: $path %q is not in the result of %s", at, r.Path, r.ID()).
				WithDetails(map[string]any{"dependency": r.ID(), "path": r.Path, "field": at})
			return nil, missing
		}
		return val, nil
	})
	if err != nil {
		if missing == nil {
			missing = primitive.Blocked("bad_reference", "%v", err)
		}
		return blocked(missing)
	}
	raw, err := json.Marshal(resolved)
	if err != nil {
		return blocked(primitive.Failed("invalid_input", "%s: encode resolved input: %v", prim, err))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return blocked(primitive.Failed("invalid_input", "%s: resolved input is not an object", prim))
	}
	if err := spec.ValidateObject(obj); err != nil {
		return blocked(primitive.Failed("invalid_input", "after resolving references: %v", err))
	}
	sum := sha256.Sum256(raw)
	n, err := toQueued(context.WithoutCancel(d.ctx), alone(d.DB), queueMove{id: id, from: StateWaiting, input: raw, digest: hex.EncodeToString(sum[:])})
	if err != nil {
		d.Log.Error("release future", "future", id, "err", err)
		return false
	}
	if n == 0 {
		return true // another release won
	}
	d.startQueued(id, Request{Route: route, Spec: spec, Input: raw, Detach: true, CommandID: cmd.String}, false)
	return true
}

// storedEnvelope decodes a completed dependency's envelope, reading it
// back from its artifact when it was spilled.
func (d *Dispatcher) storedEnvelope(dep depState) (any, error) {
	if !dep.result.Valid {
		return nil, errors.New("no stored result")
	}
	env, err := DecodeJSON([]byte(dep.result.String))
	if err != nil {
		return nil, err
	}
	spilled, _ := Lookup(env, "result.spilled")
	artID, _ := Lookup(env, "artifact.id")
	id, _ := artID.(string)
	if spilled != true || id == "" || d.Artifacts == nil {
		return env, nil
	}
	meta, err := d.Artifacts.Metadata(d.ctx, id)
	if err != nil {
		return nil, err
	}
	if meta.Size > MaxRefResultBytes {
		return nil, fmt.Errorf("spilled result is %d bytes, more than %d", meta.Size, MaxRefResultBytes)
	}
	chunk, err := d.Artifacts.ReadRange(d.ctx, id, 0, int(meta.Size), "base64")
	if err != nil {
		return nil, err
	}
	full, err := base64.StdEncoding.DecodeString(chunk.Data)
	if err != nil {
		return nil, err
	}
	return DecodeJSON(full)
}

// releaseScheduled settles or queues the waiting scheduled future id, all
// of whose dependencies settled: blocked, in its class's words, by the
// first one that did not complete; otherwise queued for its scheduler.
// Its input holds no references to resolve.
func (d *Dispatcher) releaseScheduled(c *scheduler, id, route, prim string, deps []depState) bool {
	if c == nil {
		d.Log.Error("release future", "future", id, "err", "its class is not served")
		return false
	}
	for _, dep := range deps {
		if dep.state != primitive.StateCompleted {
			env := ErrorEnvelope(prim, c.Runner.DependencyBlocked(d.ctx, dep.id, dep.state))
			c.settle(id, route, env)
			return true
		}
	}
	n, err := toQueued(context.WithoutCancel(d.ctx), alone(d.DB), queueMove{id: id, from: StateWaiting})
	if err != nil {
		d.Log.Error("release future", "future", id, "err", err)
		return false
	}
	if n > 0 {
		d.wake(id)
		c.wake()
	}
	return true
}
