package screen

import (
	"context"
	"image"
	"image/color"
	"testing"
)

// openedDuringCaptureDisplay is a test double of a Display (no real screen
// can be made to open a window at an exact moment): a white 100×100
// screen on which a window of Hearth's opens while the pixels are read,
// so the listing before the capture does not have it and the one after
// does.
type openedDuringCaptureDisplay struct {
	self     int
	captured bool
}

func (d *openedDuringCaptureDisplay) Monitors() ([]Rect, error) { return []Rect{{0, 0, 100, 100}}, nil }
func (d *openedDuringCaptureDisplay) Scale(Rect) float64        { return 1 }
func (d *openedDuringCaptureDisplay) Windows() ([]Window, error) {
	if !d.captured {
		return nil, nil
	}
	return []Window{{HWND: 7, ProcessID: d.self, Title: "Hearth", Bounds: Rect{10, 10, 20, 20}, Visible: true}}, nil
}
func (d *openedDuringCaptureDisplay) Capture(r Rect) (*image.RGBA, error) {
	d.captured = true
	img := image.NewRGBA(image.Rect(0, 0, r.W, r.H))
	for y := range r.H {
		for x := range r.W {
			img.Set(x, y, color.White)
		}
	}
	return img, nil
}
func (d *openedDuringCaptureDisplay) Close() {}

// TestWindowOpenedDuringCaptureIsBlackedOut: a window of Hearth's that
// appears while the screen is read is blacked out all the same.
func TestWindowOpenedDuringCaptureIsBlackedOut(t *testing.T) {
	const self = 4242
	s := &Service{Self: self, OpenDisplay: func() (Display, error) { return &openedDuringCaptureDisplay{self: self}, nil }}
	defer s.Close()
	shot, err := s.Screenshot(context.Background(), ShotInput{Monitor: 1, Format: "png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(shot.BlackedOut) != 1 || shot.BlackedOut[0] != (Rect{10, 10, 20, 20}) {
		t.Fatalf("blacked out %v, want the window that opened during the capture", shot.BlackedOut)
	}
}
