package govern

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Scheduled futures (durable jobs) are admitted when each attempt starts,
// by the same Admit as every call: a run may start long after its submit,
// after the operator tightened the policy, removed an allow-rule, latched
// the e-stop, or a call of the conversation ended UNKNOWN. The named
// differences (callpath.Admission.Scheduled) are decided here:
//   - a submit the operator approved covers its jobs' runs (the operator
//     saw each job), and so does an approved permit of the attempt's own
//     command id and input (the permit the attempt parked for);
//   - an UNKNOWN opened by a future of the same submit (the interruption
//     of an on_interrupt "block" job opens one) does not refuse it.

// scheduledApproved reports whether the operator approved the attempt a
// (a permit of its own command id and input) or the command that queued
// it.
func (g *Governor) scheduledApproved(ctx context.Context, a *callpath.Admission) (bool, error) {
	stmt, err := g.DB.ReadStmt(ctx, `SELECT EXISTS (SELECT 1 FROM permits WHERE command_id = ? AND input_sha256 = ? AND state = 'approved')
		OR EXISTS (SELECT 1 FROM permits WHERE command_id = ? AND ? != '' AND state = 'approved')`)
	if err != nil {
		return false, err
	}
	var n int
	if err := stmt.QueryRowContext(ctx, a.CommandID, a.Digest, a.Parent, a.Parent).Scan(&n); err != nil {
		return false, fmt.Errorf("look up the approval of %s: %w", a.FutureID, err)
	}
	return n > 0, nil
}

// requestPermit records a permit request for a and, in the same
// transaction, park (when set).
func (g *Governor) requestPermit(ctx context.Context, a *callpath.Admission, park func(ctx context.Context, tx *sql.Tx, permitID string) error) (string, error) {
	id := primitive.NewID("pmt")
	now := g.now()
	exp := now.Add(g.PermitTTL)
	asks, err := asksColumn(a.Asks)
	if err != nil {
		return "", err
	}
	err = g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO permits(id, route, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at, risk_case, subject, said, asks)
			VALUES (?,?,?,?,?,?,?,'pending',?,?,?,?,?,?)`, id, a.Route, a.Spec.Name(), string(a.Input), a.Digest, a.FutureID, a.CommandID, now.UnixMilli(), exp.UnixMilli(),
			a.Case, a.Subject, a.Said, asks); err != nil {
			return err
		}
		_, err := g.Ledger.AppendTx(ctx, tx, "permit_requested", map[string]any{
			"permit_id": id, "primitive": a.Spec.Name(), "route": a.Route, "input_sha256": a.Digest,
			"command_id": a.CommandID, "future_id": a.FutureID, "expires_at": exp.UTC().Format(time.RFC3339),
			"case": a.Case,
		})
		if err != nil || park == nil {
			return err
		}
		return park(ctx, tx, id)
	})
	if err != nil {
		return "", fmt.Errorf("request permit: %w", err)
	}
	g.permitRequested()
	return id, nil
}
