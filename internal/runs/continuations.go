package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unicode"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Continuation bounds.
const (
	MaxPrompt = 8000
	MaxTarget = 256
	MaxDelay  = 30 * 24 * time.Hour
)

// Continuation states. Hearth never resumes a conversation by itself, so
// none of them means "it happened".
const (
	ContScheduled = "scheduled"
	ContBlocked   = "blocked" // due with no target: nothing to address
	ContDryRun    = "dry_run" // due with a target, oracle not armed
	ContReady     = "ready"   // due with a target, armed: command built, not run
	// ContWoken is the one state in which Hearth did act: a due
	// browser_tab continuation typed into the conversation's bound tab
	// while wake was armed.
	ContWoken = "woken"
)

// TabWaker wakes the bound browser tab of a conversation (wake.Service).
type TabWaker interface {
	Armed() bool
	WakeTab(ctx context.Context, route, tab, prompt string) error
}

// Continuation is a scheduled prompt for a run.
type Continuation struct {
	ID        string            `json:"id"`
	RunID     string            `json:"run_id"`
	State     string            `json:"state"`
	Prompt    string            `json:"prompt"`
	Target    map[string]string `json:"target,omitempty"`
	DueAt     time.Time         `json:"due_at"`
	Reason    string            `json:"reason,omitempty"`
	Command   *Command          `json:"command,omitempty"`
	Executed  bool              `json:"executed"`
	CreatedAt time.Time         `json:"created_at"`
	SettledAt *time.Time        `json:"settled_at,omitempty"`
}

// Command is a continuation command Hearth built but did not run.
type Command struct {
	Argv   []string `json:"argv"`
	Text   string   `json:"text"`
	DryRun bool     `json:"dry_run"`
	Note   string   `json:"note"`
}

// ScheduleInput is run.schedule_continuation's input.
type ScheduleInput struct {
	RunID   string            `json:"run_id"`
	Prompt  string            `json:"prompt"`
	DelayMS *int64            `json:"delay_ms"`
	RunAt   string            `json:"run_at"`
	Target  map[string]string `json:"target"`
}

// Schedule records a continuation of an open run.
func (s *Service) Schedule(ctx context.Context, route string, in ScheduleInput) (*Continuation, error) {
	const op = "schedule_continuation"
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, invalid(op, "prompt", "must not be empty")
	}
	if err := checkText(op, "prompt", in.Prompt, MaxPrompt); err != nil {
		return nil, err
	}
	now := time.Now()
	due := now
	switch {
	case in.DelayMS != nil && in.RunAt != "":
		return nil, invalid(op, "run_at", "give delay_ms or run_at, not both")
	case in.DelayMS != nil:
		if *in.DelayMS < 0 || time.Duration(*in.DelayMS)*time.Millisecond > MaxDelay {
			return nil, invalid(op, "delay_ms", "must be between 0 and %d", MaxDelay.Milliseconds())
		}
		due = now.Add(time.Duration(*in.DelayMS) * time.Millisecond)
	case in.RunAt != "":
		t, err := time.Parse(time.RFC3339, in.RunAt)
		if err != nil {
			return nil, invalid(op, "run_at", "must be an RFC 3339 time such as 2026-05-01T09:00:00Z")
		}
		if t.Sub(now) > MaxDelay {
			return nil, invalid(op, "run_at", "is more than %v from now", MaxDelay)
		}
		if t.After(now) {
			due = t
		}
	}
	kind, target := "", ""
	if in.Target != nil {
		if len(in.Target) != 1 {
			return nil, invalid(op, "target", "give exactly one of session or browser_tab")
		}
		for k, v := range in.Target {
			kind, target = k, v
		}
		if strings.TrimSpace(target) == "" || len(target) > MaxTarget || strings.ContainsFunc(target, unicode.IsControl) {
			return nil, invalid(op, "target."+kind, "must be a non-empty name of at most %d bytes without control characters", MaxTarget)
		}
	}
	id := primitive.NewID("cnt")
	ctx = context.WithoutCancel(ctx)
	err := s.DB.InTx(ctx, func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM runs WHERE id = ?`, in.RunID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(op, in.RunID)
		}
		if err != nil {
			return err
		}
		if state != "open" {
			return primitive.Conflict("run_closed", "run.%s: run %s is closed", op, in.RunID)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO continuations(id, run_id, route, prompt, target_kind, target, due_at, state, created_at)
			VALUES (?,?,?,?,?,?,?,'scheduled',?)`, id, in.RunID, route, in.Prompt, kind, target, due.UnixMilli(), now.UnixMilli())
		if err != nil {
			return fmt.Errorf("schedule continuation: %w", err)
		}
		data := map[string]any{"continuation_id": id, "due_at": due.UTC().Format(time.RFC3339Nano)}
		if kind != "" {
			data["target_kind"] = kind
		}
		return AppendTx(ctx, tx, "", KindContinuationAdded, in.RunID, data)
	})
	if err != nil {
		return nil, err
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return s.Continuation(ctx, route, id)
}

