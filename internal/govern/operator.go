package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// Decisions records the human operator's decisions in governance: reset,
// queue resume, permits, allow-rules, reconciliation and policy. It only
// records (the engines' side is control.Operator, which the panel and the
// tray use and which carries out what a decision leaves to do); the CLI,
// with no engines running, uses it directly. No MCP tool, scatter kind or
// recipe step can reach it.
type Decisions struct {
	G *Governor
}

func checkOperator(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("operator name is required")
	}
	return nil
}

// Latch sets the e-stop (machine.estop latches it with by "model") and
// holds the job queue, in one transaction. It only latches: every call
// admitted from then on is refused, and stopping the work already running
// is the engines' (internal/control does both). A latch while it is
// already latched keeps the first press's record and adds this one to
// its history (EStopState.Later); the ledger has both.
func (g *Governor) Latch(ctx context.Context, by, reason string) error {
	if strings.TrimSpace(reason) == "" {
		reason = "no reason given"
	}
	now := g.now().UTC()
	err := g.DB.InTx(ctx, func(tx *sql.Tx) error {
		var st EStopState
		if _, err := getSetting(ctx, tx, keyEStop, &st); err != nil {
			return err
		}
		again := st.Latched
		if again {
			if len(st.Later) < MaxLaterLatches {
				st.Later = append(st.Later, EStopPress{By: by, Reason: reason, At: now})
			} else {
				st.Dropped++
			}
		} else {
			st = EStopState{Latched: true, Reason: reason, By: by, At: now}
		}
		if err := putSetting(ctx, tx, keyEStop, st); err != nil {
			return err
		}
		if err := putSetting(ctx, tx, keyQueueHeld, true); err != nil {
			return err
		}
		entry := map[string]any{"by": by, "reason": reason}
		if again {
			entry["while_latched_by"] = st.By
		}
		_, err := g.Ledger.AppendTx(ctx, tx, "estop", entry)
		return err
	})
	if err != nil {
		return fmt.Errorf("latch e-stop: %w", err)
	}
	return nil
}

// EStop latches the emergency stop on the operator's behalf.
func (o *Decisions) EStop(ctx context.Context, operator, reason string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.Latch(ctx, "operator:"+operator, reason)
}

// Reset releases the e-stop latch and nothing else: a held queue stays held
// until ResumeQueue.
func (o *Decisions) Reset(ctx context.Context, operator string) error {
	return o.withEStop(ctx, operator, func(tx *sql.Tx, st EStopState) error {
		if !st.Latched {
			return errors.New("the e-stop is not latched")
		}
		if err := putSetting(ctx, tx, keyEStop, EStopState{}); err != nil {
			return err
		}
		return o.G.noteLowered(ctx, tx, ledger.KindReset, map[string]any{"operator": operator, "released_reason": st.Reason},
			"reset the emergency stop", operator)
	})
}

// ResumeQueue releases a held job queue (the queue reads the hold before
// it starts anything; the caller wakes it). Refused while the e-stop is
// latched.
func (o *Decisions) ResumeQueue(ctx context.Context, operator string) error {
	return o.withEStop(ctx, operator, func(tx *sql.Tx, st EStopState) error {
		if st.Latched {
			return errors.New("reset the e-stop before resuming the queue")
		}
		if err := putSetting(ctx, tx, keyQueueHeld, false); err != nil {
			return err
		}
		_, err := o.G.Ledger.AppendTx(ctx, tx, "queue_resume", map[string]any{"operator": operator})
		return err
	})
}

// withEStop runs change for a named operator in one transaction with the
// e-stop state it reads there.
func (o *Decisions) withEStop(ctx context.Context, operator string, change func(tx *sql.Tx, st EStopState) error) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		var st EStopState
		if _, err := getSetting(ctx, tx, keyEStop, &st); err != nil {
			return err
		}
		return change(tx, st)
	})
}

