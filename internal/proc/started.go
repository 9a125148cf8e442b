package proc

import (
	"errors"
	"os/exec"
	"sync"
)

// Started is the set of programs Hearth started for the person and does
// not wait on to finish — the apps ui.open starts itself — so that the
// e-stop can kill them with what they started (Kill), as it kills what a
// file opener such as xdg-open detached, which Hearth adopts. The opener
// adds each program it starts (Add) and Started reaps it, forgetting it
// when it exits. On Linux each is held by a pidfd opened before it could
// be reaped, and signalled through it, so a pid that ended and was reused
// is never signalled. The app wiring makes one and hands it to the opener
// and to the e-stop, so neither imports the other.
type Started struct {
	mu    sync.Mutex
	procs map[int]*started // by pid
}

// started is one program of a Started: its command (reaped by Add's
// goroutine) and, on Linux, a pidfd for it (-1 elsewhere, or when the
// kernel gives none).
type started struct {
	cmd *exec.Cmd
	fd  int
}

// NewStarted returns an empty set.
func NewStarted() *Started { return &Started{procs: map[int]*started{}} }

// Add takes cmd, already started, into the set: it is reaped in the
// background and forgotten when it exits.
func (s *Started) Add(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return errors.New("add a started program: it was not started")
	}
	p := &started{cmd: cmd, fd: holdStarted(cmd.Process.Pid)}
	pid := cmd.Process.Pid
	s.mu.Lock()
	s.procs[pid] = p
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		s.mu.Lock()
		if s.procs[pid] == p {
			delete(s.procs, pid)
		}
		s.mu.Unlock()
		releaseStarted(p.fd)
	}()
	return nil
}

// Len is how many of the programs are still running (not yet reaped).
func (s *Started) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.procs)
}

// Kill kills every program of the set that still runs, each with its
// descendants (killStarted), and reports how many processes it killed.
// A descendant that left the program's tree (its parent exited, or it
// double-forked) was adopted by Hearth and is KillAdopted's.
func (s *Started) Kill() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	killed := 0
	var errs []error
	for pid, p := range s.procs {
		n, err := killStarted(pid, p)
		killed += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return killed, errors.Join(errs...)
}