const contCols = `id, run_id, state, prompt, target_kind, target, due_at, reason, command, created_at, settled_at`

func (s *Service) scanContinuation(sc interface{ Scan(...any) error }) (*Continuation, error) {
	var c Continuation
	var kind, target string
	var due, created int64
	var command sql.NullString
	var settled sql.NullInt64
	if err := sc.Scan(&c.ID, &c.RunID, &c.State, &c.Prompt, &kind, &target, &due, &c.Reason, &command, &created, &settled); err != nil {
		return nil, err
	}
	if kind != "" {
		c.Target = map[string]string{kind: target}
	}
	c.Executed = c.State == ContWoken
	c.DueAt = time.UnixMilli(due).UTC()
	c.CreatedAt = time.UnixMilli(created).UTC()
	if settled.Valid {
		t := time.UnixMilli(settled.Int64).UTC()
		c.SettledAt = &t
	}
	if command.Valid {
		var argv []string
		if err := json.Unmarshal([]byte(command.String), &argv); err == nil {
			c.Command = newCommand(argv, c.State == ContDryRun)
		}
	}
	return &c, nil
}

// Continuation returns one continuation of the conversation caller (its
// route; primitive.RouteMatch), settling it first when due. Another
// conversation's continuation is answered exactly like an id that never
// existed: its prompt is that conversation's.
func (s *Service) Continuation(ctx context.Context, caller, id string) (*Continuation, error) {
	if err := s.settleDue(ctx); err != nil {
		s.Log.Error("settle continuations", "err", err)
	}
	cond, arg := primitive.RouteMatch("route", caller)
	c, err := s.scanContinuation(s.DB.R.QueryRowContext(ctx, `SELECT `+contCols+` FROM continuations WHERE id = ? AND `+cond, id, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, primitive.Failed("not_found", "run.continuation_status: no continuation %q", id)
	}
	return c, err
}

// continuationsOf lists run runID's continuations of the conversation
// caller: a run is shared by every conversation, its continuations' prompts
// are not.
func (s *Service) continuationsOf(ctx context.Context, caller, runID string) ([]Continuation, error) {
	cond, arg := primitive.RouteMatch("route", caller)
	rows, err := s.DB.R.QueryContext(ctx, `SELECT `+contCols+` FROM continuations WHERE run_id = ? AND `+cond+` ORDER BY created_at, id`, runID, arg)
	if err != nil {
		return nil, fmt.Errorf("list continuations: %w", err)
	}
	defer rows.Close()
	var out []Continuation
	for rows.Next() {
		c, err := s.scanContinuation(rows)
		if err != nil {
			return nil, fmt.Errorf("list continuations: %w", err)
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}

func (s *Service) armed() bool { return s.OracleArmed != nil && s.OracleArmed() }

// settleDue settles every scheduled continuation whose time has come and
// queues an arrival for its conversation saying what (not) happened.
func (s *Service) settleDue(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	now := time.Now()
	rows, err := s.DB.R.QueryContext(ctx, `SELECT id, route, run_id, prompt, target_kind, target FROM continuations WHERE state = 'scheduled' AND due_at <= ? ORDER BY due_at`, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("find due continuations: %w", err)
	}
	type due struct{ id, route, run, prompt, kind, target string }
	var list []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.id, &d.route, &d.run, &d.prompt, &d.kind, &d.target); err != nil {
			rows.Close()
			return err
		}
		list = append(list, d)
	}
	rows.Close()
	for _, d := range list {
		state, reason := ContBlocked, "no target: Hearth cannot resume a conversation by itself; read the prompt with continuation_status and continue from it"
		var argv []string
		var env *dispatch.Envelope
		if d.kind == "browser_tab" && s.Tabs != nil && s.Tabs.Armed() {
			if err := s.settleWake(ctx, d.id, d.route, d.run, d.prompt, d.target, now); err != nil {
				return err
			}
			continue
		}
		switch {
		case d.kind == "":
			env = dispatch.ErrorEnvelope("run.schedule_continuation", primitive.Blocked("no_target", "continuation %s of run %s is due, but it has no target, so nothing was sent", d.id, d.run))
		case !s.armed():
			state, reason = ContDryRun, "oracle.armed is false: only a dry-run command was built; nothing was sent"
			argv = oracleArgv(d.prompt, true)
			env = dispatch.ErrorEnvelope("run.schedule_continuation", primitive.Blocked("dry_run", "continuation %s of run %s is due; oracle is not armed, so Hearth built a dry-run command and sent nothing", d.id, d.run))
		default:
			state, reason = ContReady, "oracle.armed is true: the command is built but Hearth does not run it; run it with machine.exec or task.submit if you want it sent"
			argv = oracleArgv(d.prompt, false)
			env = dispatch.ErrorEnvelope("run.schedule_continuation", primitive.Blocked("not_executed", "continuation %s of run %s is due; its command is built but was not run", d.id, d.run))
		}
		details := map[string]any{"continuation_id": d.id, "run_id": d.run, "state": state, "executed": false, "prompt": d.prompt}
		var cmdJSON any
		if argv != nil {
			details["target"] = map[string]string{d.kind: d.target}
			details["command"] = newCommand(argv, state == ContDryRun)
			b, _ := json.Marshal(argv)
			cmdJSON = string(b)
		}
		env.Error.Details = details
		payload := s.Arrivals.Payload(ctx, d.route, d.id, env)
		err := s.DB.InTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE continuations SET state = ?, reason = ?, command = ?, settled_at = ? WHERE id = ? AND state = 'scheduled'`,
				state, reason, cmdJSON, now.UnixMilli(), d.id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			if err := AppendTx(ctx, tx, "", KindContinuationDue, d.run, map[string]any{"continuation_id": d.id, "state": state, "executed": false}); err != nil {
				return err
			}
			return dispatch.EnqueueArrival(ctx, tx, d.route, d.id, payload, now)
		})
		if err != nil {
			return fmt.Errorf("settle continuation %s: %w", d.id, err)
		}
	}
	return nil
}

// settleWake settles a due browser_tab continuation while wake is armed:
// it claims the continuation first (so that it is typed at most once, even
// when two settlers race or Hearth stops mid-way), wakes the bound tab of
// its conversation with its prompt, and then records the outcome (woken,
// or blocked with the reason) with its arrival.
func (s *Service) settleWake(ctx context.Context, id, route, run, prompt, target string, now time.Time) error {
	res, err := s.DB.W.ExecContext(ctx, `UPDATE continuations SET state = 'woken', reason = 'being typed into the bound tab', settled_at = ? WHERE id = ? AND state = 'scheduled'`, now.UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("claim continuation %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // settled by another pass
	}
	state, reason := ContWoken, "wake.armed is true: the prompt was typed into this conversation's bound tab and sent"
	details := map[string]any{"continuation_id": id, "run_id": run, "state": state, "executed": true, "prompt": prompt,
		"target": map[string]string{"browser_tab": target}}
	env := &dispatch.Envelope{State: primitive.StateCompleted, Primitive: "run.schedule_continuation", Result: details}
	if werr := s.Tabs.WakeTab(ctx, route, target, prompt); werr != nil {
		state, reason = ContBlocked, "wake.armed is true, but the tab was not woken: "+werr.Error()
		details["state"], details["executed"] = state, false
		env = dispatch.ErrorEnvelope("run.schedule_continuation", primitive.Blocked("not_woken", "continuation %s of run %s is due; its tab was not woken: %s", id, run, werr.Error()))
		env.Error.Details = details
	}
	payload := s.Arrivals.Payload(ctx, route, id, env)
	err = s.DB.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE continuations SET state = ?, reason = ? WHERE id = ?`, state, reason, id); err != nil {
			return err
		}
		if err := AppendTx(ctx, tx, "", KindContinuationDue, run, map[string]any{"continuation_id": id, "state": state, "executed": state == ContWoken}); err != nil {
			return err
		}
		return dispatch.EnqueueArrival(ctx, tx, route, id, payload, now)
	})
	if err != nil {
		return fmt.Errorf("settle continuation %s: %w", id, err)
	}
	return nil
}

