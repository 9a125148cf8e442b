package govern

import (
	"context"
	"time"
)

// The e-stop latch and the queue hold as governance reads them; the
// operator and machine.estop set them (operator.go).

// EStopState is the latch.
type EStopState struct {
	Latched bool      `json:"latched"`
	Reason  string    `json:"reason,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at,omitzero"`
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