// Permit is a permit as the operator sees it: the exact input.
type Permit struct {
	ID        string    `json:"id"`
	Primitive string    `json:"primitive"`
	Input     string    `json:"input"`
	Digest    string    `json:"input_sha256"`
	FutureID  string    `json:"future_id"`
	CommandID string    `json:"command_id"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// DecidedAt is when the operator decided (or the permit expired);
	// zero while it waits.
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// Programs are what an exec would start, for the "always allow" choice.
	Programs []ProgramUse `json:"programs,omitempty"`
	// Case is the call's case in the risk table (internal/risk), Subject
	// what it acts on (a path, an application) and Said what it would do,
	// completing "ChatGPT wants to …".
	Case    string `json:"case,omitempty"`
	Subject string `json:"subject,omitempty"`
	Said    string `json:"said,omitempty"`
	// Asks are, for a file operation, the items that make it ask, each
	// with the file that does and why (callpath.Ask); the card names
	// them and lists every item under Details.
	Asks []callpath.Ask `json:"asks,omitempty"`
}

// Permits lists permits in state ("" for all), newest first.
func (o *Decisions) Permits(ctx context.Context, state string) ([]Permit, error) {
	if state != "" {
		return o.list(ctx, ` WHERE state = ? ORDER BY created_at DESC`, state)
	}
	return o.list(ctx, ` ORDER BY created_at DESC`)
}

// list reads the permits that where (a WHERE and ORDER BY clause, or
// only the latter) selects.
func (o *Decisions) list(ctx context.Context, where string, args ...any) ([]Permit, error) {
	q := `SELECT id, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at, decided_at, risk_case, subject, said, asks FROM permits`
	rows, err := o.G.DB.R.QueryContext(ctx, q+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Permit
	for rows.Next() {
		var p Permit
		var c, e int64
		var d sql.NullInt64
		var asks string
		if err := rows.Scan(&p.ID, &p.Primitive, &p.Input, &p.Digest, &p.FutureID, &p.CommandID, &p.State, &c, &e, &d, &p.Case, &p.Subject, &p.Said, &asks); err != nil {
			return nil, err
		}
		if asks != "" {
			if err := json.Unmarshal([]byte(asks), &p.Asks); err != nil {
				return nil, fmt.Errorf("read the items that ask of permit %s: %w", p.ID, err)
			}
		}
		p.CreatedAt, p.ExpiresAt = time.UnixMilli(c).UTC(), time.UnixMilli(e).UTC()
		if d.Valid {
			p.DecidedAt = time.UnixMilli(d.Int64).UTC()
		}
		if f := o.G.Programs[p.Primitive]; f != nil {
			p.Programs = f([]byte(p.Input))
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ErrExpired refuses approving an expired permit.
var ErrExpired = errors.New("permit expired")

// ErrEStopLatched refuses approving a permit, or adding an allow-rule or
// folder rule, while the e-stop is latched: the permit keeps waiting (it
// may still be denied, or expire) and can be approved once the operator
// has reset the stop; nothing of the refused step is stored.
var ErrEStopLatched = errors.New("the emergency stop is on")

// Approve approves a pending permit once and returns the approval for the
// caller to carry out: the parked work is released to run exactly its
// journaled input. While the e-stop is latched it approves nothing and
// returns ErrEStopLatched. With always set, the rule is added in the same
// transaction (so an approval refused stores no rule either). The
// approval is committed before anything is released; a process stopped
// in between leaves the work parked under an approved permit, which the
// next start releases (Governor.Parked).
func (o *Decisions) Approve(ctx context.Context, permitID, operator string, always *Rule) (Decision, error) {
	var also func(tx *sql.Tx) error
	if always != nil {
		pins, err := o.G.pinsOfPermit(ctx, permitID, *always)
		if err != nil {
			return Decision{}, err
		}
		also = func(tx *sql.Tx) error {
			_, err := o.G.addRuleTx(ctx, tx, operator, always.Program, always.CwdRoot, always.Args, pins)
			return err
		}
	}
	return o.approve(ctx, permitID, operator, also)
}

// approve approves a pending permit once, doing also (a rule the card
// offered) in the approval's transaction: both are stored or neither.
func (o *Decisions) approve(ctx context.Context, permitID, operator string, also func(tx *sql.Tx) error) (Decision, error) {
	if err := checkOperator(operator); err != nil {
		return Decision{}, err
	}
	g := o.G
	var fut, prim string
	var exp int64
	err := g.DB.R.QueryRowContext(ctx, `SELECT future_id, primitive, expires_at FROM permits WHERE id = ? AND state = 'pending'`, permitID).Scan(&fut, &prim, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return Decision{}, fmt.Errorf("permit %s is not pending (already decided, expired or unknown)", permitID)
	}
	if err != nil {
		return Decision{}, err
	}
	if !g.now().Before(time.UnixMilli(exp)) {
		g.permitRequested() // the expiry loop expires it now
		return Decision{}, fmt.Errorf("permit %s: %w", permitID, ErrExpired)
	}
	changed, err := g.decide(ctx, permitID, "approved", operator, "permit_approved", func(tx *sql.Tx) error {
		// Read in the approval's own transaction: an approval never
		// commits while the e-stop is latched (nothing it released could
		// run), so the permit keeps waiting and the ledger never says
		// "approved" for a call the e-stop refuses.
		if err := refuseWhileLatched(ctx, tx); err != nil {
			return err
		}
		if also == nil {
			return nil
		}
		return also(tx)
	})
	if err != nil {
		return Decision{}, err
	}
	if !changed {
		return Decision{}, fmt.Errorf("permit %s is not pending", permitID)
	}
	return Decision{PermitID: permitID, FutureID: fut, Primitive: prim}, nil
}

// refuseWhileLatched returns ErrEStopLatched while the e-stop is
// latched, read in tx: nothing is approved and no rule is added then, so
// a stop the operator pressed cannot be walked around by a rule made
// meanwhile.
func refuseWhileLatched(ctx context.Context, tx *sql.Tx) error {
	var st EStopState
	if _, err := getSetting(ctx, tx, keyEStop, &st); err != nil {
		return err
	}
	if st.Latched {
		return ErrEStopLatched
	}
	return nil
}

// Deny denies a pending permit and returns the denial for the caller to
// carry out: the parked call arrives as blocked.
func (o *Decisions) Deny(ctx context.Context, permitID, operator string) (Decision, error) {
	if err := checkOperator(operator); err != nil {
		return Decision{}, err
	}
	g := o.G
	var fut, prim string
	if err := g.DB.R.QueryRowContext(ctx, `SELECT future_id, primitive FROM permits WHERE id = ?`, permitID).Scan(&fut, &prim); err != nil {
		return Decision{}, fmt.Errorf("permit %s: %w", permitID, err)
	}
	changed, err := g.decide(ctx, permitID, "denied", operator, "permit_denied", nil)
	if err != nil {
		return Decision{}, err
	}
	if !changed {
		return Decision{}, fmt.Errorf("permit %s is not pending", permitID)
	}
	return Decision{PermitID: permitID, FutureID: fut, Primitive: prim,
		Refusal: primitive.Blocked("permit_denied", "The operator denied this call at %s (this PC's clock), so Hearth did not run it. "+
			"The same call in this conversation gets this answer for %d minutes, unless the operator chooses \"Ask again\" on Hearth's Permits page.",
			g.now().Local().Format("15:04"), int(DenialHold.Minutes())).WithDetails(map[string]any{"permit_id": permitID})}, nil
}

// AddRule adds an allow-rule for program in cwdRoot ("" for anywhere)
// covering the calls whose arguments begin with args. A program that
// runs any code it is given (risk.AsksEveryTime) is refused: it asks
// every time. While the e-stop is latched it adds nothing and returns
// ErrEStopLatched.
func (o *Decisions) AddRule(ctx context.Context, operator, program, cwdRoot string, args ...string) (Rule, error) {
	if err := checkOperator(operator); err != nil {
		return Rule{}, err
	}
	pins, err := o.G.takePins(program, args, cwdRoot, cwdRoot)
	if err != nil {
		return Rule{}, err
	}
	var r Rule
	err = o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = o.G.addRuleTx(ctx, tx, operator, program, cwdRoot, args, pins)
		return err
	})
	return r, err
}

// ErrAsksEveryTime refuses a rule for a program no rule may cover.
var ErrAsksEveryTime = errors.New("no rule may cover this program")

func (g *Governor) addRuleTx(ctx context.Context, tx *sql.Tx, operator, program, cwdRoot string, args []string, pins *RulePins) (Rule, error) {
	if strings.TrimSpace(program) == "" {
		return Rule{}, errors.New("rule program is required")
	}
	if cwdRoot != "" && !isAbsPath(cwdRoot) {
		return Rule{}, fmt.Errorf("rule cwd_root %q is not an absolute path", cwdRoot)
	}
	if why := g.RuleRefusal(program); why != "" {
		return Rule{}, fmt.Errorf("rule program %q: %s: %w", program, why, ErrAsksEveryTime)
	}
	if !risk.RunsOthers(program) {
		if arg, why := g.ArgRunnerWhy(args, cwdRoot); why != "" {
			return Rule{}, fmt.Errorf("rule for %s: its argument %s %s: %w", program, arg, why, ErrAsksEveryTime)
		}
	}
	if err := refuseWhileLatched(ctx, tx); err != nil {
		return Rule{}, err
	}
	if args == nil {
		args = []string{}
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return Rule{}, fmt.Errorf("rule arguments: %w", err)
	}
	if pins == nil {
		pins = &RulePins{}
	}
	pinsJSON, err := json.Marshal(pins)
	if err != nil {
		return Rule{}, fmt.Errorf("rule pins: %w", err)
	}
	// The same rule again (the operator chose Always allow after a pinned
	// file changed) replaces the old one: its pins are now.
	if _, err := tx.ExecContext(ctx, `DELETE FROM rules WHERE program = ? AND args = ? AND cwd_root = ?`, program, string(argsJSON), cwdRoot); err != nil {
		return Rule{}, err
	}
	r := Rule{ID: primitive.NewID("rul"), Program: program, Args: args, CwdRoot: cwdRoot, Interpreter: IsInterpreter(program), CreatedBy: operator, CreatedAt: g.now().UTC(), Pins: pins}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rules(id, program, args, cwd_root, interpreter, created_by, created_at, pins) VALUES (?,?,?,?,?,?,?,?)`,
		r.ID, r.Program, string(argsJSON), r.CwdRoot, boolInt(r.Interpreter), r.CreatedBy, r.CreatedAt.UnixMilli(), string(pinsJSON)); err != nil {
		return Rule{}, err
	}
	what := "added an always-rule for " + ruleWords(program, args)
	if cwdRoot != "" {
		what += " in " + cwdRoot
	}
	err = g.noteLowered(ctx, tx, ledger.KindRuleAdded, map[string]any{"rule_id": r.ID, "program": program, "args": args, "cwd_root": cwdRoot, "operator": operator, "pins": pins},
		what, operator)
	return r, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RemoveRule removes an allow-rule.
