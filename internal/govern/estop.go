package govern

import (
	"context"
	"strings"
	"time"
)

// The e-stop latch and the queue hold as governance reads them; the
// operator and machine.estop set them (operator.go).

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
