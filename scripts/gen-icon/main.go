// Command gen-icon draws Hearth's icons — a flame in a brick hearth — and
// writes them as PNG and multi-size ICO files. Only the standard library's
// image packages are used; every pixel is antialiased by supersampling.
//
// Run it from the repository root after changing the drawing, and commit the
// result (scripts/gen-icon's test fails when the committed files no longer
// match what this program draws):
//
//	go run ./scripts/gen-icon -out assets
//
// It writes:
//
//	hearth.ico                    the application icon: 16, 20, 24, 32, 48, 256 px
//	hearth-<size>.png             the same sizes as PNG
//	hearth-<state>.ico/.png       tray states (ready, down, stopped, permit):
//	                              ICO at 16, 20, 24, 32, 48 px, PNG at 32 px
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
)

// AppSizes are the pixel sizes of the application icon: the tray at 100 %,
// 125 %, 150 % and 200 % scaling, the taskbar and Explorer's large views.
var AppSizes = []int{16, 20, 24, 32, 48, 256}

// TraySizes are the sizes of the tray-state icons; the notification area
// never asks for more than 48 px.
var TraySizes = []int{16, 20, 24, 32, 48}

// TrayPNGSize is the size of the PNG rendering of each tray state, used by
// the control panel.
const TrayPNGSize = 32

// State is a tray icon variant.
type State string

// The tray states docs/DESIGN.md, "Tunnel, tray and recovery" names.
const (
	StateReady   State = "ready"   // the plain icon
	StateDown    State = "down"    // tunnel down: greyed out
	StateStopped State = "stopped" // e-stop latched: red stop badge
	StatePermit  State = "permit"  // a permit is waiting: amber badge
)

// States lists every tray state in a fixed order.
var States = []State{StateReady, StateDown, StateStopped, StatePermit}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen-icon:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen-icon", flag.ContinueOnError)
	out := fs.String("out", "assets", "directory to write the icons to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("unexpected arguments")
	}
	files, err := Files()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Files renders every icon file, keyed by file name.
func Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	var app []*image.NRGBA
	for _, size := range AppSizes {
		img := Render(size, StateReady)
		app = append(app, img)
		b, err := encodePNG(img)
		if err != nil {
			return nil, err
		}
		files[fmt.Sprintf("hearth-%d.png", size)] = b
	}
	ico, err := encodeICO(app)
	if err != nil {
		return nil, err
	}
	files["hearth.ico"] = ico

	for _, st := range States {
		var imgs []*image.NRGBA
		for _, size := range TraySizes {
			imgs = append(imgs, Render(size, st))
		}
		ico, err := encodeICO(imgs)
		if err != nil {
			return nil, err
		}
		files[fmt.Sprintf("hearth-%s.ico", st)] = ico
		b, err := encodePNG(Render(TrayPNGSize, st))
		if err != nil {
			return nil, err
		}
		files[fmt.Sprintf("hearth-%s.png", st)] = b
	}
	return files, nil
}

// rgb is a colour with components in [0, 1].
type rgb struct{ r, g, b float64 }

func hex(v uint32) rgb {
	return rgb{float64(v>>16&0xff) / 255, float64(v>>8&0xff) / 255, float64(v&0xff) / 255}
}