func (o *Decisions) RemoveRule(ctx context.Context, operator, id string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM rules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no rule %s", id)
		}
		_, err = o.G.Ledger.AppendTx(ctx, tx, "rule_removed", map[string]any{"rule_id": id, "operator": operator})
		return err
	})
}

// Unknown is an open UNKNOWN outcome.
type Unknown struct {
	CommandID string    `json:"command_id"`
	Primitive string    `json:"primitive"`
	Route     string    `json:"route"`
	CreatedAt time.Time `json:"created_at"`
	// StartedAt is when the interrupted command began (its intent), zero
	// when no command was journaled under CommandID.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Input is what the interrupted work was asked (the stored input of
	// its future or job), "" when Hearth kept none: a call that was
	// still within the inline budget keeps only its digest.
	Input string `json:"input,omitempty"`
}

// UnknownBlocking returns the open UNKNOWN that would refuse the call
// parked as futureID if it were released now (its conversation's gate,
// as Admit reads it), or nil: a card must not promise that an allowed
// call runs when this gate will refuse it.
func (g *Governor) UnknownBlocking(ctx context.Context, futureID string) (*Unknown, error) {
	f, ok, err := g.Futures.Future(ctx, futureID)
	if err != nil || !ok {
		return nil, err
	}
	if kind, ok := g.rows().KindOf(f.Primitive); ok && (kind == risk.KindRead || kind == risk.KindControl || kind == risk.KindSeveral) {
		return nil, nil // passes the gate (Admit)
	}
	open, err := g.openUnknown(ctx, f.Route, "")
	if err != nil || open == "" {
		return nil, err
	}
	us, err := g.Unknowns(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if u.CommandID == open {
			return &u, nil
		}
	}
	return nil, nil
}

