package govern

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// One denial, one answer: a model told "the operator denied it" often
// calls the same thing again at once. For DenialHold after the operator
// denied a call, the same call — the same primitive and input digest in
// the same conversation — is answered blocked with that denial at once,
// with no new card for the operator. The operator ends the hold early
// with "Ask again" on the Permits page (Decisions.AskAgain).

// DenialHold is how long a denial answers the same call again.
const DenialHold = 15 * time.Minute

// deniedRepeat refuses a call that asks for exactly what the operator
// denied in its conversation within DenialHold, unless the operator chose
// Ask again since. A job's scheduled attempt asks by its own rules
// (scheduled.go).
func (g *Governor) deniedRepeat(ctx context.Context, a *callpath.Admission) error {
	if a.Scheduled || a.Approved {
		return nil
	}
	st, err := g.DB.ReadStmt(ctx, `SELECT id, decided_at FROM permits
		WHERE route = ? AND primitive = ? AND input_sha256 = ? AND state = 'denied' AND decided_at >= ? AND ask_again_at IS NULL
		ORDER BY decided_at DESC LIMIT 1`)
	if err != nil {
		return fmt.Errorf("look up an earlier denial of this call: %w", err)
	}
	var id string
	var at int64
	err = st.QueryRowContext(ctx, a.Route, a.Spec.Name(), a.Digest, g.now().Add(-DenialHold).UnixMilli()).Scan(&id, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up an earlier denial of this call: %w", err)
	}
	denied := time.UnixMilli(at)
	until := denied.Add(DenialHold)
	return primitive.Blocked("permit_denied",
		"The operator denied exactly this call at %s (this PC's clock), so Hearth did not run it and did not ask again. "+
			"Until %s the same call gets this answer; the operator can end that sooner with \"Ask again\" on Hearth's Permits page. "+
			"Do not repeat it: tell the user, or do something else.",
		denied.Local().Format("15:04"), until.Local().Format("15:04")).
		WithDetails(map[string]any{"permit_id": id, "denied_at": denied.UTC().Format(time.RFC3339), "asks_again_at": until.UTC().Format(time.RFC3339)})
}

// Denials lists the denials that still answer their call again (denied
// within DenialHold, Ask again not chosen), newest first.
func (o *Decisions) Denials(ctx context.Context) ([]Permit, error) {
	return o.list(ctx, ` WHERE state = 'denied' AND decided_at >= ? AND ask_again_at IS NULL ORDER BY decided_at DESC`,
		o.G.now().Add(-DenialHold).UnixMilli())
}

// AskAgain ends a denial's hold: the next identical call asks the
// operator again.
func (o *Decisions) AskAgain(ctx context.Context, permitID, operator string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	g := o.G
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE permits SET ask_again_at = ?, ask_again_by = ? WHERE id = ? AND state = 'denied' AND ask_again_at IS NULL`,
			g.now().UnixMilli(), operator, permitID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("permit %s: %w", permitID, ErrNotDenied)
		}
		_, err = g.Ledger.AppendTx(ctx, tx, "permit_ask_again", map[string]any{"permit_id": permitID, "operator": operator})
		return err
	})
}

// ErrNotDenied refuses Ask again for a permit that is not a denial still
// held (never denied, or asked again already).
var ErrNotDenied = errors.New("not a denial that still answers its call")
