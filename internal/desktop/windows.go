package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/screen"
)

// ui.windows and ui.window: the top-level windows a person sees (title,
// process, app, bounds, monitor, state) and what a person does to one
// (focus, minimize, maximize, restore, move, resize, close). The list and
// the monitors come from the screen's Display (the same view
// ui.screenshot has, so a window's bounds and a screenshot's coordinates
// agree); a window's state and the changes are the platform's
// (window_windows.go: user32; window_other.go: X11). Hearth's own windows
// (its process's, and any showing the control panel) are not listed and
// are refused as a target.

// WindowInfo is one window as ui.windows lists it.
type WindowInfo struct {
	HWND      uint64      `json:"hwnd"`
	Title     string      `json:"title"`
	ProcessID int         `json:"process_id"`
	App       string      `json:"app,omitempty"`
	Bounds    screen.Rect `json:"bounds"`
	// Monitor is the number of the monitor holding most of the window
	// (1 = the primary, as ui.screenshot numbers them); 0 when none does.
	Monitor   int  `json:"monitor"`
	Minimized bool `json:"minimized"`
	Maximized bool `json:"maximized"`
	// Elevated: the window's process runs as administrator; Hearth, not
	// elevated, cannot drive it (Windows' rule), so ui.window answers
	// blocked for it.
	Elevated bool `json:"elevated"`
}

// WindowList is ui.windows' result.
type WindowList struct {
	Windows  []WindowInfo `json:"windows"`
	Monitors []Monitor    `json:"monitors"`
}

// Monitor is a monitor as ui.windows lists it (1 = the primary, as
// ui.screenshot numbers them): its rectangle in physical pixels and its
// scale (DPI over 96), as a screenshot of it reports.
type Monitor struct {
	screen.Rect
	Scale float64 `json:"scale"`
}

// WindowsInput is ui.windows' input.
type WindowsInput struct {
	ProcessID int `json:"process_id,omitempty"`
}

// WindowInput is ui.window's input.
type WindowInput struct {
	HWND   uint64 `json:"hwnd"`
	Action string `json:"window_action"`
	X      *int   `json:"x,omitempty"`
	Y      *int   `json:"y,omitempty"`
	W      *int   `json:"w,omitempty"`
	H      *int   `json:"h,omitempty"`
}

// WindowActions are ui.window's actions.
var WindowActions = []string{"focus", "minimize", "maximize", "restore", "move", "resize", "close"}

// WindowDone is ui.window's result: the window after the action (its
// bounds and state as listed), or closed.
type WindowDone struct {
	Action string      `json:"window_action"`
	Window *WindowInfo `json:"window,omitempty"`
	Closed bool        `json:"closed,omitempty"`
}

// own reports whether w is one of Hearth's own windows.
func (s *Service) own(w screen.Window) bool {
	return w.ProcessID == os.Getpid() || s.isPanel(w.Title)
}

