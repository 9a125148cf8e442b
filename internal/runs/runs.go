// Package runs holds the run tool: durable runs (an objective with its
// latest checkpoint), the append-only event log every entity writes to,
// scheduled continuations that Hearth never executes by itself, and the
// typed scatter of primitive calls whose items are durable futures wired
// together by $future references.
//
// Runs and their events are shared by every conversation of this PC (a run
// is how work continues in a new conversation); scatter futures and the
// call history belong to their conversation.
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
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Bounds of run fields.
const (
	MaxObjective = 4000
	MaxSummary   = 16000
	MaxListItem  = 2000
	MaxListItems = 100
	MaxRunsList  = 200
	MaxEvents    = 500
)

// Service is the run tool's state. run.scatter receives the dispatcher
// that runs it with each call (dispatch.WithEngine): the dispatcher is
// built from the registry that holds these primitives.
type Service struct {
	DB *store.DB
	// Arrivals is the arrival writer a due continuation's envelope goes
	// through (the one the dispatcher's futures use).
	Arrivals *dispatch.Arrivals
	Events   *Events
	Log      *slog.Logger
	// OracleArmed reports config oracle.armed; nil means false.
	OracleArmed func() bool
	// Tabs, when set, wakes a conversation's bound browser tab: a due
	// continuation with target {browser_tab} is typed into that tab while
	// wake is armed (internal/wake), and stays the dry run otherwise.
	Tabs TabWaker
	// seams are what tests may set (fortest.go); zero in the program.
	seams seams

	kinds     map[string]*kindSpec
	kindNames []string

	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}
}

// New returns a Service on db whose continuations arrive through arrivals.
func New(db *store.DB, log *slog.Logger, arrivals *dispatch.Arrivals) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{DB: db, Log: log, Arrivals: arrivals, Events: &Events{DB: db, Log: log}, kick: make(chan struct{}, 1)}
}

// Run is a durable run.
type Run struct {
	ID                 string         `json:"id"`
	State              string         `json:"state"`
	Objective          string         `json:"objective"`
	AcceptanceCriteria []string       `json:"acceptance_criteria"`
	Summary            string         `json:"summary"`
	NextActions        []string       `json:"next_actions"`
	PendingTaskIDs     []string       `json:"pending_task_ids"`
	Version            int            `json:"version"`
	CreatedAt          time.Time      `json:"created_at"`
	UpdatedAt          time.Time      `json:"updated_at"`
	ClosedAt           *time.Time     `json:"closed_at,omitempty"`
	Continuations      []Continuation `json:"continuations,omitempty"`
}