// Unknowns lists open UNKNOWN outcomes (route "" for all).
func (g *Governor) Unknowns(ctx context.Context, route string) ([]Unknown, error) {
	q := `SELECT u.command_id, u.primitive, u.route, u.created_at, c.created_at FROM unknowns u
		LEFT JOIN commands c ON c.command_id = u.command_id WHERE u.reconciled_at IS NULL`
	var args []any
	if route != "" {
		q += ` AND u.route = ?`
		args = append(args, route)
	}
	rows, err := g.DB.R.QueryContext(ctx, q+` ORDER BY u.created_at`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Unknown
	for rows.Next() {
		var u Unknown
		var at int64
		var started sql.NullInt64
		if err := rows.Scan(&u.CommandID, &u.Primitive, &u.Route, &at, &started); err != nil {
			return nil, err
		}
		u.CreatedAt = time.UnixMilli(at).UTC()
		if started.Valid {
			u.StartedAt = time.UnixMilli(started.Int64).UTC()
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// What it was asked: the input of its future (a call that outlived
	// the inline budget), or of the job's future the UNKNOWN names.
	for i, u := range out {
		f, ok, err := g.Futures.FutureOfCommand(ctx, u.CommandID)
		if err == nil && !ok {
			f, ok, err = g.Futures.Future(ctx, u.CommandID)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out[i].Input = f.Input
		}
	}
	return out, nil
}

// reconcile closes an open UNKNOWN in scope (a route, by primitive.RouteMatch; any
// route when scope is "").
func (g *Governor) reconcile(ctx context.Context, scope, commandID, by, observed string) error {
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		q := `UPDATE unknowns SET reconciled_at = ?, reconciled_by = ?, observed = ? WHERE command_id = ? AND reconciled_at IS NULL`
		args := []any{g.now().UnixMilli(), by, observed, commandID}
		if scope != "" {
			cond, arg := primitive.RouteMatch("route", scope)
			q += ` AND ` + cond
			args = append(args, arg)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return primitive.Failed("not_found", "no open UNKNOWN outcome %s in this conversation", commandID)
		}
		// The observation is the model's or operator's text; only its
		// length is journaled, never its content.
		_, err = g.Ledger.AppendTx(ctx, tx, "reconcile", map[string]any{"command_id": commandID, "by": by, "observed_bytes": len(observed)})
		return err
	})
}

// Reconcile closes an UNKNOWN outcome on the operator's word.
func (o *Decisions) Reconcile(ctx context.Context, operator, commandID, observed string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.reconcile(ctx, "", commandID, "operator:"+operator, observed)
}

// SetPolicy changes the policy mode: kept in config.json first (SaveMode),
// then in the database and the ledger in one transaction, so that the
// mode the operator set is the one config.json, doctor, host_info, the
// tools' descriptions and the tray show.
func (o *Decisions) SetPolicy(ctx context.Context, operator, mode string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	switch mode {
	case config.ModeAsk, config.ModeTrusted, config.ModeReadOnly:
	default:
		return fmt.Errorf("policy mode %q is not one of ask, trusted, read-only", mode)
	}
	g := o.G
	from := g.Mode(ctx)
	if g.SaveMode != nil {
		if err := g.SaveMode(mode); err != nil {
			return fmt.Errorf("keep policy mode %s in the config file: %w", mode, err)
		}
	}
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		return g.setPolicyTx(ctx, tx, from, mode, operator, "switched to trusted mode (ChatGPT's changes run without asking)")
	})
}

