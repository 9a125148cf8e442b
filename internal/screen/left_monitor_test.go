package screen

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// fakeLeftMonitorDisplay is a test double of a Display for what neither
// Xvfb (its root starts at 0, 0) nor Wine's null driver (one monitor) can
// show: Windows' layout of a monitor left of the primary, at a negative
// origin, with a scaling of its own. Each screen point (x, y) has the
// color (x mod 256, y mod 256, 0x80), so a picture tells which points it
// shows. A window of Hearth's lies on the left monitor.
type fakeLeftMonitorDisplay struct {
	self                  int
	primary, left, hearth Rect
	captured              []Rect
}

func (d *fakeLeftMonitorDisplay) Monitors() ([]Rect, error) {
	return []Rect{d.primary, d.left}, nil
}
func (d *fakeLeftMonitorDisplay) Scale(r Rect) float64 {
	area := func(m Rect) int { i := r.image().Intersect(m.image()); return i.Dx() * i.Dy() }
	if area(d.left) > area(d.primary) {
		return 1.5
	}
	return 1
}
func (d *fakeLeftMonitorDisplay) Windows() ([]Window, error) {
	return []Window{{HWND: 9, ProcessID: d.self, Title: "Hearth", Bounds: d.hearth, Visible: true}}, nil
}
func (d *fakeLeftMonitorDisplay) Capture(r Rect) (*image.RGBA, error) {
	d.captured = append(d.captured, r)
	img := image.NewRGBA(image.Rect(0, 0, r.W, r.H))
	for y := range r.H {
		for x := range r.W {
			img.Set(x, y, pointColor(r.X+x, r.Y+y))
		}
	}
	return img, nil
}
func (d *fakeLeftMonitorDisplay) Close() {}

func pointColor(x, y int) color.RGBA {
	return color.RGBA{uint8(x & 0xff), uint8(y & 0xff), 0x80, 0xff}
}

// TestMonitorLeftOfThePrimaryAtANegativeOrigin: a screenshot of the
// monitor at (-500, -40) reads exactly that rectangle, says its scale,
// and shows each screen point at image pixel (point - bounds); Hearth's
// window on it is blacked out at its own place; a region across both
// monitors maps the same way.
func TestMonitorLeftOfThePrimaryAtANegativeOrigin(t *testing.T) {
	const self = 4343
	d := &fakeLeftMonitorDisplay{self: self, primary: Rect{W: 400, H: 300},
		left: Rect{X: -500, Y: -40, W: 500, H: 340}, hearth: Rect{X: -300, Y: 20, W: 60, H: 50}}
	fakeLeft, fakeHearth := d.left, d.hearth
	s := &Service{Self: self, OpenDisplay: func() (Display, error) { return d, nil }}
	defer s.Close()
	check := func(in ShotInput, bounds Rect, scale float64) image.Image {
		t.Helper()
		shot, err := s.Screenshot(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if shot.Bounds != bounds || d.captured[len(d.captured)-1] != bounds || shot.MonitorScale != scale || shot.Scale != 1 {
			t.Fatalf("%+v: shot bounds %v at monitor_scale %v (captured %v), want %v at %v", in, shot.Bounds, shot.MonitorScale, d.captured, bounds, scale)
		}
		_, data := shot.Image()
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	img := check(ShotInput{Monitor: 2}, fakeLeft, 1.5)
	for _, p := range []image.Point{{-500, -40}, {-1, 299}, {-250, 100}} {
		at := p.Sub(image.Pt(fakeLeft.X, fakeLeft.Y))
		if got := color.RGBAModel.Convert(img.At(at.X, at.Y)); got != pointColor(p.X, p.Y) {
			t.Errorf("screen point %v: image pixel %v is %v, want %v", p, at, got, pointColor(p.X, p.Y))
		}
	}
	hearth := image.Pt(fakeHearth.X+5-fakeLeft.X, fakeHearth.Y+5-fakeLeft.Y)
	if got := color.RGBAModel.Convert(img.At(hearth.X, hearth.Y)); got != (color.RGBA{0, 0, 0, 0xff}) {
		t.Errorf("Hearth's window at image pixel %v shows %v, want black", hearth, got)
	}
	across := Rect{X: -30, Y: 10, W: 40, H: 10} // mostly on the left monitor
	img = check(ShotInput{Region: &across}, across, 1.5)
	for _, p := range []image.Point{{-30, 10}, {0, 15}, {9, 19}} {
		at := p.Sub(image.Pt(across.X, across.Y))
		if got := color.RGBAModel.Convert(img.At(at.X, at.Y)); got != pointColor(p.X, p.Y) {
			t.Errorf("region: screen point %v at image pixel %v is %v, want %v", p, at, got, pointColor(p.X, p.Y))
		}
	}
}
