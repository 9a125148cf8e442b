package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
)

// HistoryKeep is how many of its newest calls a conversation's history
// keeps (table call_history; recipe.suggest reads it).
const HistoryKeep = 1000

// Events is the append-only event log (table events) and each
// conversation's call history (table call_history).
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

// listQuery is List's query, of one entity's events or of all.
func listQuery(entity bool) string {
	q := `SELECT seq, at, kind, entity_id, data FROM events WHERE (route = '' OR route = ?)`
	if entity {
		q += ` AND entity_id = ?`
	}
	return q + ` ORDER BY seq DESC LIMIT ?`
}

// List returns the newest limit events route may read (its own and the
// shared ones), oldest first; entity, when set, keeps only that entity's
// events.
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

// record writes calls in one transaction: each conversation's calls, in
// order, as rows of at most maxRowCalls, numbered on from the
// conversation's newest row; then what falls out of each conversation's
// newest HistoryKeep calls is deleted.
func (e *Events) record(ctx context.Context, recs []callRec) {
	n := len(recs)
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		for _, b := range byRoute(recs) {
			var total int64
			err := e.DB.TxQueryRow(ctx, tx, `SELECT total FROM call_history WHERE route = ? ORDER BY total DESC LIMIT 1`, b.route).Scan(&total)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			for calls := b.calls; len(calls) > 0; {
				row := calls[:min(len(calls), maxRowCalls)]
				calls = calls[len(row):]
				total += int64(len(row))
				if _, err := e.DB.TxExec(ctx, tx, `INSERT INTO call_history(route, total, calls, at, sigs) VALUES (?,?,?,?,?)`,
					b.route, total, len(row), row[len(row)-1].at, joinSigs(row)); err != nil {
					return err
				}
			}
			// A row is kept while any of its calls is among the newest
			// HistoryKeep: its total is above total-HistoryKeep.
			if _, err := e.DB.TxExec(ctx, tx, `DELETE FROM call_history WHERE route = ? AND total <= ?`, b.route, total-HistoryKeep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && e.Log != nil {
		e.Log.Error("record call history", "calls", n, "err", err)
	}
}

// maxRowCalls is how many calls one history row holds at most: a
// conversation keeps its newest HistoryKeep calls and fewer than
// maxRowCalls more (the rest of the row that holds the oldest of them).
const maxRowCalls = 64

// routeCalls is one conversation's calls of a batch, in call order.
type routeCalls struct {
	route string
	calls []callRec
}

// byRoute splits a batch by conversation, in the order each first
// appears, keeping the order of each one's calls.
func byRoute(recs []callRec) []routeCalls {
	var out []routeCalls
	at := map[string]int{}
	for _, r := range recs {
		i, ok := at[r.route]
		if !ok {
			i = len(out)
			at[r.route] = i
			out = append(out, routeCalls{route: r.route})
		}
		out[i].calls = append(out[i].calls, r)
	}
	return out
}

// joinSigs is a row's sigs: its calls' primitives, one per line.
func joinSigs(row []callRec) string {
	var b strings.Builder
	for i, r := range row {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(r.sig)
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
// first, at most n (none when n <= 0).
func (e *Events) History(ctx context.Context, route string, n int) ([]string, error) {
	e.flush(context.WithoutCancel(ctx), false)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT sigs FROM call_history WHERE route = ? ORDER BY total DESC`, route)
	if err != nil {
		return nil, fmt.Errorf("read call history: %w", err)
	}
	defer rows.Close()
	// The rows come newest first; the oldest one read may give only its
	// newest calls.
	var newest [][]string
	got := 0
	for got < n && rows.Next() {
		var sigs string
		if err := rows.Scan(&sigs); err != nil {
			return nil, fmt.Errorf("read call history: %w", err)
		}
		row := strings.Split(sigs, "\n")
		row = row[max(0, len(row)-(n-got)):]
		newest = append(newest, row)
		got += len(row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read call history: %w", err)
	}
	out := make([]string, 0, got)
	for i := len(newest) - 1; i >= 0; i-- {
		out = append(out, newest[i]...)
	}
	return out, nil
}
