package dispatch

import "sync/atomic"

// seams are the points where tests step into a Dispatcher; all are zero
// in the program. hooks come from Options.HooksForTest: the crash tests
// of other packages start a whole Hearth with them
// (app.Options.DispatchHooksForTest) and kill it there. The rest the
// package's own tests set (mailbox_export_test.go).
type seams struct {
	hooks Hooks
	// probes, when set, counts the calls whose mailbox Deliver read
	// (tests see the mailbox cache spare them the read).
	probes *atomic.Int64
}

// probed counts one read of a mailbox, when a test counts them: on the
// program's fast path it is one nil check.
func (s *seams) probed() {
	if s.probes != nil {
		s.probes.Add(1)
	}
}
