package govern

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Permits' life: a parked call's request, the operator's decisions
// (approve, deny), the expiry, and what each leaves for the caller to
// carry out on the parked work (Decision). The statements they run on the
// permits table are permits.go's.

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

// RequestPermit implements callpath.Governor.
func (g *Governor) RequestPermit(ctx context.Context, a *callpath.Admission, park func(ctx context.Context, tx *sql.Tx, permitID string) error) (string, error) {
	return g.requestPermit(ctx, a, park)
}

// requestPermit records a permit request for a and, in the same
// transaction, park (when set).
func (g *Governor) requestPermit(ctx context.Context, a *callpath.Admission, park func(ctx context.Context, tx *sql.Tx, permitID string) error) (string, error) {
	id := primitive.NewID("pmt")
	now := g.now()
	exp := now.Add(g.PermitTTL)
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		if err := insertPermit(ctx, tx, id, a, now, exp); err != nil {
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

// CancelPermitsOf withdraws the pending permit of a future that was
// cancelled before the operator decided (task.cancel of a parked call).
func (g *Governor) CancelPermitsOf(ctx context.Context, futureID string) {
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		pids, err := pendingPermitsOf(ctx, tx, futureID)
		if err != nil {
			return err
		}
		for _, id := range pids {
			if err := cancelPermit(ctx, tx, id, g.now()); err != nil {
				return err
			}
			if _, err := g.Ledger.AppendTx(ctx, tx, "permit_cancelled", map[string]any{"permit_id": id, "future_id": futureID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.Log.Error("withdraw permits", "future", futureID, "err", err)
	}
}

// Decision is what a decision on a permit (the operator's approval or
// denial, or the permit's expiry) leaves for the engine holding the parked
// work to carry out once it has committed: release the work to run once
// (an approval), or settle it blocked with Refusal. Governance records
// decisions and returns them; it never reaches the engine itself.
type Decision struct {
	PermitID string
	// FutureID is the parked future (a durable job's attempt is one too).
	FutureID  string
	Primitive string
	// Refusal is nil for an approval; otherwise it is why the parked call
	// arrives blocked.
	Refusal *primitive.Error
}

// Approved reports whether the decision releases the parked work.
func (d Decision) Approved() bool { return d.Refusal == nil }

// Envelope is what a refused future settles with.
func (d Decision) Envelope() *callpath.Envelope {
	return callpath.ErrorEnvelope(d.Primitive, d.Refusal)
}

// Parked returns what the work still parked for a permit that is no longer
// pending waits for: the decision a previous process committed but was
// stopped before carrying out (an approval releases the work, a denial or
// expiry settles it blocked), or, for a future whose permit request was
// never recorded, a refusal saying so. The caller carries them out at
// start-up, once the engines can.
func (g *Governor) Parked(ctx context.Context) ([]Decision, error) {
	fs, err := g.Futures.ParkedFutures(ctx)
	if err != nil {
		return nil, fmt.Errorf("find parked work: %w", err)
	}
	type parked struct{ id, prim, permit, state string }
	var ps []parked
	for _, f := range fs {
		p := parked{id: f.ID, prim: f.Primitive}
		// The future's latest permit request, if it was recorded.
		var err error
		p.permit, p.state, err = g.latestPermitOf(ctx, f.ID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("find parked work: %w", err)
		}
		ps = append(ps, p)
	}
	var out []Decision
	for _, p := range ps {
		d := Decision{PermitID: p.permit, FutureID: p.id, Primitive: p.prim}
		switch p.state {
		case "pending":
			continue
		case "approved":
		case "denied":
			d.Refusal = primitive.Blocked("permit_denied", "the operator denied the permit for this call")
		case "expired":
			d.Refusal = primitive.Blocked("permit_expired", "the operator did not decide on the permit for this call before it expired")
		default:
			d.Refusal = primitive.Blocked("permit_lost", "Hearth stopped before this call's permit request was recorded; nothing ran. Call again to ask the operator.")
		}
		out = append(out, d)
	}
	return out, nil
}

// PermitRequested is signalled (it never blocks the sender, so signals
// coalesce) each time a permit is requested: the caller's expiry loop then
// looks again for the earliest expiry (NextExpiry).
func (g *Governor) PermitRequested() <-chan struct{} { return g.requestedCh() }

func (g *Governor) requestedCh() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.requested == nil {
		g.requested = make(chan struct{}, 1)
	}
	return g.requested
}

// permitRequested signals PermitRequested.
func (g *Governor) permitRequested() {
	select {
	case g.requestedCh() <- struct{}{}:
	default:
	}
}

// NextExpiry reports how long until the earliest pending permit expires
// (plus a small margin, so that it has by then), and false when none is
// pending.
func (g *Governor) NextExpiry(ctx context.Context) (time.Duration, bool, error) {
	next, err := g.earliestExpiry(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("find the next permit expiry: %w", err)
	}
	if !next.Valid {
		return 0, false, nil
	}
	return max(time.UnixMilli(next.Int64).Sub(g.now()), 0) + 10*time.Millisecond, true, nil
}

// ExpirePermits expires every pending permit past its expiry and returns
// the expiries for the caller to carry out: each parked call arrives as
// blocked.
func (g *Governor) ExpirePermits(ctx context.Context) ([]Decision, error) {
	now := g.now()
	ps, err := g.expiredPermits(ctx, now)
	if err != nil {
		return nil, err
	}
	var out []Decision
	for _, x := range ps {
		changed, err := g.decide(ctx, x.ID, "expired", "", "permit_expired", nil)
		if err != nil {
			return out, err
		}
		if changed {
			out = append(out, Decision{PermitID: x.ID, FutureID: x.FutureID, Primitive: x.Primitive,
				Refusal: primitive.Blocked("permit_expired", "the operator did not decide on permit %s before it expired", x.ID)})
		}
	}
	return out, nil
}

// decide moves a pending permit to state and journals kind, atomically.
// It reports false when the permit was no longer pending.
func (g *Governor) decide(ctx context.Context, permitID, state, by, kind string, extra func(tx *sql.Tx) error) (bool, error) {
	changed := false
	err := g.DB.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		changed, err = decidePermit(ctx, tx, permitID, state, by, g.now())
		if err != nil || !changed {
			return err
		}
		data := map[string]any{"permit_id": permitID}
		if by != "" {
			data["operator"] = by
		}
		if _, err := g.Ledger.AppendTx(ctx, tx, kind, data); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	return changed, err
}

// ErrExpired refuses approving an expired permit.
var ErrExpired = errors.New("permit expired")

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
	p, err := g.permitByID(ctx, permitID)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && p.State != "pending") {
		return Decision{}, fmt.Errorf("permit %s is not pending (already decided, expired or unknown)", permitID)
	}
	if err != nil {
		return Decision{}, err
	}
	if !g.now().Before(p.ExpiresAt) {
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
	return Decision{PermitID: permitID, FutureID: p.FutureID, Primitive: p.Primitive}, nil
}

// Deny denies a pending permit and returns the denial for the caller to
// carry out: the parked call arrives as blocked.
func (o *Decisions) Deny(ctx context.Context, permitID, operator string) (Decision, error) {
	if err := checkOperator(operator); err != nil {
		return Decision{}, err
	}
	g := o.G
	p, err := g.permitByID(ctx, permitID)
	if err != nil {
		return Decision{}, fmt.Errorf("permit %s: %w", permitID, err)
	}
	changed, err := g.decide(ctx, permitID, "denied", operator, "permit_denied", nil)
	if err != nil {
		return Decision{}, err
	}
	if !changed {
		return Decision{}, fmt.Errorf("permit %s is not pending", permitID)
	}
	return Decision{PermitID: permitID, FutureID: p.FutureID, Primitive: p.Primitive,
		Refusal: primitive.Blocked("permit_denied", "The operator denied this call at %s (this PC's clock), so Hearth did not run it. "+
			"The same call in this conversation gets this answer for %d minutes, unless the operator chooses \"Ask again\" on Hearth's Permits page.",
			g.now().Local().Format("15:04"), int(DenialHold.Minutes())).WithDetails(map[string]any{"permit_id": permitID})}, nil
}
