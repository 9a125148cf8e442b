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