// RunSummary is one row of run.list.
type RunSummary struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	Objective string    `json:"objective"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CheckpointInput creates a run (no ID) or updates one.
type CheckpointInput struct {
	ID                 string    `json:"id"`
	Objective          *string   `json:"objective"`
	AcceptanceCriteria *[]string `json:"acceptance_criteria"`
	Summary            *string   `json:"summary"`
	NextActions        *[]string `json:"next_actions"`
	PendingTaskIDs     *[]string `json:"pending_task_ids"`
}

func invalid(op, field, format string, a ...any) error {
	return primitive.Failed("invalid_input", "run.%s: field %q: %s", op, field, fmt.Sprintf(format, a...))
}

func checkText(op, field, s string, max int) error {
	if !utf8.ValidString(s) {
		return invalid(op, field, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return invalid(op, field, "is %d characters; at most %d", n, max)
	}
	return nil
}

func checkList(op, field string, l *[]string) error {
	if l == nil {
		return nil
	}
	if len(*l) > MaxListItems {
		return invalid(op, field, "has %d items; at most %d", len(*l), MaxListItems)
	}
	for i, s := range *l {
		if err := checkText(op, fmt.Sprintf("%s[%d]", field, i), s, MaxListItem); err != nil {
			return err
		}
	}
	return nil
}

func listJSON(l *[]string) string {
	if l == nil || *l == nil {
		return "[]"
	}
	b, _ := json.Marshal(*l)
	return string(b)
}

// ErrNoRun is returned for an unknown run id.
var ErrNoRun = errors.New("no such run")

func notFound(op, id string) error {
	return primitive.Failed("not_found", "run.%s: no run %q", op, id)
}

// Checkpoint creates a run, or applies a checkpoint to an open one.
func (s *Service) Checkpoint(ctx context.Context, route string, in CheckpointInput) (*Run, error) {
	for _, c := range []struct {
		name string
		v    *string
		max  int
	}{{"objective", in.Objective, MaxObjective}, {"summary", in.Summary, MaxSummary}} {
		if c.v != nil {
			if err := checkText("checkpoint", c.name, *c.v, c.max); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range []struct {
		name string
		v    *[]string
	}{{"acceptance_criteria", in.AcceptanceCriteria}, {"next_actions", in.NextActions}, {"pending_task_ids", in.PendingTaskIDs}} {
		if err := checkList("checkpoint", c.name, c.v); err != nil {
			return nil, err
		}
	}
	now := time.Now().UnixMilli()
	ctx = context.WithoutCancel(ctx)
	if in.ID == "" {
		if in.Objective == nil || strings.TrimSpace(*in.Objective) == "" {
			return nil, invalid("checkpoint", "objective", "required to create a run (pass id to update one)")
		}
		id := primitive.NewID("run")
		summary := ""
		if in.Summary != nil {
			summary = *in.Summary
		}
		err := s.DB.InTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO runs(id, route, state, objective, acceptance_criteria, summary, next_actions, pending_task_ids, created_at, updated_at)
				VALUES (?,?,'open',?,?,?,?,?,?,?)`, id, route, *in.Objective, listJSON(in.AcceptanceCriteria), summary, listJSON(in.NextActions), listJSON(in.PendingTaskIDs), now, now)
			if err != nil {
				return fmt.Errorf("create run: %w", err)
			}
			return AppendTx(ctx, tx, "", KindRunCreated, id, map[string]any{"objective": *in.Objective, "version": 1})
		})
		if err != nil {
			return nil, err
		}
		return s.Get(ctx, route, id)
	}
	sets := []string{}
	args := []any{}
	changed := []string{}
	add := func(col string, v any) {
		sets = append(sets, col+" = ?")
		args = append(args, v)
		changed = append(changed, col)
	}
	if in.Objective != nil {
		if strings.TrimSpace(*in.Objective) == "" {
			return nil, invalid("checkpoint", "objective", "must not be empty")
		}
		add("objective", *in.Objective)
	}
	if in.AcceptanceCriteria != nil {
		add("acceptance_criteria", listJSON(in.AcceptanceCriteria))
	}
	if in.Summary != nil {
		add("summary", *in.Summary)
	}
	if in.NextActions != nil {
		add("next_actions", listJSON(in.NextActions))
	}
	if in.PendingTaskIDs != nil {
		add("pending_task_ids", listJSON(in.PendingTaskIDs))
	}
	if len(sets) == 0 {
		return nil, primitive.Failed("invalid_input", "run.checkpoint: give at least one of objective, acceptance_criteria, summary, next_actions, pending_task_ids to update run %s", in.ID)
	}
	err := s.DB.InTx(ctx, func(tx *sql.Tx) error {
		var state string
		var version int
		err := tx.QueryRowContext(ctx, `SELECT state, version FROM runs WHERE id = ?`, in.ID).Scan(&state, &version)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("checkpoint", in.ID)
		}
		if err != nil {
			return err
		}
		if state != "open" {
			return primitive.Conflict("run_closed", "run.checkpoint: run %s is closed; start a new run", in.ID)
		}
		q := `UPDATE runs SET ` + strings.Join(sets, ", ") + `, version = version + 1, updated_at = ? WHERE id = ?`
		if _, err := tx.ExecContext(ctx, q, append(args, now, in.ID)...); err != nil {
			return fmt.Errorf("update run: %w", err)
		}
		data := map[string]any{"version": version + 1, "changed": changed}
		if in.Summary != nil {
			data["summary"] = *in.Summary
		}
		return AppendTx(ctx, tx, "", KindRunCheckpoint, in.ID, data)
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, route, in.ID)
}