// oracleArgv builds the Oracle CLI command for a prompt: with dryRun, the
// preview that sends nothing.
func oracleArgv(prompt string, dryRun bool) []string {
	argv := []string{"oracle"}
	if dryRun {
		argv = append(argv, "--dry-run", "summary")
	}
	return append(argv, "--engine", "browser", "-p", prompt)
}

func newCommand(argv []string, dryRun bool) *Command {
	note := "Built by Hearth and not run. The target is not part of the command: direct it to that session or tab yourself."
	return &Command{Argv: argv, Text: commandText(argv, runtime.GOOS), DryRun: dryRun, Note: note}
}

// commandText renders argv for display, quoted for the host's shell
// conventions so that copying it cannot split or expand an argument.
func commandText(argv []string, goos string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if goos == "windows" {
			parts[i] = windowsQuote(a)
		} else {
			parts[i] = posixQuote(a)
		}
	}
	return strings.Join(parts, " ")
}

func posixQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// windowsQuote quotes one argument by the CommandLineToArgvW rules.
func windowsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\v\"") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for _, r := range s {
		switch r {
		case '\\':
			slashes++
			continue
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
		}
		slashes = 0
		b.WriteRune(r)
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}

// Start settles continuations as they fall due until Stop.
func (s *Service) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.Events.startRecorder(ctx, &s.wg)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			if err := s.settleDue(ctx); err != nil && ctx.Err() == nil {
				s.Log.Error("settle continuations", "err", err)
			}
			wait := time.Hour
			var next sql.NullInt64
			if err := s.DB.R.QueryRowContext(ctx, `SELECT MIN(due_at) FROM continuations WHERE state = 'scheduled'`).Scan(&next); err == nil && next.Valid {
				wait = min(wait, max(time.Until(time.UnixMilli(next.Int64)), 0)+10*time.Millisecond)
			}
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-s.kick:
			case <-timer.C:
			}
			timer.Stop()
		}
	}()
}

// Stop ends the continuation timer.
func (s *Service) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}
