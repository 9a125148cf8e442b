package tunnel

import (
	"slices"
	"sync"
	"time"
)

// State is where the tunnel is in its life.
type State string

// States. Only starting, ready and unhealthy have a child running.
const (
	// StateNotConfigured: no runtime key, no tunnel ID or no pinned
	// tunnel-client; Status.Reason says which.
	StateNotConfigured State = "not_configured"
	// StateClientChanged: the pinned tunnel-client is gone or no longer
	// has its pinned SHA-256, so Hearth refuses to run it (and does not
	// retry); Status.Reason names the file. Only the operator's new pin on
	// the Setup page (PinClient) lifts it. A file that merely cannot be
	// read just now (another program holds it open) is not this: the
	// supervisor backs off and tries again.
	StateClientChanged State = "client_changed"
	// StateStopped: configured but not running (never started, or Stop).
	StateStopped State = "stopped"
	// StateStarting: the child runs and has not reported ready yet.
	StateStarting State = "starting"
	// StateReady: the child's /readyz answers 2xx and its /metrics show a
	// successful poll of OpenAI's control plane within pollFresh.
	StateReady State = "ready"
	// StateKeyRefused: OpenAI's control plane refused the runtime key (a
	// 401 or 403 in tunnel-client's output since its last successful
	// poll). A child that exits after that is not restarted: the same key
	// would be refused again. A new key (SetKey) ends it.
	StateKeyRefused State = "key_refused"
	// StateUnhealthy: the child runs but /readyz fails (after having been
	// ready, or for longer than the start grace).
	StateUnhealthy State = "unhealthy"
	// StateBackoff: the child exited; it is restarted after a delay.
	StateBackoff State = "backoff"
	// StateCrashLoop: the child exited too often in too short a time;
	// Hearth stopped restarting it until someone starts it again.
	StateCrashLoop State = "crash_loop"
)

// ReasonClientBack is the reason of StateStopped once the pinned
// tunnel-client, gone for a while, is back with its pinned SHA-256: the
// operator's "Check again" on the Setup page saw it (VerifyClient) and
// lifted client_changed with Check; nothing was started.
const ReasonClientBack = "the pinned tunnel-client is back, unchanged; not started"

// Status is the tunnel's state for the panel, the tray and host_info.
type Status struct {
	State State `json:"state"`
	// Reason explains State in a sentence written by Hearth (never child
	// output), fit for host_info. It names a path only in
	// StateClientChanged: the pinned file the operator must check.
	Reason string `json:"reason,omitempty"`
	// PID is the running child's process id, 0 when none runs.
	PID int `json:"pid,omitempty"`
	// Restarts counts automatic restarts since the last Start.
	Restarts int `json:"restarts"`
	// LastError is the last error line tunnel-client printed (or how it
	// last ended), with the key redacted. It is for the operator's panel,
	// not for host_info: it may name local paths.
	LastError string `json:"last_error,omitempty"`
	// Since is when State last changed.
	Since time.Time `json:"since"`
}

// subscriber is one OnChange callback and its delivery state.
type subscriber struct {
	fn func(Status)
	// notifying: a goroutine delivers to fn. Guarded by Supervisor.mu.
	notifying bool
	// call is held around each call of fn and by cancel while it sets
	// cancelled, so that no call begins once cancel has returned.
	call      sync.Mutex
	cancelled bool
}

// Status returns the current status.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// OnChange subscribes fn to status changes (the tray's icon, the panel's
// live view; any number of subscribers) and returns the function that
// ends the subscription. Each subscriber gets calls on a goroutine of its
// own, one call at a time, each with the status current when it runs: a
// slow fn sees fewer, never stale, updates, and delays no other
// subscriber. fn may call any method of the Supervisor, but not cancel:
// cancel waits for a call of fn that is running to return, and once
// cancel has returned no call of fn begins (so fn may use what the
// subscriber frees after cancel). To end the subscription from fn, call
// cancel on another goroutine. Calling cancel again does nothing.
func (s *Supervisor) OnChange(fn func(Status)) (cancel func()) {
	sub := &subscriber{fn: fn}
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.subs = slices.DeleteFunc(s.subs, func(x *subscriber) bool { return x == sub })
		s.mu.Unlock()
		sub.call.Lock()
		sub.cancelled = true
		sub.call.Unlock()
	}
}

// update changes the status under the lock if r is still the current
// supervision (nil: only when none runs), then notifies.
func (s *Supervisor) update(r *run, change func(st *Status)) {
	s.mu.Lock()
	if s.run != r {
		s.mu.Unlock()
		return
	}
	old := s.status
	change(&s.status)
	if s.status.State != old.State {
		s.status.Since = time.Now()
	}
	if s.status == old {
		s.mu.Unlock()
		return
	}
	s.version++
	var start []*subscriber
	for _, sub := range s.subs {
		if !sub.notifying {
			sub.notifying = true
			start = append(start, sub)
		}
	}
	s.mu.Unlock()
	for _, sub := range start {
		go s.notify(sub)
	}
}

// notify delivers status changes to sub until it has caught up or is
// cancelled. The check of cancelled and the call of fn happen under
// sub.call, which cancel takes too: a cancel that returned came either
// before the check (no call) or after the call.
func (s *Supervisor) notify(sub *subscriber) {
	for {
		s.mu.Lock()
		st, v := s.status, s.version
		s.mu.Unlock()
		sub.call.Lock()
		cancelled := sub.cancelled
		if !cancelled {
			sub.fn(st)
		}
		sub.call.Unlock()
		s.mu.Lock()
		if cancelled || s.version == v {
			sub.notifying = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

func (s *Supervisor) setState(r *run, state State, reason string) {
	s.update(r, func(st *Status) {
		st.State, st.Reason = state, reason
		if state != StateStarting && state != StateReady && state != StateUnhealthy && state != StateKeyRefused {
			st.PID = 0
		}
	})
}
