package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Event kinds written to the log.
const (
	KindRunCreated        = "run.created"
	KindRunCheckpoint     = "run.checkpoint"
	KindRunClosed         = "run.closed"
	KindContinuationAdded = "continuation.scheduled"
	KindContinuationDue   = "continuation.due"
	KindScatter           = "scatter.submitted"
	KindRecipeCreated     = "recipe.created"
	KindRecipeDeleted     = "recipe.deleted"
	KindRecipeRun         = "recipe.run"
	// KindCall records one top-level primitive call of a conversation, for
	// recipe.suggest; run.events does not list these.
	KindCall = "call"
)

// HistoryKeep is how many call records a conversation keeps.
const HistoryKeep = 1000

// Events is the append-only event log (table events).
type Events struct {
	DB  *store.DB
	Log *slog.Logger

	// Call history is advisory (it feeds recipe.suggest), so Observe hands
	// it to a background recorder instead of writing on the caller's path;
	// without a running recorder Observe writes synchronously.
	mu      sync.Mutex
	pending []callRec
	kick    chan struct{}
	running bool
	// writeMu orders the writes of pending calls (the recorder's and a
	// History reader's flush), so the history keeps the order of calls.
	writeMu sync.Mutex
}

// callLinger is how long the recorder gathers observed calls before it
// writes them in one transaction: a steady stream of calls then costs one
// write per batch, not one per call. History flushes what is pending, so
// it never misses a call.
const callLinger = 50 * time.Millisecond

type callRec struct {
	at         int64
	route, sig string
}

// maxPendingCalls bounds the recorder's backlog; beyond it calls are not
// recorded (and the drop is logged).
const maxPendingCalls = 4096

// Event is one log entry as run.events reports it.
type Event struct {
	Seq      int64           `json:"seq"`
	At       time.Time       `json:"at"`
	Kind     string          `json:"kind"`
	EntityID string          `json:"entity_id,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Append writes one event outside any transaction. route is "" for an
// event every conversation may read.
func (e *Events) Append(ctx context.Context, route, kind, entity string, data any) error {
	return e.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		return AppendTx(ctx, tx, route, kind, entity, data)
	})
}

// AppendTx writes one event as part of tx.
func AppendTx(ctx context.Context, tx *sql.Tx, route, kind, entity string, data any) error {
	b := []byte("{}")
	if data != nil {
		var err error
		if b, err = json.Marshal(data); err != nil {
			return fmt.Errorf("encode %s event: %w", kind, err)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO events(at, route, kind, entity_id, data) VALUES (?,?,?,?,?)`,
		time.Now().UnixMilli(), route, kind, entity, string(b))
	if err != nil {
		return fmt.Errorf("append %s event: %w", kind, err)
	}
	return nil
}

// listQuery is List's query, of one entity's events or of all: its
// condition on kind is what lets SQLite read one entity's through
// events_entity, which leaves call history out.
func listQuery(entity bool) string {
	q := `SELECT seq, at, kind, entity_id, data FROM events WHERE kind <> 'call' AND (route = '' OR route = ?)`
	if entity {
		q += ` AND entity_id = ?`
	}
	return q + ` ORDER BY seq DESC LIMIT ?`
}

