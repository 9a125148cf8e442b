package callpath

import (
	"context"
	"database/sql"
)

// FutureView is what governance reads of one of the engine's futures
// (internal/dispatch owns them): who made it, what it runs, where it has
// got to, and for a scheduled future its class, interruption rule,
// attempts and the command that queued it (Parent).
type FutureView struct {
	ID          string
	Route       string
	Primitive   string
	InputSHA256 string
	// Input is what the future was asked (its compact input).
	Input string
	State string
	// Result is the stored envelope once it has one.
	Result      sql.NullString
	Class       string
	OnInterrupt string
	Attempts    int
	Parent      sql.NullString
}

// Futures reads the engine's futures for governance: replay, recovery,
// the UNKNOWN gate and work parked for a permit. The dispatcher's reader
// implements it (dispatch.NewFutureReader) and internal/app hands it to
// the governor, so governance never reads the engine's table itself.
type Futures interface {
	// Future returns future id; ok is false when there is none.
	Future(ctx context.Context, id string) (f FutureView, ok bool, err error)
	// FutureOfCommand returns the first future that carries commandID
	// (the oldest); ok is false when there is none.
	FutureOfCommand(ctx context.Context, commandID string) (f FutureView, ok bool, err error)
	// ParkedFutures returns the futures waiting for a permit.
	ParkedFutures(ctx context.Context) ([]FutureView, error)
}
