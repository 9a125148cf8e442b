package govern

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/ledger"
)

// The e-stop latch and the queue hold: as governance reads them, and as
// the operator (Decisions) and machine.estop (Latch) set and release them.

// EStopState is the latch. By, Reason and At are the first latch's, which
// stands until the operator resets it: a later press while it is latched
// (by the model's machine.estop, by the operator again, by anyone) is
// added to Later and never replaces it, so the model cannot make the
// record of an operator's stop say something else.
type EStopState struct {
	Latched bool      `json:"latched"`
	Reason  string    `json:"reason,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at,omitzero"`
	// Later are the presses while it was already latched, oldest first
	// (at most MaxLaterLatches kept; Dropped counts the ones left out).
	Later   []EStopPress `json:"later,omitempty"`
	Dropped int          `json:"dropped,omitempty"`
}

// EStopPress is one press of the e-stop.
type EStopPress struct {
	By     string    `json:"by"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// MaxLaterLatches bounds the presses kept in an e-stop's history: the
// model may call machine.estop in a loop, and the record is read on every
// admission.
const MaxLaterLatches = 20

// ByModel reports whether the first latch was the model's (machine.estop).
func (s EStopState) ByModel() bool { return s.By == "model" }

// LatchedBy names who pressed it in the operator's words: "ChatGPT" for
// machine.estop, the operator's name for an operator's press.
func LatchedBy(by string) string {
	switch {
	case by == "model":
		return "ChatGPT"
	case strings.HasPrefix(by, "operator:"):
		return strings.TrimPrefix(by, "operator:")
	}
	return by
}

// EStop reports the latch. It is read from the database on every check so
// that an operator reset from another process (the CLI) takes effect.
func (g *Governor) EStop(ctx context.Context) (EStopState, error) {
	var s EStopState
	_, err := getSetting(ctx, g.DB.R, keyEStop, &s)
	return s, err
}

// QueueHeld reports whether the durable job queue is held.
func (g *Governor) QueueHeld(ctx context.Context) (bool, error) {
	var held bool
	_, err := getSetting(ctx, prepared{db: g.DB}, keyQueueHeld, &held)
	return held, err
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

// ErrEStopLatched refuses approving a permit, or adding an allow-rule or
// folder rule, while the e-stop is latched: the permit keeps waiting (it
// may still be denied, or expire) and can be approved once the operator
// has reset the stop; nothing of the refused step is stored.
var ErrEStopLatched = errors.New("the emergency stop is on")

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
