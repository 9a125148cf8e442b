// Package uia is Hearth's UI Automation (docs/DESIGN.md, "UI Automation"): the ui.snapshot,
// ui.query and ui.action primitives over a small Provider interface.
//
// Everything that decides what a caller sees or may do lives here, in
// portable code tested on every OS against uiatest.FakeProvider: normalized nodes,
// snapshot-local locators, the max_depth/max_nodes/deadline bounds,
// exact target matching (several or no matches are a conflict, never a
// guess), the fallback-input rules, and the refusals for elevated targets
// and a missing interactive desktop. All provider calls run on one worker
// goroutine locked to its OS thread (on Windows a COM single-threaded
// apartment), so UI work is globally serialized. The Windows provider
// (provider_windows.go) reads UI Automation through COM; on other systems
// the default provider answers that UI Automation is unavailable.
package uia

import (
	"errors"
	"fmt"
)

// Ref is a provider's handle on one element. It stays valid until the
// provider's Release, and is used only on the worker thread.
type Ref any

// Scope is the root of a walk: a window handle, the top-level windows of a
// process, or (both zero) the desktop.
type Scope struct {
	HWND      uint64 `json:"hwnd,omitempty"`
	ProcessID int    `json:"process_id,omitempty"`
}

// Scoped reports whether the scope names a window or a process, which
// fallback input requires.
func (s Scope) Scoped() bool { return s.HWND != 0 || s.ProcessID != 0 }

func (s Scope) String() string {
	switch {
	case s.HWND != 0:
		return fmt.Sprintf("hwnd %d", s.HWND)
	case s.ProcessID != 0:
		return fmt.Sprintf("process %d", s.ProcessID)
	}
	return "the desktop"
}

// Bounds is a screen rectangle in physical pixels.
type Bounds struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// Empty reports whether the rectangle has no area.
func (b Bounds) Empty() bool { return b.W <= 0 || b.H <= 0 }

// Props is what a provider reads of one element, before normalization.
type Props struct {
	Name         string
	AutomationID string
	ClassName    string
	// ControlType is a UI Automation control type name ("Button",
	// "ControlType.Button" and "button" all normalize to "Button").
	ControlType string
	ProcessID   int
	HWND        uint64
	Enabled     bool
	Offscreen   bool
	Focused     bool
	Bounds      Bounds
	// Patterns are the supported control patterns ("invoke", "value",
	// "InvokePattern" …; normalized to lower snake case).
	Patterns []string
	// Value is the value pattern's current value, when there is one.
	Value *string
	// Password marks a password field: its value is never reported.
	Password bool
}

// Window is a top-level window as the operator-surface check sees it.
type Window struct {
	HWND      uint64
	Title     string
	ProcessID int
}

// Provider is the host's UI Automation. The Service calls every method
// from its one worker goroutine, which is locked to an OS thread, and
// never two at once.
type Provider interface {
	// Open prepares the worker thread (on Windows: a COM STA and the
	// IUIAutomation object). Its error says why UI Automation is
	// unavailable on this host; Close undoes a successful Open.
	Open() error
	Close()
	// InteractiveDesktop returns nil when Hearth's session owns the
	// interactive input desktop, else an error saying why not (locked
	// workstation, secure desktop, no user session).
	InteractiveDesktop() error
	// Roots returns the roots of a walk: the window s.HWND, the top-level
	// windows of s.ProcessID, or the desktop. A window or process that does
	// not exist is ErrNotFound.
	Roots(s Scope) ([]Ref, error)
	// Children returns at most limit children of r in order, and whether
	// it has more.
	Children(r Ref, limit int) ([]Ref, bool, error)
	Props(r Ref) (Props, error)
	Release(r Ref)
	// TopLevel returns the top-level window that window hwnd belongs to
	// (on Windows GetAncestor(hwnd, GA_ROOT)): its handle, its title and
	// the process that owns it. It reads the title without sending the
	// window a message, so a hung window cannot stall the worker. A handle
	// that is not a window is ErrNotFound.
	TopLevel(hwnd uint64) (Window, error)
	// Elevated reports whether process pid runs with more privilege than
	// Hearth (Windows would drop or refuse Hearth's input to it); an error
	// means it could not tell.
	Elevated(pid int) (bool, error)
	Invoke(r Ref) error
	Focus(r Ref) error
	SetValue(r Ref, value string) error
	// Click and Key are fallback input: they bring the scoped window to
	// the foreground first and return ErrNotForeground, sending nothing,
	// when it did not come there.
	Click(s Scope, r Ref) error
	Key(s Scope, r Ref, vk uint16) error
}

// Errors a provider returns for states the Service reports distinctly.
var (
	// ErrNotFound: the scope's window or process does not exist (or has
	// no top-level windows).
	ErrNotFound = errors.New("not found")
	// ErrGone: the element vanished while it was being read or used.
	ErrGone = errors.New("element is no longer available")
	// ErrNotForeground: fallback input was not sent because the scoped
	// window could not be brought to (or kept in) the foreground.
	ErrNotForeground = errors.New("the scoped window is not in the foreground")
	// ErrUnsupported: the element does not support what was asked.
	ErrUnsupported = errors.New("not supported by this element")
)

// Unavailable is the reason every ui call gives where UI Automation does
// not exist (docs/DESIGN.md, "UI Automation").
const Unavailable = "ui automation unavailable on this host"
