package uia

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Defaults of a Service's zero fields.
const (
	DefaultDeadline  = 15 * time.Second
	DefaultQueueSize = 8
	DefaultIdleExit  = 30 * time.Second
	DefaultMaxText   = 256
)

// Service runs UI work on one worker goroutine locked to its OS thread,
// started on demand and ended after IdleExit without work, with a bounded
// queue in front of it: at most one provider call is ever in progress.
type Service struct {
	Provider Provider
	Log      *slog.Logger
	// Deadline bounds one call's time on the worker (a walk stops there and
	// reports truncated_by "deadline").
	Deadline time.Duration
	// QueueSize bounds calls waiting for the worker; one more is refused
	// as busy rather than queued without end.
	QueueSize int
	IdleExit  time.Duration
	// MaxText bounds names and values, in runes.
	MaxText int

	initOnce sync.Once
	jobs     chan *job
	quit     chan struct{}
	mu       sync.Mutex
	running  bool
	closed   bool
	// panelAddr is the control panel's host:port (SetPanelAddr).
	panelAddr string
	// openKnown and openErr: how the running worker's provider opened.
	openKnown bool
	openErr   error
	wg        sync.WaitGroup

	// probeMu serializes probes; probed and probeErr (under mu) keep the
	// answer of Available.
	probeMu  sync.Mutex
	probed   bool
	probeErr error
}

type job struct {
	ctx  context.Context
	fn   func(Provider) error
	done chan error
}

func (s *Service) init() {
	s.initOnce.Do(func() {
		if s.Deadline <= 0 {
			s.Deadline = DefaultDeadline
		}
		if s.QueueSize <= 0 {
			s.QueueSize = DefaultQueueSize
		}
		if s.IdleExit <= 0 {
			s.IdleExit = DefaultIdleExit
		}
		if s.MaxText <= 0 {
			s.MaxText = DefaultMaxText
		}
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		s.jobs = make(chan *job, s.QueueSize)
		s.quit = make(chan struct{})
	})
}

// errBusy is returned when the queue is full.
func (s *Service) errBusy() error {
	return primitive.Blocked("busy", "ui automation runs one call at a time and %d calls are already waiting; try again shortly", s.QueueSize)
}

// do runs fn on the worker and returns its error. It returns early with
// ctx's error when ctx ends first; the worker then skips fn if it had not
// started it.
func (s *Service) do(ctx context.Context, fn func(Provider) error) error {
	s.init()
	j := &job{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return primitive.Blocked("unavailable", "ui automation is shut down")
	}
	if s.probed && s.probeErr != nil {
		// What host_info and the tool descriptions disclose holds for
		// every call: a host found without UI Automation keeps answering so.
		err := s.probeErr
		s.mu.Unlock()
		return unavailable(err)
	}
	select {
	case s.jobs <- j:
	default:
		s.mu.Unlock()
		return s.errBusy()
	}
	if !s.running {
		s.running = true
		s.wg.Add(1)
		go s.worker()
	}
	s.mu.Unlock()
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// worker owns the provider for its life: it opens it on its locked
// thread, runs jobs one by one and closes it when idle or closed.
func (s *Service) worker() {
	defer s.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	openErr := s.safeOpen()
	s.mu.Lock()
	s.openKnown, s.openErr = true, openErr
	s.mu.Unlock()
	if openErr == nil {
		defer s.Provider.Close()
	}
	idle := time.NewTimer(s.IdleExit)
	defer idle.Stop()
	for {
		select {
		case j := <-s.jobs:
			switch {
			case j.ctx.Err() != nil:
				j.done <- j.ctx.Err()
			case openErr != nil:
				j.done <- unavailable(openErr)
			default:
				j.done <- s.safeRun(j.fn)
			}
			idle.Reset(s.IdleExit)
		case <-idle.C:
			s.mu.Lock()
			if len(s.jobs) > 0 {
				s.mu.Unlock()
				idle.Reset(s.IdleExit)
				continue
			}
			s.running = false
			s.mu.Unlock()
			return
		case <-s.quit:
			for {
				select {
				case j := <-s.jobs:
					j.done <- primitive.Blocked("unavailable", "ui automation is shut down")
				default:
					return
				}
			}
		}
	}
}

// unavailable is the blocked error of every call where the provider
// cannot open.
func unavailable(err error) error {
	reason := err.Error()
	return primitive.Blocked("unavailable", "%s", reason).WithDetails(map[string]any{"reason": reason})
}

func (s *Service) safeOpen() (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.Log.Error("ui automation provider panicked opening", "panic", r)
			err = fmt.Errorf("%s: the provider failed to start", Unavailable)
		}
	}()
	return s.Provider.Open()
}

// safeRun keeps a provider panic from taking Hearth down with the worker.
func (s *Service) safeRun(fn func(Provider) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.Log.Error("ui automation provider panicked", "panic", r)
			err = primitive.Failed("provider_failed", "ui automation failed inside the provider; nothing more is known about its effect")
		}
	}()
	return fn(s.Provider)
}

// Close stops the worker (after the call in progress) and refuses later
// calls.
func (s *Service) Close() {
	s.init()
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.quit)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Available reports whether UI Automation works on this host: nil, or an
// error whose text is the reason. The first call opens the provider on the
// worker; the answer is kept (an answer cut short by ctx is not), and once
// it is "unavailable" every call answers blocked with it.
func (s *Service) Available(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.mu.Lock()
	probed, probeErr := s.probed, s.probeErr
	s.mu.Unlock()
	if probed {
		return probeErr
	}
	err := s.do(ctx, func(Provider) error { return nil })
	if ctx.Err() != nil {
		return err
	}
	var pe *primitive.Error
	if errors.As(err, &pe) && pe.Code == "busy" {
		// The worker is up; it recorded how its provider opened.
		s.mu.Lock()
		known, openErr := s.openKnown, s.openErr
		s.mu.Unlock()
		if !known {
			return nil
		}
		err = openErr
	} else if err != nil && errors.As(err, &pe) {
		err = errors.New(pe.Message)
	}
	s.mu.Lock()
	s.probed, s.probeErr = true, err
	s.mu.Unlock()
	return err
}

// refusesAll reports whether Available found UI Automation missing, so
// that every call is refused without reaching the provider.
func (s *Service) refusesAll() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probed && s.probeErr != nil
}
