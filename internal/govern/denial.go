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
	id, at, err := g.heldDenial(ctx, a.Route, a.Spec.Name(), a.Digest, g.now().Add(-DenialHold))
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

// AskAgain ends a denial's hold: the next identical call asks the
// operator again.
func (o *Decisions) AskAgain(ctx context.Context, permitID, operator string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	g := o.G
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		ok, err := askAgainPermit(ctx, tx, permitID, operator, g.now())
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("permit %s: %w", permitID, ErrNotDenied)
		}
		_, err = g.Ledger.AppendTx(ctx, tx, "permit_ask_again", map[string]any{"permit_id": permitID, "operator": operator})
		return err
	})
}

// ErrNotDenied refuses Ask again for a permit that is not a denial still
// held (never denied, or asked again already).
var ErrNotDenied = errors.New("not a denial that still answers its call")
