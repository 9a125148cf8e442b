//go:build !windows

package screen_test

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/screen/screentest"
)

// TestTwoMonitorsUnderRandR: on an X server with two monitors side by
// side (Xvfb with two RandR monitors), the monitors are both listed at their
// origins, and a screenshot of the second shows a window on it where the
// window is: image pixel (x, y) is screen point (bounds.x + x, bounds.y +
// y), the point a fallback click at that place would use.
func TestTwoMonitorsUnderRandR(t *testing.T) {
	display := screentest.StartXvfbTwoMonitors(t)
	const green = 0x22bb44
	screentest.OpenWindow(t, display, screentest.Width+100, 50, 120, 80, green, "on the second monitor", 4545)
	s := &screen.Service{}
	defer s.Close()
	shot, err := s.Screenshot(context.Background(), screen.ShotInput{Monitor: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := screen.Rect{X: screentest.Width, Y: 0, W: screentest.Width, H: screentest.Height}
	if shot.Target != "monitor" || shot.Monitor != 2 || shot.Bounds != want || shot.Scale != 1 {
		t.Fatalf("monitor 2 shot %s, want bounds %+v at scale 1", brief(shot), want)
	}
	img := decodeShot(t, shot)
	// The window's screen point (W+110, 60) is image pixel (110, 60).
	if !near(img.At(110, 60), green) {
		t.Errorf("image pixel (110, 60) of monitor 2 is %v, want the window's green", img.At(110, 60))
	}
	if near(img.At(10, 10), green) {
		t.Errorf("image pixel (10, 10) of monitor 2 shows the window, which is not there")
	}
	one, err := s.Screenshot(context.Background(), screen.ShotInput{Monitor: 1})
	if err != nil {
		t.Fatal(err)
	}
	if one.Bounds != (screen.Rect{W: screentest.Width, H: screentest.Height}) {
		t.Fatalf("monitor 1 shot %s", brief(one))
	}
}

// TestMonitorLeftOfThePrimary: the primary monitor on the right and a
// second one on its left (the X11 form of a Windows PC whose left monitor
// has a negative origin: X11 coordinates start at the root's corner) are
// listed primary first, each at its origin, and a screenshot of the left
// one shows a window on it where it is.
func TestMonitorLeftOfThePrimary(t *testing.T) {
	w, h := screentest.Width, screentest.Height
	display := screentest.StartXvfbMonitors(t, 2*w, h,
		screentest.Monitor{X: w, Y: 0, W: w, H: h}, screentest.Monitor{X: 0, Y: 0, W: w, H: h})
	const green = 0x22bb44
	screentest.OpenWindow(t, display, 100, 50, 120, 80, green, "on the left monitor", 4546)
	d, err := screen.DefaultDisplay()
	if err != nil {
		t.Fatal(err)
	}
	mons, err := d.Monitors()
	d.Close()
	if err != nil || len(mons) != 2 || mons[0] != (screen.Rect{X: w, W: w, H: h}) || mons[1] != (screen.Rect{W: w, H: h}) {
		t.Fatalf("monitors %+v, %v; want the primary at (%d, 0), then the left one at (0, 0)", mons, err, w)
	}
	s := &screen.Service{}
	defer s.Close()
	left, err := s.Screenshot(context.Background(), screen.ShotInput{Monitor: 2})
	if err != nil {
		t.Fatal(err)
	}
	if left.Bounds != mons[1] {
		t.Fatalf("left monitor shot %s", brief(left))
	}
	img := decodeShot(t, left)
	if !near(img.At(110, 60), green) || near(img.At(300, 300), green) {
		t.Errorf("left monitor: pixel (110, 60) is %v (want the window's green), (300, 300) is %v (want not)", img.At(110, 60), img.At(300, 300))
	}
	primary, err := s.Screenshot(context.Background(), screen.ShotInput{})
	if err != nil {
		t.Fatal(err)
	}
	if primary.Bounds != mons[0] || near(decodeShot(t, primary).At(110, 60), green) {
		t.Fatalf("primary shot %s shows the left monitor's window", brief(primary))
	}
}

// TestMonitorAtANegativeOrigin: RandR may declare a monitor at a negative
// origin, where the X server's root has no pixels. It is listed where it
// is declared, and a capture that reaches it neither fails nor shifts:
// the part off the root is black and the rest shows at its own place, so
// image pixel (x, y) stays screen point (bounds.x + x, bounds.y + y).
func TestMonitorAtANegativeOrigin(t *testing.T) {
	w, h := screentest.Width, screentest.Height
	display := screentest.StartXvfbMonitors(t, w, h,
		screentest.Monitor{X: 0, Y: 0, W: w, H: h}, screentest.Monitor{X: -w, Y: 0, W: w, H: h})
	const green = 0x22bb44
	screentest.OpenWindow(t, display, 0, 40, 100, 100, green, "at the left edge", 4547)
	s := &screen.Service{}
	defer s.Close()
	neg, err := s.Screenshot(context.Background(), screen.ShotInput{Monitor: 2})
	if err != nil {
		t.Fatalf("screenshot of the monitor at (-%d, 0): %v", w, err)
	}
	if neg.Bounds != (screen.Rect{X: -w, W: w, H: h}) {
		t.Fatalf("negative monitor shot %s", brief(neg))
	}
	if c := decodeShot(t, neg).At(w-1, 60); !near(c, 0) {
		t.Errorf("the monitor off the root shows %v, want black", c)
	}
	// A region across both: x from -50 to 50.
	across, err := s.Screenshot(context.Background(), screen.ShotInput{Region: &screen.Rect{X: -50, Y: 0, W: 100, H: 200}})
	if err != nil {
		t.Fatal(err)
	}
	img := decodeShot(t, across)
	if across.Bounds != (screen.Rect{X: -50, W: 100, H: 200}) || !near(img.At(10, 60), 0) || !near(img.At(60, 60), green) || near(img.At(60, 20), green) {
		t.Fatalf("region across the origin %s: pixel (10, 60) %v (want black), (60, 60) %v (want the window at screen x 10), (60, 20) %v (want not the window)",
			brief(across), img.At(10, 60), img.At(60, 60), img.At(60, 20))
	}
}

// TestMonitorScaleFromXftDPI: a screenshot says its monitor's scale, the
// desktop's Xft.dpi over 96 (1.5 at 144 dpi, as a desktop set to 150 %
// loads it with xrdb), and 1 where no Xft.dpi is set; the image and its
// bounds stay in the screen's own pixels.
func TestMonitorScaleFromXftDPI(t *testing.T) {
	display := screentest.StartXvfb(t)
	s := &screen.Service{}
	defer s.Close()
	plain, err := s.Screenshot(context.Background(), screen.ShotInput{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.MonitorScale != 1 {
		t.Fatalf("no Xft.dpi: shot %s, want monitor_scale 1", brief(plain))
	}
	screentest.SetXftDPI(t, display, 144)
	scaled, err := s.Screenshot(context.Background(), screen.ShotInput{})
	if err != nil {
		t.Fatal(err)
	}
	if scaled.MonitorScale != 1.5 || scaled.Bounds != plain.Bounds || scaled.Scale != plain.Scale {
		t.Fatalf("Xft.dpi 144: shot %s, want monitor_scale 1.5 and the same bounds and image scale as %s", brief(scaled), brief(plain))
	}
}