const runCols = `id, state, objective, acceptance_criteria, summary, next_actions, pending_task_ids, version, created_at, updated_at, closed_at`

func scanRun(sc interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var ac, na, pt string
	var created, updated int64
	var closed sql.NullInt64
	if err := sc.Scan(&r.ID, &r.State, &r.Objective, &ac, &r.Summary, &na, &pt, &r.Version, &created, &updated, &closed); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		s   string
		dst *[]string
	}{{ac, &r.AcceptanceCriteria}, {na, &r.NextActions}, {pt, &r.PendingTaskIDs}} {
		if err := json.Unmarshal([]byte(p.s), p.dst); err != nil {
			return nil, fmt.Errorf("decode run %s: %w", r.ID, err)
		}
		if *p.dst == nil {
			*p.dst = []string{}
		}
	}
	r.CreatedAt = time.UnixMilli(created).UTC()
	r.UpdatedAt = time.UnixMilli(updated).UTC()
	if closed.Valid {
		t := time.UnixMilli(closed.Int64).UTC()
		r.ClosedAt = &t
	}
	return &r, nil
}

// Get returns a run with the continuations the conversation caller
// scheduled for it (another conversation's are not listed).
func (s *Service) Get(ctx context.Context, caller, id string) (*Run, error) {
	r, err := scanRun(s.DB.R.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	if err != nil {
		return nil, err
	}
	if err := s.settleDue(ctx); err != nil {
		s.Log.Error("settle continuations", "err", err)
	}
	cs, err := s.continuationsOf(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	r.Continuations = cs
	return r, nil
}

// List returns runs, most recently updated first; state filters when set.
func (s *Service) List(ctx context.Context, state string, limit int) ([]RunSummary, error) {
	q := `SELECT id, state, objective, version, updated_at FROM runs`
	args := []any{}
	if state != "" {
		q += ` WHERE state = ?`
		args = append(args, state)
	}
	q += ` ORDER BY updated_at DESC, id LIMIT ?`
	rows, err := s.DB.R.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	out := []RunSummary{}
	for rows.Next() {
		var r RunSummary
		var updated int64
		if err := rows.Scan(&r.ID, &r.State, &r.Objective, &r.Version, &updated); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if utf8.RuneCountInString(r.Objective) > 200 {
			r.Objective = string([]rune(r.Objective)[:200]) + "…"
		}
		r.UpdatedAt = time.UnixMilli(updated).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Close closes an open run, optionally with a final summary, and returns
// it as Get does for the conversation caller.
func (s *Service) Close(ctx context.Context, caller, id string, summary *string) (*Run, error) {
	if summary != nil {
		if err := checkText("close", "summary", *summary, MaxSummary); err != nil {
			return nil, err
		}
	}
	ctx = context.WithoutCancel(ctx)
	now := time.Now().UnixMilli()
	err := s.DB.InTx(ctx, func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM runs WHERE id = ?`, id).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("close", id)
		}
		if err != nil {
			return err
		}
		if state != "open" {
			return primitive.Conflict("run_closed", "run.close: run %s is already closed", id)
		}
		q := `UPDATE runs SET state = 'closed', closed_at = ?, updated_at = ?, version = version + 1`
		args := []any{now, now}
		if summary != nil {
			q += `, summary = ?`
			args = append(args, *summary)
		}
		if _, err := tx.ExecContext(ctx, q+` WHERE id = ?`, append(args, id)...); err != nil {
			return fmt.Errorf("close run: %w", err)
		}
		data := map[string]any{}
		if summary != nil {
			data["summary"] = *summary
		}
		return AppendTx(ctx, tx, "", KindRunClosed, id, data)
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, caller, id)
}
