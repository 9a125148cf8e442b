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
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/store"
)

// The permits table: its row type and every statement on it. A permit is
// requested (insertPermit), decided once (decidePermit, cancelPermit) and
// may have its denial's hold ended (askAgainPermit); everything else here
// reads. The flow around them (who asks, what a decision leaves for the
// engine) is decisions.go's; the admission's questions (a held denial, an
// approved repeat, a replay, a grant in the conversation, a scheduled
// attempt's approval) are the lookups below. The ownership test
// (internal/store) refuses SQL on permits in any other file.

// Permit is one permit row: the exact input a parked call asks for, and
// the operator's decision. It is the one row type of the table; the
// operator's list (Decisions.Permits), the evidence resources (PermitOf)
// and the card's lookups all read it, and Approval is the small view of an
// approved one that the Changes page shows.
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
	// DecidedBy is the operator who decided (Valid once decided; "" for
	// an expiry, NULL for a withdrawn permit). The evidence resources
	// show it; the panel's list does not.
	DecidedBy sql.NullString `json:"-"`
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

// permitColumns are the columns scanPermit reads, in its order.
const permitColumns = `id, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at, decided_at, decided_by, risk_case, subject, said, asks`

// scanPermit reads one row of permitColumns.
func scanPermit(r interface{ Scan(...any) error }) (Permit, error) {
	var p Permit
	var c, e int64
	var d sql.NullInt64
	var asks string
	if err := r.Scan(&p.ID, &p.Primitive, &p.Input, &p.Digest, &p.FutureID, &p.CommandID, &p.State, &c, &e, &d, &p.DecidedBy, &p.Case, &p.Subject, &p.Said, &asks); err != nil {
		return Permit{}, err
	}
	if asks != "" {
		if err := json.Unmarshal([]byte(asks), &p.Asks); err != nil {
			return Permit{}, fmt.Errorf("read the items that ask of permit %s: %w", p.ID, err)
		}
	}
	p.CreatedAt, p.ExpiresAt = time.UnixMilli(c).UTC(), time.UnixMilli(e).UTC()
	if d.Valid {
		p.DecidedAt = time.UnixMilli(d.Int64).UTC()
	}
	return p, nil
}

