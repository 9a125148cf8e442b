package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/hearth-dev/hearth/internal/instance"
)

// Running is a Hearth that Start opened, bound and brought up: it serves
// until Stop, or until the context given to Start ends.
type Running struct {
	*App

	cancel   context.CancelFunc
	lock     *instance.Lock
	served   chan struct{}
	serveErr error

	closeOnce sync.Once
	closeErr  error
}

// Start is the one start-up sequence of serve, the tray, the demo and the
// in-process test instances: take the instance lock (opts.Instance; a
// second start gets instance.ErrAlreadyRunning), open every part, bind
// both listeners, run opts.Listening, publish instance.json
// (opts.Instance), and serve. It returns once Hearth serves requests
// (Serve has recovered the previous run's state), or with what kept it
// from starting; a start cut short because ctx ended is an error wrapping
// ctx's. A damaged database (SQLite: malformed, not a database) is a
// *DamagedError naming the newest verified backup to restore.
func Start(ctx context.Context, opts Options) (*Running, error) {
	var lock *instance.Lock
	if opts.Instance {
		var err error
		if lock, err = instance.Acquire(instance.LockHearth, opts.DataDir); err != nil {
			return nil, err
		}
		// Holding the lock, no other Hearth runs on this data directory:
		// an instance.json here is a dead run's (one killed before it
		// stopped), and must not outlive this start if it fails.
		if err := removeStaleInfo(opts.DataDir); err != nil {
			lock.Release()
			return nil, err
		}
	}
	release := func() {
		if lock != nil {
			lock.Release()
		}
	}
	a, err := Open(ctx, opts)
	if err != nil {
		release()
		return nil, asDamaged(opts.DataDir, err)
	}
	fail := func(err error) (*Running, error) {
		a.Close()
		release()
		return nil, err
	}
	if opts.Instance {
		// Holding the lock: the panel sessions an update's hand-over left
		// are this Hearth's.
		a.restoreSessions()
	}
	if err := a.Listen(); err != nil {
		return fail(err)
	}
	if opts.Listening != nil {
		if err := opts.Listening(a); err != nil {
			a.closeListeners()
			return fail(err)
		}
	}
	if opts.Instance {
		if err := instance.WriteInfo(opts.DataDir, instance.Info{PID: os.Getpid(), MCPURL: a.MCPURL(), PanelURL: a.PanelURL(), Version: opts.Version}); err != nil {
			a.closeListeners()
			return fail(err)
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	r := &Running{App: a, cancel: cancel, lock: lock, served: make(chan struct{})}
	go func() {
		defer close(r.served)
		r.serveErr = a.Serve(sctx)
	}()
	select {
	case <-a.Ready():
		return r, nil
	case <-r.served:
		err := r.Wait()
		if err == nil {
			err = fmt.Errorf("start Hearth: %w", context.Cause(ctx))
		}
		return nil, asDamaged(opts.DataDir, err)
	}
}

// Done is closed once Hearth has stopped serving: asked to (Stop, or the
// start context ended) or because a listener failed.
func (r *Running) Done() <-chan struct{} { return r.served }

// Wait waits until Hearth has stopped serving, then closes the database
// and releases the instance lock, and returns Serve's error.
func (r *Running) Wait() error {
	<-r.served
	r.closeOnce.Do(func() {
		r.cancel()
		// Serve closes the listeners as it shuts down, unless it ended
		// before it served them.
		r.App.closeListeners()
		r.closeErr = r.App.Close()
		if r.lock != nil {
			r.closeErr = errors.Join(r.closeErr, r.lock.Release())
		}
	})
	return errors.Join(r.serveErr, r.closeErr)
}

// Stop shuts Hearth down in Serve's order (tunnel, listeners, work, a
// last checkpoint) and then does what Wait does.
func (r *Running) Stop() error {
	r.cancel()
	return r.Wait()
}

// closeListeners closes what Listen bound, for a start that fails before
// serving.
func (a *App) closeListeners() {
	a.mcpLn.Close()
	a.panelLn.Close()
}

// removeStaleInfo removes an instance.json left by a run that ended
// without releasing it. Only Start calls it, with the instance lock held.
func removeStaleInfo(dataDir string) error {
	if err := os.Remove(filepath.Join(dataDir, instance.InfoFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the instance.json of a run that did not stop: %w", err)
	}
	return nil
}
