package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedIconsMatchGenerator fails when assets/ was not regenerated
// after a change to the drawing. Pixels are compared with a small tolerance,
// because floating-point rounding may differ between architectures.
func TestCommittedIconsMatchGenerator(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", "assets", name))
		if err != nil {
			t.Errorf("%s: %v (run: go run ./scripts/gen-icon -out assets)", name, err)
			continue
		}
		if filepath.Ext(name) == ".png" {
			comparePNG(t, name, got, want)
			continue
		}
		gotImgs := decodeICO(t, name, got)
		wantImgs := decodeICO(t, name, want)
		if len(gotImgs) != len(wantImgs) {
			t.Errorf("%s: %d images, generator makes %d", name, len(gotImgs), len(wantImgs))
			continue
		}
		for i := range gotImgs {
			compareImages(t, name, gotImgs[i], wantImgs[i])
		}
	}
}

func TestICOSizes(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, sizes []int) {
		imgs := decodeICO(t, name, files[name])
		if len(imgs) != len(sizes) {
			t.Fatalf("%s: %d images, want %d", name, len(imgs), len(sizes))
		}
		for i, img := range imgs {
			if img.Bounds().Dx() != sizes[i] || img.Bounds().Dy() != sizes[i] {
				t.Errorf("%s image %d: %v, want %d px", name, i, img.Bounds(), sizes[i])
			}
		}
	}
	check("hearth.ico", AppSizes)
	for _, st := range States {
		check("hearth-"+string(st)+".ico", TraySizes)
	}
}

// TestIconIsDrawn guards against an empty or fully opaque rendering: the
// icon must have transparent corners, a solid middle, and fire colours.
func TestIconIsDrawn(t *testing.T) {
	img := Render(48, StateReady)
	if a := img.NRGBAAt(0, 47).A; a != 0 {
		t.Errorf("bottom-left corner alpha = %d, want transparent", a)
	}
	c := img.NRGBAAt(24, 34)
	if c.A != 255 || c.R < 200 || int(c.R)-int(c.B) < 50 {
		t.Errorf("centre of the flame = %+v, want an opaque warm colour", c)
	}
	grey := Render(48, StateDown).NRGBAAt(24, 34)
	if grey.R != grey.G || grey.G != grey.B {
		t.Errorf("down state centre = %+v, want grey", grey)
	}
}

func comparePNG(t *testing.T, name string, got, want []byte) {
	t.Helper()
	g, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	w, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatalf("%s: generator output: %v", name, err)
	}
	compareImages(t, name, g, w)
}

func compareImages(t *testing.T, name string, got, want image.Image) {
	t.Helper()
	if got.Bounds() != want.Bounds() {
		t.Errorf("%s: bounds %v, generator makes %v", name, got.Bounds(), want.Bounds())
		return
	}
	b := got.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			gr, gg, gb, ga := got.At(x, y).RGBA()
			wr, wg, wb, wa := want.At(x, y).RGBA()
			if far(gr, wr) || far(gg, wg) || far(gb, wb) || far(ga, wa) {
				t.Errorf("%s (%d px): pixel (%d,%d) differs from the generator's; regenerate assets",
					name, b.Dx(), x, y)
				return
			}
		}
	}
}

func far(a, b uint32) bool {
	const tolerance = 3 * 0x101
	if a > b {
		return a-b > tolerance
	}
	return b-a > tolerance
}

// decodeICO reads every image of an ICO file, both PNG and DIB entries.
func decodeICO(t *testing.T, name string, data []byte) []image.Image {
	t.Helper()
	le := binary.LittleEndian
	if len(data) < 6 || le.Uint16(data[2:]) != 1 {
		t.Fatalf("%s: not an ICO file", name)
	}
	n := int(le.Uint16(data[4:]))
	var imgs []image.Image
	for i := 0; i < n; i++ {
		dir := data[6+16*i : 6+16*(i+1)]
		size := int(dir[0])
		if size == 0 {
			size = 256
		}
		length, offset := le.Uint32(dir[8:]), le.Uint32(dir[12:])
		body := data[offset : offset+length]
		if bytes.HasPrefix(body, []byte("\x89PNG")) {
			img, err := png.Decode(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s entry %d: %v", name, i, err)
			}
			imgs = append(imgs, img)
			continue
		}
		if le.Uint32(body) != 40 || int(le.Uint32(body[4:])) != size || int(le.Uint32(body[8:])) != 2*size ||
			le.Uint16(body[14:]) != 32 {
			t.Fatalf("%s entry %d: unexpected DIB header", name, i)
		}
		img := image.NewNRGBA(image.Rect(0, 0, size, size))
		px := body[40:]
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				p := px[((size-1-y)*size+x)*4:]
				copy(img.Pix[img.PixOffset(x, y):], []byte{p[2], p[1], p[0], p[3]})
			}
		}
		imgs = append(imgs, img)
	}
	return imgs
}