// List returns the newest limit events route may read (its own and the
// shared ones, without call history), oldest first; entity, when set,
// keeps only that entity's events.
func (e *Events) List(ctx context.Context, route, entity string, limit int) ([]Event, error) {
	args := []any{route}
	if entity != "" {
		args = append(args, entity)
	}
	args = append(args, limit)
	rows, err := e.DB.R.QueryContext(ctx, listQuery(entity != ""), args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var ev Event
		var at int64
		var data string
		if err := rows.Scan(&ev.Seq, &at, &ev.Kind, &ev.EntityID, &data); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		ev.At = time.UnixMilli(at).UTC()
		if data != "{}" {
			ev.Data = json.RawMessage(data)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Observe is a dispatch gate that never refuses: it records the primitive
// of every top-level call of a conversation (not scatter items or recipe
// steps, which run with a nested context, and not anonymous request-scoped
// routes, which have no later call) as that conversation's history. A
// failure to record is logged, never allowed to stop the call.
func (e *Events) Observe(ctx context.Context, spec *primitive.Spec, route string) error {
	if route == "" || strings.HasPrefix(route, dispatch.AnonymousPrefix) || dispatch.Nested(ctx) {
		return nil
	}
	rec := callRec{at: time.Now().UnixMilli(), route: route, sig: spec.Name()}
	e.mu.Lock()
	if e.running {
		if len(e.pending) < maxPendingCalls {
			e.pending = append(e.pending, rec)
		} else if e.Log != nil {
			e.Log.Warn("call history backlog full; call not recorded", "primitive", rec.sig)
		}
		e.mu.Unlock()
		select {
		case e.kick <- struct{}{}:
		default:
		}
		return nil
	}
	e.mu.Unlock()
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	e.record(context.WithoutCancel(ctx), []callRec{rec})
	return nil
}

// record writes calls in one transaction and trims each route's history
// now and then: a route is trimmed once, after the inserts, when one of
// its calls got a seq that is a multiple of 64.
func (e *Events) record(ctx context.Context, recs []callRec) {
	n := len(recs)
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		var trim []string
		for len(recs) > 0 {
			chunk := recs[:chunkSize(len(recs))]
			recs = recs[len(chunk):]
			args := make([]any, 0, 3*len(chunk))
			for _, r := range chunk {
				args = append(args, r.at, r.route, r.sig)
			}
			res, err := e.DB.TxExec(ctx, tx, insertCallsSQL(len(chunk)), args...)
			if err != nil {
				return err
			}
			// One statement's rows get consecutive seqs (AUTOINCREMENT, one
			// writer), the last of them LastInsertId.
			last, err := res.LastInsertId()
			if err != nil {
				return err
			}
			for i, r := range chunk {
				if (last-int64(len(chunk)-1-i))%64 == 0 && !slices.Contains(trim, r.route) {
					trim = append(trim, r.route)
				}
			}
		}
		for _, route := range trim {
			if _, err := e.DB.TxExec(ctx, tx, `DELETE FROM events WHERE kind = 'call' AND route = ? AND seq <= (
				SELECT seq FROM events WHERE kind = 'call' AND route = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, route, route, HistoryKeep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && e.Log != nil {
		e.Log.Error("record call history", "calls", n, "err", err)
	}
}

// insertCallsChunk is how many calls one INSERT statement writes at most.
const insertCallsChunk = 128

// chunkSize is how many of n calls the next INSERT writes: the largest
// power of two up to insertCallsChunk that fits, so that every statement
// is one of eight texts, each prepared once (store.DB.TxExec).
func chunkSize(n int) int {
	size := insertCallsChunk
	for size > n {
		size /= 2
	}
	return size
}

// insertCallsSQL is the INSERT of n calls, one statement for all of them:
// a statement per call cost more than the rows it wrote.
func insertCallsSQL(n int) string {
	const row = `(?,?,'` + KindCall + `',?)`
	var b strings.Builder
	b.Grow(len(`INSERT INTO events(at, route, kind, entity_id) VALUES `) + n*(len(row)+1))
	b.WriteString(`INSERT INTO events(at, route, kind, entity_id) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// runRecorder writes observed calls in the background until ctx ends,
// then flushes what is pending.
func (e *Events) runRecorder(ctx context.Context) {
	linger := time.NewTimer(callLinger)
	linger.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-e.kick:
			linger.Reset(callLinger)
			select {
			case <-ctx.Done():
			case <-linger.C:
			}
		}
		stopping := ctx.Err() != nil
		e.flush(context.WithoutCancel(ctx), stopping)
		if stopping {
			return
		}
	}
}

// flush writes the pending calls; stopping ends background recording
// (later calls are written synchronously).
func (e *Events) flush(ctx context.Context, stopping bool) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	e.mu.Lock()
	batch := e.pending
	e.pending = nil
	if stopping {
		e.running = false
	}
	e.mu.Unlock()
	if len(batch) > 0 {
		e.record(ctx, batch)
	}
}

// startRecorder begins background recording (Service.Start calls it).
func (e *Events) startRecorder(ctx context.Context, wg *sync.WaitGroup) {
	e.mu.Lock()
	e.kick = make(chan struct{}, 1)
	e.running = true
	e.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.runRecorder(ctx)
	}()
}

// History returns route's most recent top-level primitive calls, oldest
// first, at most n.
func (e *Events) History(ctx context.Context, route string, n int) ([]string, error) {
	e.flush(context.WithoutCancel(ctx), false)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT entity_id FROM events WHERE kind = 'call' AND route = ? ORDER BY seq DESC LIMIT ?`, route, n)
	if err != nil {
		return nil, fmt.Errorf("read call history: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("read call history: %w", err)
		}
		out = append(out, p)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, rows.Err()
}