// setPolicyTx puts mode in force and journals the change from from, in
// tx; a switch to trusted is a lowering (noteLowered), announced in the
// words trusted, however it was made.
func (g *Governor) setPolicyTx(ctx context.Context, tx *sql.Tx, from, mode, operator, trusted string) error {
	if err := putSetting(ctx, tx, keyPolicy, mode); err != nil {
		return err
	}
	data := map[string]any{"from": from, "to": mode, "operator": operator}
	if mode == config.ModeTrusted && from != config.ModeTrusted {
		return g.noteLowered(ctx, tx, ledger.KindPolicyChange, data, trusted, operator)
	}
	_, err := g.Ledger.AppendTx(ctx, tx, ledger.KindPolicyChange, journalFields(ctx, data))
	return err
}

// AdoptConfigMode makes the configured mode (config.json's policy.mode,
// read at start) the one in force: a mode an earlier Hearth kept only in
// the database, or a config file edited by hand since, would otherwise
// leave doctor and host_info disagreeing. A change is journaled as made
// by the config file (operator ConfigFileOperator), and a switch to
// trusted is announced as one made in the panel is (a lowering: the
// panel's banner, the tray's notification), so that an edit of
// config.json by another program is seen.
func (g *Governor) AdoptConfigMode(ctx context.Context) error {
	var m string
	if _, err := getSetting(ctx, g.DB.R, keyPolicy, &m); err != nil {
		return err
	}
	if m == g.DefaultMode {
		return nil
	}
	if m == "" {
		// No mode kept yet (a first start, or none since Hearth began
		// keeping it): the configured one is recorded as the one in
		// force, so that an edit of config.json before a later start is
		// seen as the change it is. Nothing changed, so nothing is
		// journaled.
		return g.DB.InTx(ctx, func(tx *sql.Tx) error { return putSetting(ctx, tx, keyPolicy, g.DefaultMode) })
	}
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		return g.setPolicyTx(ctx, tx, m, g.DefaultMode, ConfigFileOperator,
			"switched to trusted mode in config.json, read when Hearth started (ChatGPT's changes run without asking)")
	})
}

// ConfigFileOperator is the operator a mode change read from config.json
// at start is recorded under.
const ConfigFileOperator = "config.json"