// list reads the windows a person sees: shown or minimized, titled, not
// Hearth's.
func (s *Service) list() ([]WindowInfo, []Monitor, error) {
	d, err := s.display()
	if err != nil {
		return nil, nil, primitive.Failed("unavailable", "ui.windows: no screen to list windows on: %v", err)
	}
	defer d.Close()
	mons, err := d.Monitors()
	if err != nil {
		return nil, nil, primitive.Failed("windows_failed", "ui.windows: list the monitors: %v", err)
	}
	wins, err := d.Windows()
	if err != nil {
		return nil, nil, primitive.Failed("windows_failed", "ui.windows: list the windows: %v", err)
	}
	monitors := make([]Monitor, len(mons))
	for i, m := range mons {
		monitors[i] = Monitor{Rect: m, Scale: d.Scale(m)}
	}
	out := []WindowInfo{}
	for _, w := range wins {
		if w.Title == "" || s.own(w) {
			continue
		}
		st, ok := windowState(w.HWND)
		if !ok || !(w.Visible || st.minimized) {
			continue
		}
		info := WindowInfo{HWND: w.HWND, Title: w.Title, ProcessID: w.ProcessID, Bounds: w.Bounds,
			Monitor: monitorOf(w.Bounds, mons), Minimized: st.minimized, Maximized: st.maximized, Elevated: elevated(w.ProcessID)}
		if prog := programOf(w.ProcessID); prog != "" {
			info.App = strings.ToLower(filepath.Base(strings.ReplaceAll(prog, `\`, "/")))
		}
		out = append(out, info)
	}
	return out, monitors, nil
}

// monitorOf numbers the monitor that holds most of r (1-based; 0: none).
func monitorOf(r screen.Rect, mons []screen.Rect) int {
	best, area := 0, 0
	for i, m := range mons {
		w := min(r.X+r.W, m.X+m.W) - max(r.X, m.X)
		h := min(r.Y+r.H, m.Y+m.H) - max(r.Y, m.Y)
		if w > 0 && h > 0 && w*h > area {
			best, area = i+1, w*h
		}
	}
	return best
}

// Windows runs ui.windows.
func (s *Service) Windows(_ context.Context, in WindowsInput) (*WindowList, error) {
	wins, mons, err := s.list()
	if err != nil {
		return nil, err
	}
	if in.ProcessID != 0 {
		kept := wins[:0]
		for _, w := range wins {
			if w.ProcessID == in.ProcessID {
				kept = append(kept, w)
			}
		}
		wins = kept
	}
	return &WindowList{Windows: wins, Monitors: mons}, nil
}

// find returns the listed window hwnd: refused when it is Hearth's, not
// found when it is not a window a person sees.
func (s *Service) find(hwnd uint64) (*WindowInfo, error) {
	d, err := s.display()
	if err != nil {
		return nil, primitive.Failed("unavailable", "ui.window: no screen: %v", err)
	}
	wins, err := d.Windows()
	d.Close()
	if err != nil {
		return nil, primitive.Failed("windows_failed", "ui.window: list the windows: %v", err)
	}
	for _, w := range wins {
		if w.HWND == hwnd && s.own(w) {
			return nil, primitive.Blocked("operator_surface", "ui.window: hwnd %d is one of Hearth's own windows, which ChatGPT may not change", hwnd)
		}
	}
	all, _, err := s.list()
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].HWND == hwnd {
			return &all[i], nil
		}
	}
	return nil, primitive.Failed("not_found", "ui.window: hwnd: no window %d is on screen (ui.windows lists them)", hwnd)
}

// checkWindow validates ui.window's input.
func checkWindow(in WindowInput) error {
	if in.HWND == 0 {
		return invalid("window", "hwnd", "give the window's hwnd from ui.windows")
	}
	switch in.Action {
	case "move":
		if in.X == nil || in.Y == nil {
			return invalid("window", "x", "move needs x and y (the window's new top-left corner, in screen pixels)")
		}
	case "resize":
		if in.W == nil || in.H == nil || *in.W < 1 || *in.H < 1 {
			return invalid("window", "w", "resize needs w and h of at least 1 pixel")
		}
	case "focus", "minimize", "maximize", "restore", "close":
	default:
		return invalid("window", "window_action", "one of %s", strings.Join(WindowActions, ", "))
	}
	return nil
}

// Window runs ui.window.
func (s *Service) Window(ctx context.Context, in WindowInput) (*WindowDone, error) {
	if err := checkWindow(in); err != nil {
		return nil, err
	}
	if err := s.inputDesktop(); err != nil {
		code := "no_interactive_desktop"
		if errors.Is(err, screen.ErrSecureDesktop) {
			code = "secure_desktop"
		}
		return nil, primitive.Blocked(code, "ui.window: %v; no window was changed", err).WithDetails(map[string]any{"reason": err.Error()})
	}
	w, err := s.find(in.HWND)
	if err != nil {
		return nil, err
	}
	if w.Elevated && !selfElevated() {
		return nil, primitive.Blocked("elevated", "ui.window: %q runs as administrator; Windows lets no program that is not (Hearth is not) change its windows. Do it yourself, or close it and open it normally", w.Title)
	}
	if err := changeWindow(w, in); err != nil {
		return nil, primitive.Failed("window_failed", "ui.window: %s %q: %v", in.Action, w.Title, err)
	}
	done := &WindowDone{Action: in.Action}
	if in.Action == "close" {
		done.Closed = waitGone(ctx, s, in.HWND)
		return done, nil
	}
	if after, err := s.find(in.HWND); err == nil {
		done.Window = after
	}
	return done, nil
}

// target is ui.window's Target: the app whose window it changes, asked
// about once per app per conversation as for ui.action (every time for a
// console's).
func (s *Service) windowTarget(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in WindowInput
	if err := json.Unmarshal(raw, &in); err != nil || in.HWND == 0 {
		return primitive.Target{}, nil
	}
	w, err := s.find(in.HWND)
	if err != nil || w.App == "" {
		return primitive.Target{}, nil
	}
	return primitive.Target{App: w.App, Console: risk.IsConsoleApp(w.App)}, nil
}

// waitGone waits up to 5 s for window hwnd to go after a close request
// and reports whether it did (an app may ask to save first).
func waitGone(ctx context.Context, s *Service, hwnd uint64) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if gone, known := windowGone(hwnd); known {
			if gone {
				return true
			}
		} else if d, err := s.display(); err == nil {
			wins, err := d.Windows()
			d.Close()
			gone := err == nil
			for _, w := range wins {
				if w.HWND == hwnd {
					gone = false
				}
			}
			if gone {
				return true
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
