package session

// seams are the points where the package's own tests step into a
// Manager (export_test.go style: set directly by package session's
// tests); all are nil in the program.
type seams struct {
	// started runs in StartSession once the program has started and
	// before the session is added.
	started func(s *Session)
}
