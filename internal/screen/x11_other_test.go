//go:build !windows

package screen_test

import (
	"context"
	"image"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/screen/screentest"
)

// TestScreenshotWindowUnderXvfb captures a real X window by its id and by
// its process, and the monitor and a region around it: the image is a
// decodable PNG of the window's size in the window's color, with bounds
// that map back to the screen.
func TestScreenshotWindowUnderXvfb(t *testing.T) {
	display := screentest.StartXvfb(t)
	const red, blue = 0xdd2211, 0x1133cc
	w := screentest.OpenWindow(t, display, 50, 60, 200, 100, red, "target window", 4242)
	screentest.OpenWindow(t, display, 400, 300, 80, 40, blue, "other", 4343)
	s := &screen.Service{}
	defer s.Close()
	ctx := context.Background()

	shot, err := s.Screenshot(ctx, screen.ShotInput{HWND: uint64(w.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if shot.Target != "window" || shot.Bounds != (screen.Rect{X: 50, Y: 60, W: 200, H: 100}) || shot.ProcessID != 4242 || shot.Title != "target window" || shot.Scale != 1 {
		t.Fatalf("window shot %s", brief(shot))
	}
	img := decodeShot(t, shot)
	for _, p := range []image.Point{{0, 0}, {100, 50}, {199, 99}} {
		if !near(img.At(p.X, p.Y), red) {
			t.Errorf("pixel %v is %v, want the window's red", p, img.At(p.X, p.Y))
		}
	}

	byPID, err := s.Screenshot(ctx, screen.ShotInput{ProcessID: 4343})
	if err != nil {
		t.Fatal(err)
	}
	if byPID.Bounds != (screen.Rect{X: 400, Y: 300, W: 80, H: 40}) || !near(decodeShot(t, byPID).At(40, 20), blue) {
		t.Fatalf("process shot %s", brief(byPID))
	}

	mon, err := s.Screenshot(ctx, screen.ShotInput{})
	if err != nil {
		t.Fatal(err)
	}
	if mon.Target != "monitor" || mon.Monitor != 1 || mon.Bounds != (screen.Rect{W: screentest.Width, H: screentest.Height}) {
		t.Fatalf("monitor shot %s", brief(mon))
	}
	full := decodeShot(t, mon)
	if !near(full.At(60, 70), red) || !near(full.At(410, 310), blue) {
		t.Errorf("monitor shot does not show both windows where they are")
	}

	// A region partly off screen is clipped to it.
	reg, err := s.Screenshot(ctx, screen.ShotInput{Region: &screen.Rect{X: 600, Y: 440, W: 100, H: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Bounds != (screen.Rect{X: 600, Y: 440, W: 40, H: 40}) || reg.Width != 40 {
		t.Fatalf("region shot %s", brief(reg))
	}
	if _, err := s.Screenshot(ctx, screen.ShotInput{Region: &screen.Rect{X: 5000, Y: 0, W: 10, H: 10}}); errCode(err) != "offscreen" {
		t.Fatalf("off-screen region: %v", err)
	}
	if _, err := s.Screenshot(ctx, screen.ShotInput{HWND: 12345}); errCode(err) != "not_found" {
		t.Fatalf("unknown window: %v", err)
	}
	if _, err := s.Screenshot(ctx, screen.ShotInput{Monitor: 2}); err == nil || !strings.Contains(err.Error(), "monitor") {
		t.Fatalf("monitor 2 of 1: %v", err)
	}
}

// TestScreenshotHidesHearthsWindows: a window of Hearth's process, and one
// titled as the control panel, are refused as targets and painted black in
// a monitor capture.
func TestScreenshotHidesHearthsWindows(t *testing.T) {
	display := screentest.StartXvfb(t)
	const green = 0x22cc44
	own := screentest.OpenWindow(t, display, 10, 10, 100, 80, green, "tray", os.Getpid())
	panel := screentest.OpenWindow(t, display, 300, 200, 120, 90, green, "Approvals — Hearth control panel - Chromium", 777)
	other := screentest.OpenWindow(t, display, 200, 10, 50, 50, green, "someone else's", 778)
	s := &screen.Service{IsPanel: func(title string) bool { return strings.Contains(title, "Hearth control panel") }}
	defer s.Close()
	ctx := context.Background()
	for _, in := range []screen.ShotInput{{HWND: uint64(own.ID)}, {HWND: uint64(panel.ID)}, {ProcessID: os.Getpid()}} {
		if _, err := s.Screenshot(ctx, in); errCode(err) != "operator_surface" {
			t.Errorf("%+v: %v, want operator_surface", in, err)
		}
	}
	shot, err := s.Screenshot(ctx, screen.ShotInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(shot.BlackedOut) != 2 {
		t.Fatalf("blacked out %v, want the two windows", shot.BlackedOut)
	}
	img := decodeShot(t, shot)
	for _, p := range []image.Point{{10, 10}, {109, 89}, {360, 250}} {
		if !near(img.At(p.X, p.Y), 0) {
			t.Errorf("pixel %v of Hearth's window is %v, want black", p, img.At(p.X, p.Y))
		}
	}
	if !near(img.At(220, 30), green) {
		t.Errorf("another program's window was blacked out too: %v", img.At(220, 30))
	}
	// A region overlapping Hearth's window hides the overlap only.
	reg, err := s.Screenshot(ctx, screen.ShotInput{Region: &screen.Rect{X: 100, Y: 10, W: 150, H: 20}})
	if err != nil {
		t.Fatal(err)
	}
	ri := decodeShot(t, reg)
	if !near(ri.At(5, 5), 0) || !near(ri.At(105, 5), green) {
		t.Errorf("region: Hearth's part %v, other's part %v", ri.At(5, 5), ri.At(105, 5))
	}
	if _, err := s.Screenshot(ctx, screen.ShotInput{HWND: uint64(other.ID)}); err != nil {
		t.Errorf("another program's window: %v", err)
	}
}

// TestScreenshotBounds: max_width scales the image down with the scale
// reported; JPEG carries its quality; max_bytes is met by encoding smaller.
func TestScreenshotBounds(t *testing.T) {
	screentest.StartXvfb(t)
	s := &screen.Service{}
	defer s.Close()
	ctx := context.Background()
	small, err := s.Screenshot(ctx, screen.ShotInput{MaxWidth: 320})
	if err != nil {
		t.Fatal(err)
	}
	if small.Width != 320 || small.Height != 240 || small.Scale != 0.5 || small.Bounds.W != screentest.Width {
		t.Fatalf("max_width 320: %s", brief(small))
	}
	decodeShot(t, small)
	j, err := s.Screenshot(ctx, screen.ShotInput{Format: "jpeg", Quality: 55})
	if err != nil {
		t.Fatal(err)
	}
	if j.MimeType != "image/jpeg" || j.Quality != 55 {
		t.Fatalf("jpeg: %s", brief(j))
	}
	decodeShot(t, j)
	if _, err := s.Screenshot(ctx, screen.ShotInput{Quality: 50}); err == nil {
		t.Fatal("quality without jpeg was accepted")
	}
	if _, err := s.Screenshot(ctx, screen.ShotInput{Monitor: 1, HWND: 5}); err == nil || !strings.Contains(err.Error(), "at most one target") {
		t.Fatalf("two targets: %v", err)
	}
}

// TestClipboardRoundTripUnderXvfb sets the X11 CLIPBOARD and reads it back
// through the selection protocol (Hearth's owner goroutine answers its own
// reader on another connection), as xclip, if installed, does too.
func TestClipboardRoundTripUnderXvfb(t *testing.T) {
	screentest.StartXvfb(t)
	s := &screen.Service{}
	defer s.Close()
	ctx := context.Background()
	if got, err := s.ClipboardGet(ctx, 0); err != nil || got.Text != "" {
		t.Fatalf("empty clipboard: %+v, %v", got, err)
	}
	text := "pässwörd? no: " + strings.Repeat("日本語 ", 30000) // ~300 KB: several requests
	if _, err := s.ClipboardSet(ctx, text); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClipboardGet(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != text || got.Bytes != len(text) {
		t.Fatalf("read back %d bytes, set %d", len(got.Text), len(text))
	}
	if _, err := s.ClipboardGet(ctx, 100); errCode(err) != "too_large" {
		t.Fatalf("max_bytes 100 of %d: %v", len(text), err)
	}
	if xclip, err := exec.LookPath("xclip"); err == nil {
		out, err := exec.Command(xclip, "-o", "-selection", "clipboard").Output()
		if err != nil || string(out) != text {
			t.Fatalf("xclip read %d bytes (%v)", len(out), err)
		}
	}
	if _, err := s.ClipboardSet(ctx, "a\x00b"); errCode(err) != "invalid_input" {
		t.Fatalf("NUL: %v", err)
	}
	// Closing gives the clipboard up: X keeps nothing for Hearth.
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := (&screen.Service{}).ClipboardGet(ctx, 0)
		if err == nil && got.Text == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Close the clipboard still reads %d bytes (%v)", len(got.Text), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScreenshotOfXclock captures the window of a real X program (xclock
// of x11-apps) by its process: the bounds are its geometry and the picture
// its background color with the clock drawn on it.
func TestScreenshotOfXclock(t *testing.T) {
	display := screentest.StartXvfb(t)
	bin, err := exec.LookPath("xclock")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("xclock is missing in CI (scripts/install-deps installs x11-apps): %v", err)
		}
		t.Skipf("xclock is not installed (apt-get install x11-apps): %v", err)
	}
	cmd := exec.Command(bin, "-display", display, "-geometry", "200x200+20+30", "-bg", "#22aa44", "-fg", "black", "-hd", "black")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	s := &screen.Service{}
	defer s.Close()
	var shot *screen.Shot
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if shot, err = s.Screenshot(context.Background(), screen.ShotInput{ProcessID: cmd.Process.Pid}); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("xclock's window: %v", err)
	}
	// The bounds are the window's outer ones: its 1-pixel X border too.
	if shot.Bounds != (screen.Rect{X: 20, Y: 30, W: 202, H: 202}) || shot.Title != "xclock" {
		t.Fatalf("xclock shot of %v titled %q", shot.Bounds, shot.Title)
	}
	img := decodeShot(t, shot)
	green, dark := 0, 0
	for y := 1; y < 201; y += 4 {
		for x := 1; x < 201; x += 4 {
			switch c := img.At(x, y); {
			case near(c, 0x22aa44):
				green++
			case near(c, 0):
				dark++
			}
		}
	}
	// Most of the face is background; the tick marks and hands are drawn
	// in black.
	if green < 1500 || dark == 0 {
		t.Fatalf("xclock's picture has %d background and %d black samples of 2500", green, dark)
	}
}

// TestNoDisplayIsUnavailable: without an X session (a headless serve)
// every call answers blocked, unavailable, saying why.
func TestNoDisplayIsUnavailable(t *testing.T) {
	t.Setenv("DISPLAY", "")
	s := &screen.Service{}
	defer s.Close()
	ctx := context.Background()
	_, shotErr := s.Screenshot(ctx, screen.ShotInput{})
	_, getErr := s.ClipboardGet(ctx, 0)
	_, setErr := s.ClipboardSet(ctx, "x")
	for _, err := range []error{shotErr, getErr, setErr} {
		if errCode(err) != "unavailable" || !strings.Contains(err.Error(), "DISPLAY is not set") {
			t.Errorf("without DISPLAY: %v", err)
		}
	}
}
