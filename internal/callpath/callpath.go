// Package callpath holds what the dispatcher and governance both speak:
// the admission of one call, the envelope every call answers, and the
// Governor contract the dispatcher calls on every call's path
// (docs/DESIGN.md, "One path" and "Governance"). It depends on neither, so governance does not import the engine
// it governs, and the engine's tests can run with the real governor.
package callpath

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// CodeUnknownOpen is the code of Governor.Admit's refusal while the
// conversation has an open UNKNOWN outcome; its details name the UNKNOWN's
// command_id. A durable job's attempt refused so is held until the
// UNKNOWN is reconciled, not ended.
const CodeUnknownOpen = "unknown_open"

// ErrPermitRequired is returned by Governor.Admit when the call may run
// only after the operator approves it.
var ErrPermitRequired = errors.New("operator permit required")

// Admission is one request as governance sees it: what would run, for whom,
// under which command id, with which input digest.
type Admission struct {
	Spec      *primitive.Spec
	Route     string
	CommandID string
	FutureID  string
	Input     json.RawMessage
	Digest    string
	// Approved is set when the operator approved a permit for exactly this
	// input; Admit then skips the permit requirement (but not the e-stop).
	Approved bool
	// Scheduled marks one attempt of a scheduled future (a durable job's
	// run), admitted when it comes due. Its named differences from a fresh
	// call: an approved permit of Parent (the command that queued it, whose
	// input the operator saw) or of this attempt's own command id and input
	// covers it; an UNKNOWN opened by another future of the same Parent does
	// not refuse it (a job that needs what a sibling changed says so with a
	// dependency); and a run the engine stopped on purpose (task.cancel, the
	// e-stop's hold) ends cancelled, a known outcome, not an UNKNOWN.
	Scheduled bool
	Parent    string
	// Case is the risk table's case Admit found for the call
	// (internal/risk), Subject what it acts on in plain words (a path,
	// an application) and Said what it would do, completing "ChatGPT
	// wants to …"; the permit request keeps them for the operator's card.
	Case    string
	Subject string
	Said    string
	// Paths are the real paths of the files a write would change, as
	// admission found them (the primitive holds an ordinary write to
	// them when it opens the files: primitive.Checked).
	Paths []string
	// Asks are, for a file operation that asks, the items that make it
	// ask, each once with the first of its files that does and why; the
	// permit keeps them for the card ("… including setup.exe").
	Asks []Ask
	// Flagged is set by Admit for a call that runs but is journaled as
	// such and shown on the Status page (a write that makes a program
	// start by itself, run in trusted mode).
	Flagged bool
}

// Ask is one item of a file operation that makes the call ask: its index
// in the call's items, the file of it that asks (a real path: the item
// itself, or a file in a folder it carries) and why, completing "ChatGPT
// wants to …" (risk.Why's Said, or a persistence place's sentence).
type Ask struct {
	Item int    `json:"item"`
	Path string `json:"path"`
	Said string `json:"said"`
}

// Checked is what the primitive is told of its admission: a write
// admitted without asking (the risk table's case write, or write_ok by a
// folder rule; not an approval) is checked again when it opens its files.
func (a *Admission) Checked() primitive.Checked {
	covered := a.Case == string(risk.CaseWriteOK)
	return primitive.Checked{Ordinary: (a.Case == string(risk.CaseWrite) || covered) && !a.Approved, Covered: covered, Paths: a.Paths}
}

// SideEffecting reports whether the primitive is journaled: every
// primitive but a read, and a compound one (it submits calls that are).
func (a *Admission) SideEffecting() bool { return Journaled(a.Spec) }

// Journaled reports whether calls of spec are journaled as commands.
func Journaled(spec *primitive.Spec) bool { return spec.Risk != primitive.RiskRead || spec.Compound }

// Envelope is what every call answers. Arrivals are attached by the caller
// (the MCP facade) so that errors carry them too.
type Envelope struct {
	State     string          `json:"state"`
	Primitive string          `json:"primitive,omitempty"`
	FutureID  string          `json:"future_id,omitempty"`
	PermitID  string          `json:"permit_id,omitempty"`
	CommandID string          `json:"command_id,omitempty"`
	Replayed  bool            `json:"replayed,omitempty"`
	Result    any             `json:"result,omitempty"`
	Error     *ErrorBody      `json:"error,omitempty"`
	Artifact  *artifacts.Meta `json:"artifact,omitempty"`
	Arrivals  []Arrival       `json:"arrivals,omitzero"`
}