// insertPermit records, in tx, a pending permit id for the call a,
// expiring at exp.
func insertPermit(ctx context.Context, tx *sql.Tx, id string, a *callpath.Admission, now, exp time.Time) error {
	asks, err := asksColumn(a.Asks)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO permits(id, route, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at, risk_case, subject, said, asks)
			VALUES (?,?,?,?,?,?,?,'pending',?,?,?,?,?,?)`, id, a.Route, a.Spec.Name(), string(a.Input), a.Digest, a.FutureID, a.CommandID, now.UnixMilli(), exp.UnixMilli(),
		a.Case, a.Subject, a.Said, asks)
	return err
}

// asksColumn is the permits.asks value of a call's items that ask: their
// JSON, or "" for none.
func asksColumn(asks []callpath.Ask) (string, error) {
	if len(asks) == 0 {
		return "", nil
	}
	b, err := json.Marshal(asks)
	if err != nil {
		return "", fmt.Errorf("encode the items that ask: %w", err)
	}
	return string(b), nil
}

// permitByID reads permit id (sql.ErrNoRows when there is none).
func (g *Governor) permitByID(ctx context.Context, id string) (Permit, error) {
	return scanPermit(g.DB.R.QueryRowContext(ctx, `SELECT `+permitColumns+` FROM permits WHERE id = ?`, id))
}

// PermitOf returns permit id of route's scope, or ErrNoRecord.
func (g *Governor) PermitOf(ctx context.Context, route, id string) (Permit, error) {
	cond, arg := primitive.RouteMatch("route", route)
	p, err := scanPermit(g.DB.R.QueryRowContext(ctx, `SELECT `+permitColumns+` FROM permits WHERE id = ? AND `+cond, id, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return Permit{}, ErrNoRecord
	}
	if err != nil {
		return Permit{}, fmt.Errorf("read permit %s: %w", id, err)
	}
	return p, nil
}

// PermitCall returns the primitive and the exact input permit id asks for.
func (g *Governor) PermitCall(ctx context.Context, permitID string) (prim, input string, err error) {
	p, err := g.permitByID(ctx, permitID)
	if err != nil {
		return "", "", fmt.Errorf("read permit %s: %w", permitID, err)
	}
	return p.Primitive, p.Input, nil
}

// Permits lists permits in state ("" for all), newest first.
func (o *Decisions) Permits(ctx context.Context, state string) ([]Permit, error) {
	if state != "" {
		return o.list(ctx, ` WHERE state = ? ORDER BY created_at DESC`, state)
	}
	return o.list(ctx, ` ORDER BY created_at DESC`)
}

// Denials lists the denials that still answer their call again (denied
// within DenialHold, Ask again not chosen), newest first.
func (o *Decisions) Denials(ctx context.Context) ([]Permit, error) {
	return o.list(ctx, ` WHERE state = 'denied' AND decided_at >= ? AND ask_again_at IS NULL ORDER BY decided_at DESC`,
		o.G.now().Add(-DenialHold).UnixMilli())
}

// list reads the permits that where (a WHERE and ORDER BY clause, or
// only the latter) selects, with the programs an exec would start.
func (o *Decisions) list(ctx context.Context, where string, args ...any) ([]Permit, error) {
	rows, err := o.G.DB.R.QueryContext(ctx, `SELECT `+permitColumns+` FROM permits`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Permit
	for rows.Next() {
		p, err := scanPermit(rows)
		if err != nil {
			return nil, err
		}
		if f := o.G.Programs[p.Primitive]; f != nil {
			p.Programs = f([]byte(p.Input))
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ListPermits is ListCommands for route's permits.
func (g *Governor) ListPermits(ctx context.Context, route string, after *RecordKey, limit int) ([]Record, error) {
	return g.listRecords(ctx, `SELECT id, created_at, primitive, state FROM permits`, "id", route, after, limit)
}

// PermitIDs is CommandIDs for route's permits.
func (g *Governor) PermitIDs(ctx context.Context, route string) (map[string]bool, error) {
	return g.recordIDs(ctx, `SELECT id FROM permits WHERE `, route)
}

// Approval is the view of an approved permit that the Changes page shows
// beside the call that ran under it: who allowed it, and when.
type Approval struct {
	PermitID string
	By       string
	At       time.Time
}

// approvalsOf is the approvals of some futures, less the closing ")" and
// a "?" for each future after the first.
const approvalsOf = `SELECT future_id, id, COALESCE(decided_by, ''), COALESCE(decided_at, 0) FROM permits
			WHERE state = 'approved' AND future_id IN (?`

// ApprovalsOf returns the approvals of the calls futureIDs (at most 500
// looked up; a call that ran without asking has none), for the panel's
// Changes page.
func (o *Decisions) ApprovalsOf(ctx context.Context, futureIDs []string) (map[string]Approval, error) {
	out := map[string]Approval{}
	for len(futureIDs) > 0 {
		n := min(len(futureIDs), 500)
		batch := futureIDs[:n]
		futureIDs = futureIDs[n:]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		rows, err := o.G.DB.R.QueryContext(ctx, approvalsOf+strings.Repeat(",?", len(batch)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up approvals: %w", err)
		}
		for rows.Next() {
			var fut string
			var a Approval
			var at int64
			if err := rows.Scan(&fut, &a.PermitID, &a.By, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("look up approvals: %w", err)
			}
			a.At = time.UnixMilli(at)
			out[fut] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("look up approvals: %w", err)
		}
	}
	return out, nil
}

// The lookups of a future's permits (permits_future serves them).
const (
	approvedOfFuture = `SELECT count(*) FROM permits WHERE future_id = ? AND state = 'approved'`
	pendingOfFuture  = `SELECT id FROM permits WHERE future_id = ? AND state = 'pending'`
	latestOfFuture   = `SELECT id, state FROM permits WHERE future_id = ? ORDER BY created_at DESC LIMIT 1`
)

// ApprovedFuture reports whether the operator approved a permit for
// futureID (dispatch asks at start-up for queued futures).
func (g *Governor) ApprovedFuture(ctx context.Context, futureID string) bool {
	var n int
	err := g.DB.R.QueryRowContext(ctx, approvedOfFuture, futureID).Scan(&n)
	return err == nil && n > 0
}

// pendingPermitsOf returns, in tx, the ids of futureID's pending permits.
func pendingPermitsOf(ctx context.Context, tx *sql.Tx, futureID string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, pendingOfFuture, futureID)
	return store.Collect(rows, err, func(r *sql.Rows) (id string, err error) { return id, r.Scan(&id) })
}

// latestPermitOf returns the id and state of futureID's latest permit
// request (sql.ErrNoRows when none was recorded).
func (g *Governor) latestPermitOf(ctx context.Context, futureID string) (id, state string, err error) {
	err = g.DB.R.QueryRowContext(ctx, latestOfFuture, futureID).Scan(&id, &state)
	return id, state, err
}

// latestPermitOfCommand returns the latest permit requested under
// commandID (sql.ErrNoRows when none was).
func (g *Governor) latestPermitOfCommand(ctx context.Context, commandID string) (p Permit, route string, err error) {
	err = g.DB.R.QueryRowContext(ctx, `SELECT route, primitive, input_sha256, future_id, id, state FROM permits WHERE command_id = ? ORDER BY created_at DESC LIMIT 1`, commandID).
		Scan(&route, &p.Primitive, &p.Digest, &p.FutureID, &p.ID, &p.State)
	return p, route, err
}

// cancelPermit withdraws pending permit id, in tx.
func cancelPermit(ctx context.Context, tx *sql.Tx, id string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE permits SET state = 'cancelled', decided_at = ? WHERE id = ?`, at.UnixMilli(), id)
	return err
}

