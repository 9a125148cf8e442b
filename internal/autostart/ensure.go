package autostart

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/instance"
)

// DefaultEnsureWait is how long Ensure waits for the Hearth it started to
// publish its addresses.
const DefaultEnsureWait = 60 * time.Second

// EnsureOptions say what Ensure starts.
type EnsureOptions struct {
	// DataDir is the data directory whose instance is ensured.
	DataDir string
	// Exe is started with no arguments (the tray) when nothing runs.
	Exe string
	// Env is the child's environment; nil inherits this process's.
	Env []string
	// Wait bounds the wait for the child; 0 means DefaultEnsureWait.
	Wait time.Duration
}

// Outcome says what Ensure did.
type Outcome int

// Outcomes.
const (
	// Running: an instance already runs for the data directory.
	Running Outcome = iota
	// Starting: another ensure is starting one right now.
	Starting
	// Started: this ensure started one (EnsureResult.PID).
	Started
)

// EnsureResult is what Ensure did.
type EnsureResult struct {
	Outcome Outcome
	// PID is the running instance's pid when known (Running, Started).
	PID int
}

// ErrChildExited is returned when the started Hearth exited before it
// published its addresses.
var ErrChildExited = errors.New("hearth exited during start")

// Ensure starts o.Exe detached unless a Hearth instance already runs for
// o.DataDir, and waits until the new instance holds the instance lock and
// has published its addresses (instance.json), so that a second ensure a
// moment later sees it running.
//
// Two ensures at once start one instance: each first takes the "ensure"
// lock, and the one that does not get it leaves the start to the other. The
// check of the Hearth lock takes and drops it at once; the child then
// takes it for good. The child is started in a session (Unix) or process
// group (Windows) of its own with no console and null standard streams, so
// it outlives this process and whatever started it.
func Ensure(ctx context.Context, o EnsureOptions) (EnsureResult, error) {
	if o.Wait <= 0 {
		o.Wait = DefaultEnsureWait
	}
	el, err := instance.Acquire(instance.LockEnsure, o.DataDir)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		return EnsureResult{Outcome: Starting}, nil
	}
	if err != nil {
		return EnsureResult{}, err
	}
	defer el.Release()
	hl, err := instance.Acquire(instance.LockHearth, o.DataDir)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		res := EnsureResult{Outcome: Running}
		if info, ierr := instance.ReadInfo(o.DataDir); ierr == nil {
			res.PID = info.PID
		}
		return res, nil
	}
	if err != nil {
		return EnsureResult{}, err
	}
	if err := hl.Release(); err != nil {
		return EnsureResult{}, err
	}

	cmd, err := startDetached(o.Exe, o.Env)
	if err != nil {
		return EnsureResult{}, fmt.Errorf("start %s: %w", o.Exe, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	err = waitPublished(ctx, o.DataDir, pid, exited, o.Wait)
	if errors.Is(err, ErrChildExited) {
		// It may have found another instance, started meanwhile by someone
		// else (a double-click): then all is as it should be.
		if l, lerr := instance.Acquire(instance.LockHearth, o.DataDir); errors.Is(lerr, instance.ErrAlreadyRunning) {
			res := EnsureResult{Outcome: Running}
			if info, ierr := instance.ReadInfo(o.DataDir); ierr == nil {
				res.PID = info.PID
			}
			return res, nil
		} else if lerr == nil {
			l.Release()
		}
	}
	if err != nil {
		return EnsureResult{PID: pid}, err
	}
	return EnsureResult{Outcome: Started, PID: pid}, nil
}

// waitPublished waits until instance.json names pid.
func waitPublished(ctx context.Context, dataDir string, pid int, exited <-chan error, wait time.Duration) error {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if info, err := instance.ReadInfo(dataDir); err == nil && info.PID == pid {
			return nil
		}
		select {
		case err := <-exited:
			if info, rerr := instance.ReadInfo(dataDir); rerr == nil && info.PID == pid {
				return nil
			}
			if err == nil {
				err = errors.New("exit status 0")
			}
			return fmt.Errorf("%w (pid %d: %v)", ErrChildExited, pid, err)
		case <-deadline.C:
			return fmt.Errorf("hearth (pid %d) did not publish its addresses within %s", pid, wait)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
