// Package uiatest holds the fake UI Automation provider the tests of
// internal/uia, internal/selftest and internal/wake run against on every
// OS: an in-memory desktop tree with switches for the host states the
// Service must refuse. It is for tests only and no shipped code imports it.
package uiatest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-dev/hearth/internal/uia"
)

// FakeElement is one element of a FakeProvider's tree.
type FakeElement struct {
	uia.Props
	Children []*FakeElement
	// Gone makes every read of or action on the element fail with ErrGone.
	Gone bool
}

// FakeAction is one action a FakeProvider performed.
type FakeAction struct {
	Action       string
	AutomationID string
	Value        string
	VirtualKey   uint16
	Scope        uia.Scope
}

// FakeProvider is an in-memory Provider for tests: a desktop tree, and
// switches for the host states the Service must refuse. It records the
// actions it performed, counts references it handed out and not released,
// and counts calls that overlapped another (which the Service's one worker
// must make impossible).
type FakeProvider struct {
	// Desktop is the root; its children are the top-level windows.
	Desktop *FakeElement
	// OpenErr, when set, is what Open returns (UI Automation unavailable).
	OpenErr error
	// NoDesktop, when set, is what InteractiveDesktop returns, from its
	// NoDesktopFrom-th call on (counted from 1; 0 and 1: every call), so a
	// test can raise a UAC prompt between the walk and the input.
	NoDesktop     error
	NoDesktopFrom int
	// ElevatedPIDs are processes running elevated.
	ElevatedPIDs map[int]bool
	// NotForeground makes fallback input fail with ErrNotForeground.
	NotForeground bool
	// TopLevelErr, when set, is what TopLevel returns.
	TopLevelErr error
	// CallDelay makes every call take at least this long, to widen any
	// window in which two calls could overlap.
	CallDelay time.Duration

	mu          sync.Mutex
	actions     []FakeAction
	outstanding int
	opens       int
	inFlight    atomic.Int32
	overlaps    atomic.Int32
	calls       atomic.Int64
	deskChecks  int
}

// enter marks a call in progress and returns its end.
func (f *FakeProvider) enter() func() {
	f.calls.Add(1)
	if f.inFlight.Add(1) > 1 {
		f.overlaps.Add(1)
	}
	if f.CallDelay > 0 {
		time.Sleep(f.CallDelay)
	}
	return func() { f.inFlight.Add(-1) }
}

// Overlaps returns how many calls started while another was in progress.
func (f *FakeProvider) Overlaps() int { return int(f.overlaps.Load()) }

// Calls returns how many provider calls were made.
func (f *FakeProvider) Calls() int { return int(f.calls.Load()) }

// Outstanding returns how many handed-out references were not released.
func (f *FakeProvider) Outstanding() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.outstanding
}

// Opens returns how many times the provider was opened.
func (f *FakeProvider) Opens() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opens
}

// Actions returns the actions performed so far.
func (f *FakeProvider) Actions() []FakeAction {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeAction(nil), f.actions...)
}

func (f *FakeProvider) Open() error {
	defer f.enter()()
	if f.OpenErr != nil {
		return f.OpenErr
	}
	f.mu.Lock()
	f.opens++
	f.mu.Unlock()
	return nil
}

func (f *FakeProvider) Close() { defer f.enter()() }

func (f *FakeProvider) InteractiveDesktop() error {
	defer f.enter()()
	f.mu.Lock()
	f.deskChecks++
	n := f.deskChecks
	f.mu.Unlock()
	if n < f.NoDesktopFrom {
		return nil
	}
	return f.NoDesktop
}

func (f *FakeProvider) hand(refs []*FakeElement) []uia.Ref {
	f.mu.Lock()
	f.outstanding += len(refs)
	f.mu.Unlock()
	out := make([]uia.Ref, len(refs))
	for i, r := range refs {
		out[i] = r
	}
	return out
}

func (f *FakeProvider) each(fn func(e *FakeElement)) {
	var visit func(e *FakeElement)
	visit = func(e *FakeElement) {
		fn(e)
		for _, c := range e.Children {
			visit(c)
		}
	}
	if f.Desktop != nil {
		visit(f.Desktop)
	}
}

