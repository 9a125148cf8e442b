package autostart

import "sync"

// LogonState is whether the logon task is registered, as the control
// panel shows it. Asking Task Scheduler starts schtasks.exe, a process
// of its own that takes a visible moment; the Setup page refreshes itself
// every two seconds, so LogonState asks once and again only after Hearth
// itself changed the task (Enable, Disable through it: the tray's
// "Start at logon") or after Forget. A failed read is not remembered: the
// next one asks again.
type LogonState struct {
	mu    sync.Mutex
	known bool
	on    bool
	// query, enable and disable are the Task Scheduler's (Enabled,
	// Enable, Disable); the package's tests count them.
	query   func() (bool, error)
	enable  func(exePath string) error
	disable func() error
}

// NewLogonState reads and changes the logon task through Task Scheduler
// (ErrUnsupported off Windows).
func NewLogonState() *LogonState {
	return &LogonState{query: Enabled, enable: Enable, disable: Disable}
}

// Enabled reports whether the logon task is registered: what was read
// before, unless Hearth changed the task since.
func (l *LogonState) Enabled() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.known {
		return l.on, nil
	}
	on, err := l.query()
	if err != nil {
		return false, err
	}
	l.known, l.on = true, on
	return on, nil
}

// Enable registers the logon task (Enable) and forgets what was read.
func (l *LogonState) Enable(exePath string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known = false
	return l.enable(exePath)
}

// Disable removes the logon task (Disable) and forgets what was read.
func (l *LogonState) Disable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known = false
	return l.disable()
}

// Forget makes the next Enabled ask Task Scheduler again (the task may
// have been changed outside Hearth: Task Scheduler's own window, an
// install from another copy).
func (l *LogonState) Forget() {
	l.mu.Lock()
	l.known = false
	l.mu.Unlock()
}
