//go:build !windows

package screen

import (
	"fmt"
	"image"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"
)

// The X11 display, spoken in pure Go (github.com/jezek/xgb) on the
// $DISPLAY the process has. The screen is the root window of the default
// screen; its monitors are RandR's (1.5 monitors: several side by side in
// one root, each at its origin, the primary first) when the server lists
// them, else the root is one monitor; a top-level window is a child of the root, its
// process the _NET_WM_PID it (or, under a window manager's frame, its
// client window) declares. A window whose client sets no _NET_WM_PID has
// process 0: it cannot be told to be Hearth's, which makes no window of
// Hearth's own unseen, since Hearth opens none on X11 (its panel is a
// browser tab, found by its title like any window's).

// DefaultDisplay opens the X11 display named by $DISPLAY.
func DefaultDisplay() (Display, error) {
	name := os.Getenv("DISPLAY")
	if name == "" {
		return nil, fmt.Errorf("%w: DISPLAY is not set (no X11 session)", ErrNoDisplay)
	}
	c, err := xgb.NewConnDisplay(name)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to X display %s: %v", ErrNoDisplay, name, err)
	}
	setup := xproto.Setup(c)
	d := &x11Display{c: c, setup: setup, screen: setup.DefaultScreen(c)}
	d.randr = randrOn(c)
	for _, a := range []struct {
		name string
		to   *xproto.Atom
	}{{"_NET_WM_PID", &d.atomPID}, {"_NET_WM_NAME", &d.atomNetName}, {"UTF8_STRING", &d.atomUTF8}, {"WM_STATE", &d.atomWMState}} {
		if *a.to, err = internAtom(c, a.name); err != nil {
			c.Close()
			return nil, err
		}
	}
	return d, nil
}

type x11Display struct {
	c      *xgb.Conn
	setup  *xproto.SetupInfo
	screen *xproto.ScreenInfo

	atomPID, atomNetName, atomUTF8, atomWMState xproto.Atom
	// randr: the server has the extension that lists the monitors.
	randr bool
}

func internAtom(c *xgb.Conn, name string) (xproto.Atom, error) {
	r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern X atom %s: %w", name, err)
	}
	return r.Atom, nil
}

func (d *x11Display) Close() { d.c.Close() }

// randrOn makes RandR requests usable on c and reports whether the server
// has the extension. It is randr.Init without registering RandR's event
// and error decoders, which writes xgb's package-level maps unlocked: a
// data race with the reader of every other X connection (the clipboard's
// lives on). Hearth asks RandR only for the monitors, whose errors are
// core ones.
func randrOn(c *xgb.Conn) bool {
	r, err := xproto.QueryExtension(c, 5, "RANDR").Reply()
	if err != nil || !r.Present {
		return false
	}
	c.ExtLock.Lock()
	c.Extensions["RANDR"] = r.MajorOpcode
	c.ExtLock.Unlock()
	return true
}

// Monitors are RandR's monitors, the primary first, else the whole root.
func (d *x11Display) Monitors() ([]Rect, error) {
	if d.randr {
		if r, err := randr.GetMonitors(d.c, d.screen.Root, true).Reply(); err == nil && len(r.Monitors) > 0 {
			var out []Rect
			for _, m := range r.Monitors {
				rect := Rect{X: int(m.X), Y: int(m.Y), W: int(m.Width), H: int(m.Height)}
				if m.Primary {
					out = append([]Rect{rect}, out...)
				} else {
					out = append(out, rect)
				}
			}
			return out, nil
		}
	}
	return []Rect{{W: int(d.screen.WidthInPixels), H: int(d.screen.HeightInPixels)}}, nil
}

// resourceBytes bounds the resource database Scale reads.
const resourceBytes = 64 << 10

// Scale is the desktop's scale: X11 has one for all monitors, the Xft.dpi
// resource (what xrdb loads and toolkits scale by) over 96, read from the
// root window's RESOURCE_MANAGER property; 1 when it is not set.
func (d *x11Display) Scale(Rect) float64 {
	r, err := xproto.GetProperty(d.c, false, d.screen.Root, xproto.AtomResourceManager, xproto.AtomString, 0, resourceBytes/4).Reply()
	if err != nil || r.Format != 8 {
		return 1
	}
	return xftScale(string(r.Value))
}

// xftScale reads Xft.dpi from a resource database's text, as a scale
// (dpi/96); 1 when it is absent or not a plausible DPI.
func xftScale(db string) float64 {
	for line := range strings.Lines(db) {
		name, val, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "Xft.dpi" {
			continue
		}
		dpi, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || dpi < 24 || dpi > 960 {
			return 1
		}
		return dpi / 96
	}
	return 1
}