func mix(a, b rgb, t float64) rgb {
	t = clamp01(t)
	return rgb{a.r + (b.r-a.r)*t, a.g + (b.g-a.g)*t, a.b + (b.b-a.b)*t}
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// Palette.
var (
	brick      = hex(0xB4502B)
	brickDark  = hex(0x8F3A1D)
	mortar     = hex(0xD8B48E)
	mantelTop  = hex(0x7A4E2C)
	mantelBody = hex(0x5A371D)
	stone      = hex(0x7D7068)
	stoneDark  = hex(0x5E534C)
	firebox    = hex(0x22120C)
	glow       = hex(0x7E2A0E)
	logColor   = hex(0x5B3419)
	flameRed   = hex(0xE2401A)
	flameOrng  = hex(0xFF8A1E)
	flameYel   = hex(0xFFD845)
	flameCore  = hex(0xFFF4C2)
	white      = hex(0xFFFFFF)
	stopRed    = hex(0xD32F2F)
	amber      = hex(0xFFB300)
	amberInk   = hex(0x3B2600)
)

// paint returns the colour of the icon at unit coordinates (x, y), y down,
// and whether anything is painted there. detailed turns on texture that only
// reads at larger sizes (brick joints, glow).
func paint(x, y float64, detailed bool) (rgb, bool) {
	// Front to back: the first shape that contains the point wins.
	// A log in front of the flame's base.
	if roundRect(x, y, 0.27, 0.825, 0.73, 0.885, 0.03) {
		return logColor, true
	}
	if c, ok := flame(x, y); ok {
		return c, true
	}
	// The firebox: an arch-topped opening.
	if archOpening(x, y) {
		if !detailed {
			return firebox, true
		}
		d := math.Hypot((x-0.5)/0.9, y-0.80)
		return mix(glow, firebox, d/0.42), true
	}
	// Hearth stone along the floor.
	if roundRect(x, y, 0.03, 0.875, 0.97, 0.965, 0.025) {
		if detailed && y > 0.935 {
			return stoneDark, true
		}
		return stone, true
	}
	// Mantel shelf.
	if roundRect(x, y, 0.03, 0.135, 0.97, 0.235, 0.03) {
		if y < 0.165 {
			return mantelTop, true
		}
		return mantelBody, true
	}
	// Brick surround.
	if roundRect(x, y, 0.09, 0.20, 0.91, 0.90, 0.03) {
		if detailed && isMortar(x, y) {
			return mortar, true
		}
		if !detailed {
			return brick, true
		}
		return mix(brick, brickDark, (y-0.2)/1.4), true
	}
	return rgb{}, false
}

// isMortar reports whether (x, y) lies on a joint of the running-bond brick
// pattern of the surround.
func isMortar(x, y float64) bool {
	const rowH, brickW, joint = 0.1, 0.2, 0.014
	row := math.Floor((y - 0.235) / rowH)
	fy := y - 0.235 - row*rowH
	if fy < joint {
		return true
	}
	off := 0.0
	if int(row)%2 != 0 {
		off = brickW / 2
	}
	fx := math.Mod(x-0.09+off+10*brickW, brickW)
	return fx < joint
}

// archOpening reports whether (x, y) is inside the fireplace opening: a
// rectangle with a semicircular top.
func archOpening(x, y float64) bool {
	const left, right, spring, bottom = 0.23, 0.77, 0.58, 0.875
	r := (right - left) / 2
	if x < left || x > right || y > bottom {
		return false
	}
	if y >= spring {
		return true
	}
	return math.Hypot(x-0.5, y-spring) <= r
}

// flame paints the fire: an orange outer flame with two side tongues, a
// yellow inner flame and a pale core.
func flame(x, y float64) (rgb, bool) {
	if tongue(x, y, 0.5, 0.79, 0.06, 0.505, 0.63, 0.01) {
		return flameCore, true
	}
	if tongue(x, y, 0.5, 0.77, 0.1, 0.48, 0.47, -0.03) {
		return flameYel, true
	}
	outer := tongue(x, y, 0.5, 0.72, 0.17, 0.535, 0.29, 0.05) ||
		tongue(x, y, 0.375, 0.77, 0.09, 0.275, 0.48, -0.035) ||
		tongue(x, y, 0.625, 0.77, 0.09, 0.725, 0.51, 0.035)
	if outer {
		return mix(flameOrng, flameRed, (y-0.5)/0.4), true
	}
	return rgb{}, false
}

// tongue reports whether (x, y) is inside a flame tongue: a disc of radius r
// at (cx, cy) drawn up to a point at (tx, ty), bending sideways by sway.
func tongue(x, y, cx, cy, r, tx, ty, sway float64) bool {
	dx, dy := x-cx, y-cy
	if dx*dx+dy*dy <= r*r {
		return true
	}
	ax, ay := tx-cx, ty-cy
	l := math.Hypot(ax, ay)
	ux, uy := ax/l, ay/l // along the axis, towards the tip
	nx, ny := -uy, ux    // across it
	t := (dx*ux + dy*uy) / l
	if t < 0 || t > 1 {
		return false
	}
	lateral := dx*nx + dy*ny - sway*math.Sin(math.Pi*t)
	w := r * math.Pow(math.Cos(math.Pi*t/2), 1.5)
	return math.Abs(lateral) <= w
}

func roundRect(x, y, x0, y0, x1, y1, r float64) bool {
	if x < x0 || x > x1 || y < y0 || y > y1 {
		return false
	}
	cx := math.Max(x0+r, math.Min(x, x1-r))
	cy := math.Max(y0+r, math.Min(y, y1-r))
	return math.Hypot(x-cx, y-cy) <= r
}

// badge paints the status badge of a tray state over the lower right corner.
func badge(x, y float64, st State) (rgb, bool) {
	const cx, cy = 0.74, 0.74
	d := math.Hypot(x-cx, y-cy)
	switch st {
	case StateStopped:
		if d > 0.26 {
			return rgb{}, false
		}
		if d > 0.215 {
			return white, true
		}
		if math.Abs(x-cx) <= 0.13 && math.Abs(y-cy) <= 0.045 {
			return white, true
		}
		return stopRed, true
	case StatePermit:
		if d > 0.26 {
			return rgb{}, false
		}
		if d > 0.215 {
			return white, true
		}
		if math.Abs(x-cx) <= 0.035 && y >= cy-0.15 && y <= cy+0.04 {
			return amberInk, true
		}
		if math.Hypot(x-cx, y-(cy+0.11)) <= 0.04 {
			return amberInk, true
		}
		return amber, true
	}
	return rgb{}, false
}

// Render draws the icon for a state at size×size pixels.
func Render(size int, st State) *image.NRGBA {
	// More samples for small sizes, where each one matters most.
	n := 16
	if size >= 64 {
		n = 6
	}
	detailed := size >= 48
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	inv := 1 / float64(size)
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b, a float64
			for sy := 0; sy < n; sy++ {
				for sx := 0; sx < n; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/float64(n)) * inv
					y := (float64(py) + (float64(sy)+0.5)/float64(n)) * inv
					c, ok := badge(x, y, st)
					if !ok {
						c, ok = paint(x, y, detailed)
						if ok && st == StateDown {
							c = grey(c)
						}
					}
					if ok {
						r, g, b, a = r+c.r, g+c.g, b+c.b, a+1
					}
				}
			}
			if a == 0 {
				continue
			}
			alpha := a / float64(n*n)
			img.SetNRGBA(px, py, color.NRGBA{
				R: to8(r / a), G: to8(g / a), B: to8(b / a), A: to8(alpha),
			})
		}
	}
	return img
}

