package fsops

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Conflict reasons, stable strings callers and models can branch on.
const (
	ReasonExists        = "exists"         // expected_sha256 null, but the file exists
	ReasonMissing       = "missing"        // a hash was expected, but the file does not exist
	ReasonHashMismatch  = "hash_mismatch"  // the file's hash is not expected_sha256
	ReasonMatchCount    = "match_count"    // a patch's old text matched zero or several places
	ReasonChanged       = "changed"        // undo: the file is no longer what the receipt wrote
	ReasonAlreadyUndone = "already_undone" // undo: the receipt was undone before
	ReasonIncomplete    = "incomplete"     // undo: the receipt's write never completed
	ReasonChangedDuring = "changed_during" // the file changed while Hearth was writing it
)

// ErrConflict matches every *ConflictError with errors.Is.
var ErrConflict = errors.New("conflict")

// ConflictError reports that a write, patch or undo was refused because the
// file is not in the state the caller expected. Nothing was written. The
// fields say what to re-read or change; Replacement is -1 when the conflict
// is not about one replacement of a patch.
type ConflictError struct {
	Path        string  `json:"path"`
	Reason      string  `json:"reason"`
	Expected    string  `json:"expected_sha256,omitempty"` // "absent" for a null precondition
	Actual      *string `json:"current_sha256"`            // null when the file does not exist
	Replacement int     `json:"replacement"`
	Matches     int     `json:"matches"`
	ReceiptID   string  `json:"receipt_id,omitempty"`
	Message     string  `json:"message"`
}

// MarshalJSON leaves out replacement and matches when the conflict is not
// about one replacement of a patch.
func (e *ConflictError) MarshalJSON() ([]byte, error) {
	type plain ConflictError
	if e.Replacement >= 0 {
		return json.Marshal((*plain)(e))
	}
	return json.Marshal(struct {
		*plain
		Replacement *int `json:"replacement,omitempty"`
		Matches     *int `json:"matches,omitempty"`
	}{plain: (*plain)(e)})
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict on %s: %s", e.Path, e.Message)
}

// Is makes errors.Is(err, ErrConflict) true for every conflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// ErrInvalidInput matches every *InputError with errors.Is.
var ErrInvalidInput = errors.New("invalid input")

// InputError reports an input the operation cannot accept, naming the field.
type InputError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *InputError) Error() string { return e.Field + ": " + e.Message }

// Is makes errors.Is(err, ErrInvalidInput) true for every input error.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

// ErrOperatorChange matches every *OperatorChangeError with errors.Is.
var ErrOperatorChange = errors.New("the operator's own change")

// OperatorChangeError refuses a conversation's undo of a receipt the
// operator made on the Changes page (an Undo all, one change undone, or a
// Redo): what the operator put back stays put back unless the operator
// acts on it there. Nothing was changed.
type OperatorChangeError struct {
	ReceiptID, Operator, Path string
}

func (e *OperatorChangeError) Error() string {
	return fmt.Sprintf("receipt %s is not a change this chat made: it is the operator %s's own undo on Hearth's Changes page (of %s), "+
		"and a chat cannot undo it; only the operator can, on that page", e.ReceiptID, e.Operator, e.Path)
}

// Is makes errors.Is(err, ErrOperatorChange) true.
func (e *OperatorChangeError) Is(target error) bool { return target == ErrOperatorChange }

// ErrReceiptNotFound is returned by Undo for an unknown receipt id.
var ErrReceiptNotFound = errors.New("receipt not found")

// ErrTooLarge is returned when a file is beyond what an operation handles
// (a write over a file too large to keep an undo copy of, a patch of a file
// too large to patch in memory).
var ErrTooLarge = errors.New("file too large")
