package screen

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
)

// Encoded is a captured image made to fit its bounds.
type Encoded struct {
	Data    []byte
	Width   int
	Height  int
	Quality int // JPEG quality used; 0 for PNG
}

// minSide is the smallest width or height encode shrinks an image to while
// it looks for max_bytes: below it a picture says nothing.
const minSide = 16

// encode scales img down (never up) to at most maxWidth pixels wide, keeping
// its aspect, and encodes it as format ("png" or "jpeg", at quality). While
// the result exceeds maxBytes it is encoded again smaller: a JPEG first at
// lower quality (down to 40), then both formats at three quarters of the
// size, until it fits or would fall under minSide pixels, which is an error
// naming max_bytes.
func encode(img *image.RGBA, format string, quality, maxWidth, maxBytes int) (Encoded, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > maxWidth {
		h = max(1, h*maxWidth/w)
		w = maxWidth
	}
	for {
		scaled := img
		if w != b.Dx() || h != b.Dy() {
			scaled = downscale(img, w, h)
		}
		q := quality
		for {
			data, err := encodeOnce(scaled, format, q)
			if err != nil {
				return Encoded{}, err
			}
			if len(data) <= maxBytes {
				if format != "jpeg" {
					q = 0
				}
				return Encoded{Data: data, Width: w, Height: h, Quality: q}, nil
			}
			if format != "jpeg" || q <= 40 {
				break
			}
			q = max(40, q-15)
		}
		nw, nh := w*3/4, h*3/4
		if nw < minSide || nh < minSide {
			return Encoded{}, fmt.Errorf("max_bytes: %d bytes cannot hold even a %dx%d %s of this capture; raise max_bytes or capture a smaller region", maxBytes, w, h, format)
		}
		w, h = nw, nh
	}
}

func encodeOnce(img image.Image, format string, quality int) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality})
	default:
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	if err != nil {
		return nil, fmt.Errorf("encode the capture as %s: %w", format, err)
	}
	return buf.Bytes(), nil
}

// downscale returns src scaled to w×h (each no larger than src's) by area
// averaging: every destination pixel is the mean of the source pixels it
// covers, which keeps text and thin lines legible where point sampling
// would drop them.
func downscale(src *image.RGBA, w, h int) *image.RGBA {
	sb := src.Bounds()
	sw, sh := sb.Dx(), sb.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var r, g, bl, a, n uint32
			for sy := y0; sy < y1; sy++ {
				row := src.Pix[(sy)*src.Stride:]
				for sx := x0; sx < x1; sx++ {
					p := row[sx*4 : sx*4+4]
					r += uint32(p[0])
					g += uint32(p[1])
					bl += uint32(p[2])
					a += uint32(p[3])
					n++
				}
			}
			d := dst.Pix[y*dst.Stride+x*4:]
			d[0], d[1], d[2], d[3] = uint8(r/n), uint8(g/n), uint8(bl/n), uint8(a/n)
		}
	}
	return dst
}
