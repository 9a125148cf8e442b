package primitive

import (
	"errors"
	"fmt"
	"github.com/hearth-dev/hearth/internal/store"
)

// States every result carries (Hearth v0 seed, "Architecture and safety").
// StateFailed is Hearth's addition for a call that could not run (bad input,
// a missing file, a program that does not start); it always sets isError.
// The seed's "superseded" is not among them: nothing in Hearth replaces a
// call's result with a later one, so no answer could ever carry it.
const (
	StateCompleted = "completed"
	StatePending   = "pending"
	StateBlocked   = "blocked"
	StateConflict  = "conflict"
	StatePartial   = "partial"
	StateCancelled = "cancelled"
	StateFailed    = "failed"
)

// Error is a primitive failure that carries the state the caller should
// see, a stable code, and optional structured details.
type Error struct {
	State   string
	Code    string
	Message string
	Details map[string]any
	// Result, when set, is a result that stands beside the error: every
	// item of a call made of items (machine.batch, run.scatter) some of
	// which failed. The envelope carries it as its result.
	Result any
}

func (e *Error) Error() string { return e.Message }

// Failed is a plain failure: the call did not do what was asked.
func Failed(code, format string, args ...any) *Error {
	return &Error{State: StateFailed, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Blocked means Hearth refused to run the call (policy, e-stop, an
// unavailable capability, a failed dependency).
func Blocked(reason, format string, args ...any) *Error {
	return &Error{State: StateBlocked, Code: reason, Message: fmt.Sprintf(format, args...)}
}

// Conflict means the world was not as the caller asserted (a hash mismatch,
// a patch that matched zero or several times).
func Conflict(code, format string, args ...any) *Error {
	return &Error{State: StateConflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Partial means a call made of items ran them all, and some failed: the
// message names the failed items, and WithResult attaches every item's
// result. It sets isError, since part of what was asked did not happen.
func Partial(code, format string, args ...any) *Error {
	return &Error{State: StatePartial, Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithResult attaches the result that stands beside the error and returns e.
func (e *Error) WithResult(res any) *Error {
	e.Result = res
	return e
}

// WithDetails attaches structured details and returns e.
func (e *Error) WithDetails(d map[string]any) *Error {
	e.Details = d
	return e
}

// DiskFull is a call's answer when the disk holding Hearth's data is full
// (store.IsFull): Hearth could not record the call, so it did not run it.
func DiskFull(err error) *Error {
	return Failed("disk_full", "The disk that holds Hearth's data is full, so Hearth could not record this call and did not run it. "+
		"Tell the user to free some space on that disk; Hearth works again by itself once there is room.").
		WithDetails(map[string]any{"system_error": err.Error()})
}

// AsError converts any error into *Error. An error that is not one is
// Hearth failing inside (a database error, a bug), not an answer about
// the input: it fails with code "internal" and a message in Hearth's
// words, its own text kept in details.system_error — never as the
// message, where Go's or the system's phrasing tells a model nothing it
// can act on.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	if store.IsFull(err) {
		return DiskFull(err)
	}
	return &Error{State: StateFailed, Code: "internal",
		Message: "Hearth failed inside while doing this call (not something the input can fix); details.system_error has the reason. Retry once; if it fails again, tell the operator.",
		Details: map[string]any{"system_error": err.Error()}}
}