func (d *x11Display) Windows() ([]Window, error) {
	root := d.screen.Root
	tree, err := xproto.QueryTree(d.c, root).Reply()
	if err != nil {
		return nil, fmt.Errorf("list the root window's children: %w", err)
	}
	kids := slices.Clone(tree.Children)
	slices.Reverse(kids) // QueryTree lists bottom to top
	var out []Window
	for _, w := range kids {
		attrs, err := xproto.GetWindowAttributes(d.c, w).Reply()
		if err != nil || attrs.Class == xproto.WindowClassInputOnly {
			continue // gone meanwhile, or never drawn
		}
		geo, err := xproto.GetGeometry(d.c, xproto.Drawable(w)).Reply()
		if err != nil {
			continue
		}
		win := Window{HWND: uint64(w), Visible: attrs.MapState == xproto.MapStateViewable,
			Bounds: Rect{X: int(geo.X), Y: int(geo.Y), W: int(geo.Width) + 2*int(geo.BorderWidth), H: int(geo.Height) + 2*int(geo.BorderWidth)}}
		client := d.client(w)
		win.ProcessID = d.pid(client)
		if win.ProcessID == 0 && client != w {
			win.ProcessID = d.pid(w)
		}
		win.Title = d.title(client)
		out = append(out, win)
	}
	return out, nil
}

// client returns the client window of top-level window w: w itself when
// it has WM_STATE or no child does, else its first child that has it (a
// window manager's frame holds the client one level down).
func (d *x11Display) client(w xproto.Window) xproto.Window {
	if d.has(w, d.atomWMState) {
		return w
	}
	tree, err := xproto.QueryTree(d.c, w).Reply()
	if err != nil {
		return w
	}
	for _, k := range tree.Children {
		if d.has(k, d.atomWMState) {
			return k
		}
	}
	return w
}

func (d *x11Display) has(w xproto.Window, prop xproto.Atom) bool {
	r, err := xproto.GetProperty(d.c, false, w, prop, xproto.GetPropertyTypeAny, 0, 0).Reply()
	return err == nil && r.Type != xproto.AtomNone
}

func (d *x11Display) pid(w xproto.Window) int {
	r, err := xproto.GetProperty(d.c, false, w, d.atomPID, xproto.AtomCardinal, 0, 1).Reply()
	if err != nil || r.Format != 32 || len(r.Value) < 4 {
		return 0
	}
	return int(xgb.Get32(r.Value))
}

// title reads _NET_WM_NAME, else WM_NAME (at most 1 KiB of it).
func (d *x11Display) title(w xproto.Window) string {
	for _, p := range [...]struct{ prop, typ xproto.Atom }{{d.atomNetName, d.atomUTF8}, {xproto.AtomWmName, xproto.GetPropertyTypeAny}} {
		r, err := xproto.GetProperty(d.c, false, w, p.prop, p.typ, 0, 256).Reply()
		if err == nil && r.Format == 8 && len(r.Value) > 0 {
			return string(r.Value)
		}
	}
	return ""
}

// stripBytes bounds one GetImage reply.
const stripBytes = 4 << 20

func (d *x11Display) Capture(r Rect) (*image.RGBA, error) {
	depth := d.screen.RootDepth
	bpp := 0
	for _, f := range d.setup.PixmapFormats {
		if f.Depth == depth {
			bpp = int(f.BitsPerPixel)
		}
	}
	if bpp != 32 || depth < 24 {
		return nil, fmt.Errorf("the X screen's depth %d (%d bits a pixel) is not supported; only 24- and 32-bit color", depth, bpp)
	}
	lsb := d.setup.ImageByteOrder == xproto.ImageOrderLSBFirst
	img := image.NewRGBA(image.Rect(0, 0, r.W, r.H))
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff // opaque black where the root has no pixels
	}
	// The root's pixels lie at (0, 0) to its size. A RandR monitor may be
	// declared partly or wholly outside it (at a negative origin, say),
	// where the X server has nothing to show: that part stays black, and
	// image pixel (x, y) is still screen point (r.X + x, r.Y + y).
	on := r.image().Intersect(image.Rect(0, 0, int(d.screen.WidthInPixels), int(d.screen.HeightInPixels)))
	if on.Empty() {
		return img, nil
	}
	w, x0 := on.Dx(), on.Min.X-r.X
	rows := max(1, stripBytes/(4*w))
	for y := on.Min.Y; y < on.Max.Y; y += rows {
		h := min(rows, on.Max.Y-y)
		rep, err := xproto.GetImage(d.c, xproto.ImageFormatZPixmap, xproto.Drawable(d.screen.Root),
			int16(on.Min.X), int16(y), uint16(w), uint16(h), 0xffffffff).Reply()
		if err != nil {
			return nil, fmt.Errorf("read rows %d-%d of %v from the X server: %w", y, y+h, fromImage(on), err)
		}
		if len(rep.Data) < 4*w*h {
			return nil, fmt.Errorf("the X server sent %d bytes for %dx%d pixels", len(rep.Data), w, h)
		}
		for row := range h {
			dst := img.Pix[(y-r.Y+row)*img.Stride+4*x0:]
			src := rep.Data[row*4*w:]
			for i := range w {
				p := src[i*4 : i*4+4]
				if lsb { // B G R X
					dst[i*4], dst[i*4+1], dst[i*4+2] = p[2], p[1], p[0]
				} else { // X R G B
					dst[i*4], dst[i*4+1], dst[i*4+2] = p[1], p[2], p[3]
				}
			}
		}
	}
	return img, nil
}