// grey turns a colour into a light grey of similar brightness, so the "tunnel
// down" icon reads as inactive but keeps its shape.
func grey(c rgb) rgb {
	l := 0.2126*c.r + 0.7152*c.g + 0.0722*c.b
	l = 0.35 + 0.55*l
	return rgb{l, l, l}
}

func to8(v float64) uint8 { return uint8(math.Round(clamp01(v) * 255)) }

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeICO writes a multi-image ICO file. Images smaller than 256 px are
// stored as 32-bit DIBs with an AND mask, which every Windows icon loader
// reads; the 256 px image is stored as PNG, as Windows Vista and later expect.
func encodeICO(imgs []*image.NRGBA) ([]byte, error) {
	type entry struct {
		size int
		data []byte
	}
	var entries []entry
	for _, img := range imgs {
		size := img.Bounds().Dx()
		if size != img.Bounds().Dy() || size > 256 {
			return nil, fmt.Errorf("icon image must be square and at most 256 px, got %v", img.Bounds())
		}
		var data []byte
		if size == 256 {
			b, err := encodePNG(img)
			if err != nil {
				return nil, err
			}
			data = b
		} else {
			data = dib(img)
		}
		entries = append(entries, entry{size, data})
	}

	var buf bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 6)
	le.PutUint16(hdr[2:], 1) // type: icon
	le.PutUint16(hdr[4:], uint16(len(entries)))
	buf.Write(hdr)
	offset := 6 + 16*len(entries)
	for _, e := range entries {
		dir := make([]byte, 16)
		dir[0] = byte(e.size % 256) // 0 means 256
		dir[1] = byte(e.size % 256)
		le.PutUint16(dir[4:], 1)  // planes
		le.PutUint16(dir[6:], 32) // bits per pixel
		le.PutUint32(dir[8:], uint32(len(e.data)))
		le.PutUint32(dir[12:], uint32(offset))
		offset += len(e.data)
		buf.Write(dir)
	}
	for _, e := range entries {
		buf.Write(e.data)
	}
	return buf.Bytes(), nil
}

// dib encodes img as an ICO bitmap: BITMAPINFOHEADER (height doubled for the
// mask), bottom-up BGRA rows, then a 1-bit AND mask set where the image is
// fully transparent.
func dib(img *image.NRGBA) []byte {
	size := img.Bounds().Dx()
	maskStride := (size + 31) / 32 * 4
	var buf bytes.Buffer
	le := binary.LittleEndian
	h := make([]byte, 40)
	le.PutUint32(h[0:], 40)
	le.PutUint32(h[4:], uint32(size))
	le.PutUint32(h[8:], uint32(2*size))
	le.PutUint16(h[12:], 1)
	le.PutUint16(h[14:], 32)
	le.PutUint32(h[20:], uint32(size*size*4+maskStride*size))
	buf.Write(h)
	for y := size - 1; y >= 0; y-- {
		for x := 0; x < size; x++ {
			c := img.NRGBAAt(x, y)
			buf.Write([]byte{c.B, c.G, c.R, c.A})
		}
	}
	for y := size - 1; y >= 0; y-- {
		row := make([]byte, maskStride)
		for x := 0; x < size; x++ {
			if img.NRGBAAt(x, y).A == 0 {
				row[x/8] |= 0x80 >> (x % 8)
			}
		}
		buf.Write(row)
	}
	return buf.Bytes()
}