// decidePermit moves pending permit id to state (approved, denied,
// expired), decided by by at at, in tx; false when it was no longer
// pending.
func decidePermit(ctx context.Context, tx *sql.Tx, id, state, by string, at time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE permits SET state = ?, decided_at = ?, decided_by = ? WHERE id = ? AND state = 'pending'`,
		state, at.UnixMilli(), by, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// askAgainPermit ends the hold of denial id (by operator, at at), in tx;
// false when it is not a denial still held.
func askAgainPermit(ctx context.Context, tx *sql.Tx, id, operator string, at time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE permits SET ask_again_at = ?, ask_again_by = ? WHERE id = ? AND state = 'denied' AND ask_again_at IS NULL`,
		at.UnixMilli(), operator, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// earliestExpiry returns the expiry of the pending permit that expires
// first (not Valid when none is pending).
func (g *Governor) earliestExpiry(ctx context.Context) (sql.NullInt64, error) {
	var next sql.NullInt64
	err := g.DB.R.QueryRowContext(ctx, `SELECT MIN(expires_at) FROM permits WHERE state = 'pending'`).Scan(&next)
	return next, err
}

// expiredPermits returns the pending permits past their expiry at now
// (ID, FutureID and Primitive only).
func (g *Governor) expiredPermits(ctx context.Context, now time.Time) ([]Permit, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, future_id, primitive FROM permits WHERE state = 'pending' AND expires_at <= ?`, now.UnixMilli())
	return store.Collect(rows, err, func(r *sql.Rows) (p Permit, err error) { return p, r.Scan(&p.ID, &p.FutureID, &p.Primitive) })
}

// livePermits selects the input of every permit awaiting the operator,
// through the partial index of pending permits (migration 0006).
const livePermits = `SELECT p.input FROM permits p WHERE p.state = 'pending'`

// pendingInputs passes to add, in tx, the input of every pending permit.
func pendingInputs(ctx context.Context, tx *sql.Tx, add func(text string)) error {
	rows, err := tx.QueryContext(ctx, livePermits)
	return store.EachText(rows, err, add)
}

// heldDenial returns the newest denial, decided at since or later and
// not asked again, of the same call (route, primitive, input digest):
// its id and when it was decided (sql.ErrNoRows when there is none).
func (g *Governor) heldDenial(ctx context.Context, route, prim, digest string, since time.Time) (id string, at int64, err error) {
	st, err := g.DB.ReadStmt(ctx, `SELECT id, decided_at FROM permits
		WHERE route = ? AND primitive = ? AND input_sha256 = ? AND state = 'denied' AND decided_at >= ? AND ask_again_at IS NULL
		ORDER BY decided_at DESC LIMIT 1`)
	if err != nil {
		return "", 0, err
	}
	err = st.QueryRowContext(ctx, route, prim, digest, since.UnixMilli()).Scan(&id, &at)
	return id, at, err
}

// approvedRepeats returns the approved permits, requested at since or
// later, of the same call (route, primitive, input digest) whose future
// no other command has taken yet, newest first (ID, FutureID and
// CommandID only).
func (g *Governor) approvedRepeats(ctx context.Context, route, prim, digest string, since time.Time) ([]Permit, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT p.id, p.future_id, p.command_id FROM permits p
		WHERE p.route = ? AND p.primitive = ? AND p.input_sha256 = ? AND p.state = 'approved' AND p.created_at >= ?
		  AND NOT EXISTS (SELECT 1 FROM commands c WHERE c.future_id = p.future_id AND c.command_id <> p.command_id)
		ORDER BY p.created_at DESC`,
		route, prim, digest, since.UnixMilli())
	return store.Collect(rows, err, func(r *sql.Rows) (p Permit, err error) { return p, r.Scan(&p.ID, &p.FutureID, &p.CommandID) })
}

// approvedIn reports whether the operator approved, in the conversation
// route, a permit of a call of case c that named subject.
func (g *Governor) approvedIn(ctx context.Context, route string, c risk.CaseID, subject string) (bool, error) {
	stmt, err := g.DB.ReadStmt(ctx, `SELECT EXISTS (SELECT 1 FROM permits WHERE route = ? AND risk_case = ? AND subject = ? AND state = 'approved')`)
	if err != nil {
		return false, err
	}
	var n int
	if err := stmt.QueryRowContext(ctx, route, string(c), subject).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// approvedCommand reports whether the operator approved a permit of
// commandID with input digest, or any permit of parent (when not "").
func (g *Governor) approvedCommand(ctx context.Context, commandID, digest, parent string) (bool, error) {
	stmt, err := g.DB.ReadStmt(ctx, `SELECT EXISTS (SELECT 1 FROM permits WHERE command_id = ? AND input_sha256 = ? AND state = 'approved')
		OR EXISTS (SELECT 1 FROM permits WHERE command_id = ? AND ? != '' AND state = 'approved')`)
	if err != nil {
		return false, err
	}
	var n int
	if err := stmt.QueryRowContext(ctx, commandID, digest, parent, parent).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}