// ErrorBody is the error part of an envelope.
type ErrorBody struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// StoppedByKey names, in a cancelled envelope's error details, what
// stopped the call: StoppedByEStop, StoppedByShutdown or StoppedByCancel. Work Hearth
// stopped itself has a known end, recorded as stopped (the journal's
// outcome "stopped"), never as UNKNOWN.
const StoppedByKey = "stopped_by"

// What stopped a call (StoppedByKey).
const (
	StoppedByEStop    = "estop"
	StoppedByShutdown = "shutdown"
	// StoppedByCancel: task.cancel stopped a running job.
	StoppedByCancel = "cancel"
)

// IsError reports whether the envelope should set MCP isError.
func (e *Envelope) IsError() bool { return e.Error != nil }

// ErrorEnvelope renders err as an envelope.
func ErrorEnvelope(prim string, err error) *Envelope {
	pe := primitive.AsError(err)
	return &Envelope{State: pe.State, Primitive: prim, Result: pe.Result, Error: &ErrorBody{Code: pe.Code, Message: pe.Message, Details: pe.Details}}
}

// Arrival is a terminal future result delivered to its conversation. Seq
// is the completion order within Hearth.
type Arrival struct {
	Seq         int64           `json:"seq"`
	FutureID    string          `json:"future_id"`
	CompletedAt time.Time       `json:"completed_at"`
	Envelope    json.RawMessage `json:"envelope"`
}

// Settled reports whether a future state is final for its dependents:
// anything but queued, running, waiting for a permit, waiting for its
// own dependencies, or held for an UNKNOWN.
func Settled(state string) bool {
	switch state {
	case "queued", "running", "permit", "waiting", "held":
		return false
	}
	return true
}

// Governor is the governance choke point every call passes (docs/DESIGN.md, "Governance"). The
// dispatcher calls it in this order: Replay (command-id lookup), Admit
// (e-stop, policy, UNKNOWN gate, permits), then Begin before the primitive
// runs and Finish after. A Governor must never let a failure to journal
// pass silently: Begin's error stops the call, and Finish's error rolls back
// the transaction that would have completed the call's future.
type Governor interface {
	// Replay returns the stored envelope of a command that already ran
	// (or the pending envelope of one still running, parked, or queued as
	// a future that has not journaled its intent yet) when a.CommandID was
	// seen with the same digest, a *primitive.Error conflict when it was
	// seen with another, and nil for a new command.
	Replay(ctx context.Context, a *Admission) (*Envelope, error)
	// Admit returns nil to run, ErrPermitRequired to park the call for the
	// operator, or a *primitive.Error (normally blocked) to refuse.
	Admit(ctx context.Context, a *Admission) error
	// RequestPermit records a permit request for a parked call and returns
	// its id. park, when set, records inside the same transaction that the
	// call waits for that permit: a crash leaves both or neither, and an
	// error from park (the call was cancelled meanwhile) records neither.
	RequestPermit(ctx context.Context, a *Admission, park func(ctx context.Context, tx *sql.Tx, permitID string) error) (string, error)
	// Begin journals the intent before a side-effecting primitive runs.
	Begin(ctx context.Context, a *Admission) error
	// BeginTx is Begin inside tx, a write transaction of the caller's: the
	// dispatcher's claim of scheduled futures admits each attempt and
	// journals the admitted ones in the commit that claims them. A refusal
	// is a *primitive.Error and writes nothing, so the caller may go on
	// with tx; any other error fails the transaction.
	BeginTx(ctx context.Context, tx *sql.Tx, a *Admission) error
	// Finish journals, inside tx, the outcome of a call Begin journaled.
	// The dispatcher completes the call's durable future (and queues its
	// arrival) in the same tx, so the outcome a replay of the command id
	// returns and the one that arrives are one commit: a crash leaves both
	// or neither.
	Finish(ctx context.Context, tx *sql.Tx, a *Admission, env *Envelope) error
	// InFlight journals, inside tx (the one that records its running
	// future), that a side-effecting call outlived the inline budget
	// (outcome in_flight) before its final outcome.
	InFlight(ctx context.Context, tx *sql.Tx, a *Admission) error
	// Journaled reports whether the intent of commandID was journaled for
	// futureID: a side-effecting future without one provably never ran.
	Journaled(ctx context.Context, commandID, futureID string) (bool, error)
	// ApprovedFuture reports whether the operator approved a permit for
	// futureID (so a restart does not ask again).
	ApprovedFuture(ctx context.Context, futureID string) bool
	// CancelPermitsOf withdraws the pending permit of a future cancelled
	// before the operator decided.
	CancelPermitsOf(ctx context.Context, futureID string)
}
