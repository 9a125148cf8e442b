package selftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/hearth-dev/hearth/internal/desktop"
	"github.com/hearth-dev/hearth/internal/screen"
)

// The desktop checks: ui.windows lists the fixture window and ui.window
// moves it (across to the second monitor when there is one) and back;
// ui.open opens a text file in its app and Notepad by the name the Start
// menu gives it in this PC's language. In the policy ask the first of
// each waits for a permit, which the selftest approves as its operator;
// what the checks open is closed when the run finishes.

// settledOrApproved calls the ui tool and, when the call waits for a
// permit, approves it as the operator and returns what the approved call
// ended with.
func (r *run) settledOrApproved(ctx context.Context, prim string, args map[string]any) (*result, bool, error) {
	res, err := r.hearth.callSettled(ctx, "ui", args)
	if err != nil {
		return nil, false, err
	}
	if res.State() != "pending" || res.Str("permit_id") == "" {
		return res, false, nil
	}
	env, err := r.approveFirst(ctx, prim, res)
	if err != nil {
		return nil, true, err
	}
	return &result{Env: env}, true, nil
}

// closeLater ends process pid (an app a check opened) when the run
// finishes.
func (r *run) closeLater(what string, pid int) {
	if pid <= 0 {
		return
	}
	r.onFinish("close "+what, func() error {
		p, err := os.FindProcess(pid)
		if err != nil {
			return nil
		}
		p.Kill()
		return nil
	})
}

func asked(waited bool) string {
	if waited {
		return " (after one permit)"
	}
	return ""
}

func (r *run) checkWindows(ctx context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		// ui.windows and ui.window under X11 are tested with Xvfb
		// (internal/desktop).
		return "", notWindows("the window list of Win32 windows")
	}
	hwnd := r.fixture.ready.HWND
	list, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "windows", "process_id": r.fixture.ready.PID})
	if err != nil {
		return "", err
	}
	if list.State() != "completed" {
		return "", fmt.Errorf("ui.windows answered %s", list.Brief())
	}
	wins, _ := list.Get("result.windows").([]any)
	mons, _ := list.Get("result.monitors").([]any)
	var x, y float64
	found := false
	for _, w := range wins {
		m, _ := w.(map[string]any)
		if h, _ := m["hwnd"].(float64); uint64(h) == hwnd {
			b, _ := m["bounds"].(map[string]any)
			x, _ = b["x"].(float64)
			y, _ = b["y"].(float64)
			found = true
		}
	}
	if !found {
		return "", fmt.Errorf("ui.windows of the fixture's process does not list its window %d: %s", hwnd, list.Brief())
	}
	// To the second monitor when there is one, else 40 pixels right.
	toX, toY, wantMon := x+40, y+20, 0.0
	if len(mons) >= 2 {
		m2, _ := mons[1].(map[string]any)
		mx, _ := m2["x"].(float64)
		my, _ := m2["y"].(float64)
		toX, toY, wantMon = mx+40, my+40, 2
	}
	moved, waited, err := r.settledOrApproved(ctx, "ui.window", map[string]any{"operation": "window", "hwnd": hwnd, "window_action": "move", "x": toX, "y": toY})
	if err != nil {
		return "", err
	}
	if moved.State() != "completed" || moved.Num("result.window.bounds.x") != toX || moved.Num("result.window.bounds.y") != toY {
		return "", fmt.Errorf("ui.window move of the fixture window to (%v, %v) answered %s", toX, toY, moved.Brief())
	}
	if wantMon != 0 && moved.Num("result.window.monitor") != wantMon {
		return "", fmt.Errorf("the fixture window moved to monitor 2's corner is listed on monitor %v", moved.Num("result.window.monitor"))
	}
	back, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "window", "hwnd": hwnd, "window_action": "move", "x": x, "y": y})
	if err != nil {
		return "", err
	}
	if back.State() != "completed" || back.Num("result.window.bounds.x") != x {
		return "", fmt.Errorf("ui.window move back answered %s", back.Brief())
	}
	return fmt.Sprintf("ui.windows listed the fixture window (%d monitor(s)); ui.window moved it to (%v, %v)%s and back to (%v, %v)",
		len(mons), toX, toY, asked(waited), x, y), nil
}

func (r *run) checkOpenFile(ctx context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		// ui.open with xdg-open is tested with a fake handler (internal/desktop).
		return "", notWindows("ShellExecuteEx of a document")
	}
	doc := filepath.Join(r.root, "Hearth selftest note.txt")
	if err := os.WriteFile(doc, []byte("Hearth selftest: this note was opened by ui.open.\r\n"), 0o600); err != nil {
		return "", err
	}
	res, waited, err := r.settledOrApproved(ctx, "ui.open", map[string]any{"operation": "open", "path": doc})
	if err != nil {
		return "", err
	}
	if res.Code() == "failed/open_failed" && underWine() {
		return "", skip("Wine registers no app for .txt files here: %s", res.Str("error.message"))
	}
	if res.State() != "completed" {
		return "", fmt.Errorf("ui.open of a .txt file answered %s", res.Brief())
	}
	pid := int(res.Num("result.process_id"))
	r.closeLater("the app that opened the .txt file", pid)
	return fmt.Sprintf("ui.open opened a .txt file in its app%s (process %d)", asked(waited), pid), nil
}

// notepadAUMID is Notepad's AppUserModelID where it is a packaged app
// (Windows 11), which the Start menu's shortcuts do not list.
const notepadAUMID = "Microsoft.WindowsNotepad_8wekyb3d8bbwe!App"

func (r *run) checkOpenNotepad(ctx context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		return "", notWindows("Notepad by its Start menu name")
	}
	app, ok, err := desktop.AppOf("notepad.exe")
	if err != nil {
		return "", fmt.Errorf("list the Start menu's apps: %w", err)
	}
	name := app.Name
	if !ok {
		name = notepadAUMID
	}
	res, waited, err := r.settledOrApproved(ctx, "ui.open", map[string]any{"operation": "open", "app": name})
	if err != nil {
		return "", err
	}
	if !ok && res.State() != "completed" {
		return "", skip("the Start menu names no Notepad here and it is not the packaged Notepad either: %s", res.Brief())
	}
	if res.State() != "completed" {
		return "", fmt.Errorf("ui.open of %q (Notepad as the Start menu names it) answered %s", name, res.Brief())
	}
	pid := int(res.Num("result.process_id"))
	r.closeLater("Notepad", pid)
	return fmt.Sprintf("ui.open opened Notepad by its name %q%s (process %d)", name, asked(waited), pid), nil
}

// checkSecureDesktop reads the input desktop as ui.action and ui.window do
// before any input. Here, on the person's own desktop, it must say input
// may go (a wrong refusal would block every click); the refusal under a
// UAC prompt needs the person to answer one, which a selftest never
// raises, so that part is skipped, saying where it is proved instead.
func (r *run) checkSecureDesktop(context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		return "", notWindows("the secure desktop of a UAC prompt")
	}
	if err := screen.InputDesktop(); err != nil {
		return "", fmt.Errorf("on the desktop the selftest runs on, the input desktop check refuses input: %w", err)
	}
	return "", skip("the input desktop reads as the person's own (\"Default\"), so input goes through; a UAC prompt needs the person's answer, which the selftest never asks for, so the refusal under one (blocked, secure_desktop) is proved by the tests of internal/screen, internal/uia and internal/desktop")
}
