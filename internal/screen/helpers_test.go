package screen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/screen"
)

func decodeShot(t *testing.T, s *screen.Shot) image.Image {
	t.Helper()
	mime, data := s.Image()
	if mime != s.MimeType || len(data) != s.Bytes {
		t.Fatalf("image %s of %d bytes, result says %s of %d", mime, len(data), s.MimeType, s.Bytes)
	}
	var img image.Image
	var err error
	if s.Format == "jpeg" {
		img, err = jpeg.Decode(bytes.NewReader(data))
	} else {
		img, err = png.Decode(bytes.NewReader(data))
	}
	if err != nil {
		t.Fatalf("decode the %s: %v", s.Format, err)
	}
	if b := img.Bounds(); b.Dx() != s.Width || b.Dy() != s.Height {
		t.Fatalf("image is %dx%d, result says %dx%d", b.Dx(), b.Dy(), s.Width, s.Height)
	}
	return img
}

func near(c color.Color, rgb uint32) bool {
	r, g, b, _ := c.RGBA()
	d := func(v uint32, want uint32) bool { v >>= 8; return v+12 >= want && v <= want+12 }
	return d(r, rgb>>16&0xff) && d(g, rgb>>8&0xff) && d(b, rgb&0xff)
}

func errCode(err error) string {
	var pe *primitive.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// brief is a shot's JSON (without its image bytes), for a failure
// message.
func brief(s *screen.Shot) string {
	b, _ := json.Marshal(s)
	return string(b)
}
