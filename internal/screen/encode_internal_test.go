package screen

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

// noise is an image that compresses badly, so that its encodings are
// large.
func noise(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 0xff
		}
	}
	return img
}

// TestEncodeMeetsMaxBytes: a capture whose encoding at full size is far
// over max_bytes comes back under it, smaller, and still decodable.
func TestEncodeMeetsMaxBytes(t *testing.T) {
	img := noise(800, 600)
	for _, format := range []string{"png", "jpeg"} {
		full, err := encode(img, format, 90, MaxWidthCeiling, MaxBytesCeiling)
		if err != nil {
			t.Fatal(err)
		}
		const bound = 60 << 10
		if len(full.Data) <= 4*bound || full.Width != 800 {
			t.Fatalf("%s: the unbounded encoding is %d bytes %dpx wide; the test needs one well over %d", format, len(full.Data), full.Width, bound)
		}
		got, err := encode(img, format, 90, MaxWidthCeiling, bound)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Data) > bound || got.Width >= 800 || abs(got.Height-got.Width*3/4) > 2 {
			t.Fatalf("%s: %d bytes %dx%d under max_bytes %d", format, len(got.Data), got.Width, got.Height, bound)
		}
		var dec image.Image
		if format == "png" {
			dec, err = png.Decode(bytes.NewReader(got.Data))
		} else {
			dec, err = jpeg.Decode(bytes.NewReader(got.Data))
			if got.Quality >= 90 {
				t.Errorf("jpeg kept quality %d while shrinking", got.Quality)
			}
		}
		if err != nil || dec.Bounds().Dx() != got.Width {
			t.Fatalf("%s: decode %v", format, err)
		}
	}
	if _, err := encode(img, "png", 0, MaxWidthCeiling, 100); err == nil || !strings.Contains(err.Error(), "max_bytes") {
		t.Fatalf("an impossible max_bytes: %v", err)
	}
}

// TestEncodeMaxWidth scales down, never up, keeping the aspect, and
// averages: a one-pixel checkerboard halves to even grey.
func TestEncodeMaxWidth(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 50))
	for y := range 50 {
		for x := range 100 {
			v := uint8(0)
			if (x+y)%2 == 0 {
				v = 0xff
			}
			o := img.PixOffset(x, y)
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = v, v, v, 0xff
		}
	}
	got, err := encode(img, "png", 0, 50, MaxBytesCeiling)
	if err != nil {
		t.Fatal(err)
	}
	if got.Width != 50 || got.Height != 25 {
		t.Fatalf("%dx%d", got.Width, got.Height)
	}
	dec, _ := png.Decode(bytes.NewReader(got.Data))
	if r, _, _, _ := dec.At(10, 10).RGBA(); r>>8 < 120 || r>>8 > 135 {
		t.Fatalf("downscaled checkerboard is %d, want mid grey", r>>8)
	}
	same, _ := encode(img, "png", 0, 400, MaxBytesCeiling)
	if same.Width != 100 {
		t.Fatalf("scaled up to %d", same.Width)
	}
}

func abs(v int) int { return max(v, -v) }
