package runs

import "github.com/hearth-dev/hearth/internal/fortest"

// seams are the points where a test may step into the Service; all are
// nil in the program.
type seams struct {
	// afterSubmit runs after a scatter submitted its calls and before it
	// reads their states.
	afterSubmit func(futureIDs []string)
}

// SetAfterSubmitForTest makes f run after a scatter submitted its calls
// and before it reads their states (a test lets every call finish there).
// It panics outside a test.
func (s *Service) SetAfterSubmitForTest(f func(futureIDs []string)) {
	fortest.Must()
	s.seams.afterSubmit = f
}
