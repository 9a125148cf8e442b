package proc

// seams are the points where the package's own tests step into a start
// (set directly by package proc's tests, on the one request they hand a
// spawner); all are nil in the program.
type seams struct {
	// stage runs on the spawner thread with the stage a start reached:
	// "before" cmd.Start, then "after" it, or "skipped" when its ctx had
	// already ended (tests hold a spawner there, as an exec stuck on a
	// hung mount would).
	stage func(stage string)
}

// reached runs the stage seam, if one is set. A panic in it is dropped:
// it must not end a spawner goroutine, which, locked, would take its
// thread and with it every child that thread started.
func (s seams) reached(stage string) {
	if s.stage == nil {
		return
	}
	defer func() { _ = recover() }()
	s.stage(stage)
}
