// Package screen is Hearth's view of the desktop beside UI Automation: the
// ui.screenshot primitive (a window, a monitor or a region as an image the
// model sees) and the text clipboard (ui.clipboard_get, ui.clipboard_set).
//
// Everything that decides what a caller gets lives here in portable code:
// one target per call, the size bounds, Hearth's own windows refused as a
// target and blacked out of every other capture, the text bounds of the
// clipboard. The host is reached through two small interfaces: a Display
// (on Windows GDI and user32, display_windows.go; elsewhere the X11
// protocol in pure Go, display_other.go) and a Clipboard (user32 on
// Windows; the X11 CLIPBOARD selection elsewhere).
package screen

import (
	"errors"
	"image"
)

// Rect is a screen rectangle in physical pixels (as uia.Bounds).
type Rect struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

func (r Rect) image() image.Rectangle { return image.Rect(r.X, r.Y, r.X+r.W, r.Y+r.H) }

func fromImage(r image.Rectangle) Rect {
	return Rect{X: r.Min.X, Y: r.Min.Y, W: r.Dx(), H: r.Dy()}
}

// Window is a top-level window as a capture sees it.
type Window struct {
	// HWND is the window's handle (on X11 its window id).
	HWND uint64
	// ProcessID owns the window; 0 when the host does not say (an X11
	// client that sets no _NET_WM_PID).
	ProcessID int
	Title     string
	Bounds    Rect
	// Visible: shown on screen (mapped, not minimized).
	Visible bool
}

// Display is the host's screen. A Service opens one per call and closes
// it when the call ends; the methods are called from one goroutine.
type Display interface {
	// Monitors returns the monitors' rectangles, the primary first.
	Monitors() ([]Rect, error)
	// Scale is the display scale (DPI over 96: 1.5 at 150 %) of the
	// monitor holding most of r. Coordinates stay physical pixels; the
	// scale says how large things look there.
	Scale(r Rect) float64
	// Windows returns the top-level windows, topmost first.
	Windows() ([]Window, error)
	// Capture reads the pixels of r, which lies within the monitors, as
	// an RGBA image whose bounds start at (0, 0): image pixel (x, y) is
	// screen point (r.X + x, r.Y + y), black where the host has none.
	Capture(r Rect) (*image.RGBA, error)
	Close()
}

// Clipboard is the host's text clipboard.
type Clipboard interface {
	// Text returns the clipboard's text; ErrNoText when it holds none.
	// Text longer than maxBytes bytes of UTF-8 is ErrTooLong.
	Text(maxBytes int) (string, error)
	// SetText replaces the clipboard's content with text.
	SetText(text string) error
	// Close gives up whatever the clipboard still holds for Hearth (on
	// X11, the ownership of the selection Hearth set).
	Close()
}

// Errors a Display or Clipboard returns for states reported distinctly.
var (
	ErrNoDisplay = errors.New("no display")
	ErrNoText    = errors.New("the clipboard holds no text")
	ErrTooLong   = errors.New("the clipboard's text is longer than the bound")
)