func (f *FakeProvider) Roots(s uia.Scope) ([]uia.Ref, error) {
	defer f.enter()()
	if f.Desktop == nil {
		return nil, fmt.Errorf("no desktop: %w", uia.ErrNotFound)
	}
	switch {
	case s.HWND != 0:
		var found *FakeElement
		f.each(func(e *FakeElement) {
			if found == nil && e.HWND == s.HWND {
				found = e
			}
		})
		if found == nil {
			return nil, fmt.Errorf("hwnd %d is not a window: %w", s.HWND, uia.ErrNotFound)
		}
		return f.hand([]*FakeElement{found}), nil
	case s.ProcessID != 0:
		var wins []*FakeElement
		for _, w := range f.Desktop.Children {
			if w.ProcessID == s.ProcessID {
				wins = append(wins, w)
			}
		}
		if len(wins) == 0 {
			return nil, fmt.Errorf("process %d has no top-level window: %w", s.ProcessID, uia.ErrNotFound)
		}
		return f.hand(wins), nil
	}
	return f.hand([]*FakeElement{f.Desktop}), nil
}

func (f *FakeProvider) Children(r uia.Ref, limit int) ([]uia.Ref, bool, error) {
	defer f.enter()()
	e := r.(*FakeElement)
	if e.Gone {
		return nil, false, uia.ErrGone
	}
	kids := e.Children
	more := false
	if len(kids) > limit {
		kids, more = kids[:limit], true
	}
	return f.hand(kids), more, nil
}

func (f *FakeProvider) Props(r uia.Ref) (uia.Props, error) {
	defer f.enter()()
	e := r.(*FakeElement)
	if e.Gone {
		return uia.Props{}, uia.ErrGone
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := e.Props
	if e.Value != nil {
		v := *e.Value
		p.Value = &v
	}
	return p, nil
}

func (f *FakeProvider) Release(uia.Ref) {
	defer f.enter()()
	f.mu.Lock()
	f.outstanding--
	f.mu.Unlock()
}

// TopLevel finds the element whose HWND is hwnd and returns the top-level
// window it lies in: the child of Desktop on its path (the Desktop itself
// when hwnd is the Desktop's).
func (f *FakeProvider) TopLevel(hwnd uint64) (uia.Window, error) {
	defer f.enter()()
	if f.TopLevelErr != nil {
		return uia.Window{}, f.TopLevelErr
	}
	if f.Desktop == nil || hwnd == 0 {
		return uia.Window{}, fmt.Errorf("hwnd %d is not a window: %w", hwnd, uia.ErrNotFound)
	}
	var find func(e *FakeElement) bool
	find = func(e *FakeElement) bool {
		if e.HWND == hwnd {
			return true
		}
		for _, c := range e.Children {
			if find(c) {
				return true
			}
		}
		return false
	}
	top := f.Desktop
	if f.Desktop.HWND != hwnd {
		top = nil
		for _, w := range f.Desktop.Children {
			if find(w) {
				top = w
				break
			}
		}
	}
	if top == nil {
		return uia.Window{}, fmt.Errorf("hwnd %d is not a window: %w", hwnd, uia.ErrNotFound)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return uia.Window{HWND: top.HWND, Title: top.Name, ProcessID: top.ProcessID}, nil
}

func (f *FakeProvider) Elevated(pid int) (bool, error) {
	defer f.enter()()
	return f.ElevatedPIDs[pid], nil
}

func (f *FakeProvider) record(e *FakeElement, a FakeAction) error {
	if e.Gone {
		return uia.ErrGone
	}
	a.AutomationID = e.AutomationID
	f.mu.Lock()
	f.actions = append(f.actions, a)
	f.mu.Unlock()
	return nil
}

func (f *FakeProvider) Invoke(r uia.Ref) error {
	defer f.enter()()
	return f.record(r.(*FakeElement), FakeAction{Action: uia.ActInvoke})
}

func (f *FakeProvider) Focus(r uia.Ref) error {
	defer f.enter()()
	return f.record(r.(*FakeElement), FakeAction{Action: uia.ActFocus})
}

func (f *FakeProvider) SetValue(r uia.Ref, value string) error {
	defer f.enter()()
	e := r.(*FakeElement)
	if err := f.record(e, FakeAction{Action: uia.ActSetValue, Value: value}); err != nil {
		return err
	}
	f.mu.Lock()
	e.Value = &value
	f.mu.Unlock()
	return nil
}

func (f *FakeProvider) Click(s uia.Scope, r uia.Ref) error {
	defer f.enter()()
	if f.NotForeground {
		return uia.ErrNotForeground
	}
	return f.record(r.(*FakeElement), FakeAction{Action: uia.ActClick, Scope: s})
}

func (f *FakeProvider) Key(s uia.Scope, r uia.Ref, vk uint16) error {
	defer f.enter()()
	if f.NotForeground {
		return uia.ErrNotForeground
	}
	return f.record(r.(*FakeElement), FakeAction{Action: uia.ActKey, VirtualKey: vk, Scope: s})
}
