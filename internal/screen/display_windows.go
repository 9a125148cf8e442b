package screen

import (
	"errors"
	"fmt"
	"image"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows display: GDI (BitBlt of the screen DC into a DIB section's
// bits) and user32 (EnumWindows, EnumDisplayMonitors). A window is
// captured as the screen rectangle it occupies, so what lies over it shows
// too; coordinates are the physical pixels of a per-monitor DPI-aware
// process (Hearth's manifest declares it, and SetPerMonitorDPIAware asks
// again at start), as UI Automation reports them, on every monitor.

var (
	moduser32                = windows.NewLazySystemDLL("user32.dll")
	modgdi32                 = windows.NewLazySystemDLL("gdi32.dll")
	procGetDC                = moduser32.NewProc("GetDC")
	procReleaseDC            = moduser32.NewProc("ReleaseDC")
	procGetWindowRect        = moduser32.NewProc("GetWindowRect")
	procIsIconic             = moduser32.NewProc("IsIconic")
	procInternalGetWindowTxt = moduser32.NewProc("InternalGetWindowText")
	procEnumDisplayMonitors  = moduser32.NewProc("EnumDisplayMonitors")
	procGetMonitorInfoW      = moduser32.NewProc("GetMonitorInfoW")
	procCreateCompatibleDC   = modgdi32.NewProc("CreateCompatibleDC")
	procCreateDIBSection     = modgdi32.NewProc("CreateDIBSection")
	procSelectObject         = modgdi32.NewProc("SelectObject")
	procBitBlt               = modgdi32.NewProc("BitBlt")
	procDeleteObject         = modgdi32.NewProc("DeleteObject")
	procDeleteDC             = modgdi32.NewProc("DeleteDC")
	procGdiFlush             = modgdi32.NewProc("GdiFlush")
)

const (
	srccopy      = 0x00CC0020
	captureBlt   = 0x40000000
	monitorInfoF = 1 // MONITORINFOF_PRIMARY
)

type rect struct{ Left, Top, Right, Bottom int32 }

func (r rect) toRect() Rect {
	return Rect{X: int(r.Left), Y: int(r.Top), W: int(r.Right - r.Left), H: int(r.Bottom - r.Top)}
}

type monitorInfo struct {
	Size    uint32
	Monitor rect
	Work    rect
	Flags   uint32
}

type bitmapInfoHeader struct {
	Size          uint32
	Width         int32
	Height        int32
	Planes        uint16
	BitCount      uint16
	Compression   uint32
	SizeImage     uint32
	XPelsPerMeter int32
	YPelsPerMeter int32
	ClrUsed       uint32
	ClrImportant  uint32
}

// DefaultDisplay opens the desktop of Hearth's session.
func DefaultDisplay() (Display, error) {
	if err := procGetDC.Find(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDisplay, err)
	}
	return winDisplay{}, nil
}

type winDisplay struct{}

func (winDisplay) Close() {}

// The enumeration callbacks are made once: Windows keeps every callback a
// process makes, so one made per call would run out. Each gets its
// enumeration's state through the lParam.
var (
	monitorCallback = sync.OnceValue(func() uintptr {
		return syscall.NewCallback(func(hmon, hdc, lprc uintptr, e *monitorEnum) uintptr {
			mi := monitorInfo{Size: uint32(unsafe.Sizeof(monitorInfo{}))}
			if r, _, err := procGetMonitorInfoW.Call(hmon, uintptr(unsafe.Pointer(&mi))); r == 0 {
				e.err = fmt.Errorf("GetMonitorInfo: %w", err)
				return 0
			}
			if mi.Flags&monitorInfoF != 0 {
				e.primary = len(e.out)
			}
			e.out = append(e.out, mi.Monitor.toRect())
			return 1
		})
	})
	windowCallback = sync.OnceValue(func() uintptr {
		return syscall.NewCallback(func(h windows.HWND, e *windowEnum) uintptr {
			e.hwnds = append(e.hwnds, h)
			if len(e.hwnds) >= maxWindows {
				return 0
			}
			return 1
		})
	})
)

type monitorEnum struct {
	out     []Rect
	primary int
	err     error
}

type windowEnum struct{ hwnds []windows.HWND }

func (winDisplay) Monitors() ([]Rect, error) {
	e := &monitorEnum{}
	if r, _, err := procEnumDisplayMonitors.Call(0, 0, monitorCallback(), uintptr(unsafe.Pointer(e))); r == 0 && e.err == nil {
		return nil, fmt.Errorf("EnumDisplayMonitors: %w", err)
	}
	if e.err != nil {
		return nil, e.err
	}
	out := e.out
	if e.primary > 0 {
		out[0], out[e.primary] = out[e.primary], out[0]
	}
	return out, nil
}

// maxWindows bounds the windows one enumeration reads.
const maxWindows = 4096

func (winDisplay) Windows() ([]Window, error) {
	// A desktop always has windows. Wine's EnumWindows lists none the first
	// time a thread calls it, so an empty list is asked for once more, and
	// is then an error: Hearth's own windows must never go unlisted, which
	// would leave them in the picture.
	var hwnds []windows.HWND
	for range 2 {
		e := &windowEnum{}
		if err := windows.EnumWindows(windowCallback(), unsafe.Pointer(e)); err != nil && len(e.hwnds) < maxWindows {
			return nil, fmt.Errorf("EnumWindows: %w", err)
		}
		if hwnds = e.hwnds; len(hwnds) > 0 {
			break
		}
	}
	if len(hwnds) == 0 {
		return nil, errors.New("EnumWindows listed no window on the desktop")
	}
	out := make([]Window, 0, len(hwnds))
	buf := make([]uint16, 1024)
	for _, h := range hwnds {
		var pid uint32
		if _, err := windows.GetWindowThreadProcessId(h, &pid); err != nil {
			continue // gone meanwhile
		}
		var r rect
		if ok, _, _ := procGetWindowRect.Call(uintptr(h), uintptr(unsafe.Pointer(&r))); ok == 0 {
			continue
		}
		iconic, _, _ := procIsIconic.Call(uintptr(h))
		// InternalGetWindowText reads the stored title without sending
		// the window a message a hung window would leave unanswered.
		n, _, _ := procInternalGetWindowTxt.Call(uintptr(h), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		out = append(out, Window{HWND: uint64(h), ProcessID: int(pid), Title: windows.UTF16ToString(buf[:min(int(n), len(buf))]),
			Bounds: r.toRect(), Visible: windows.IsWindowVisible(h) && iconic == 0})
	}
	return out, nil
}

func (winDisplay) Capture(r Rect) (*image.RGBA, error) {
	screen, _, err := procGetDC.Call(0)
	if screen == 0 {
		return nil, fmt.Errorf("GetDC(screen): %w", err)
	}
	defer procReleaseDC.Call(0, screen)
	mem, _, err := procCreateCompatibleDC.Call(screen)
	if mem == 0 {
		return nil, fmt.Errorf("CreateCompatibleDC: %w", err)
	}
	defer procDeleteDC.Call(mem)
	// A top-down 32-bit DIB: rows in order, pixels B G R X.
	bi := bitmapInfoHeader{Width: int32(r.W), Height: -int32(r.H), Planes: 1, BitCount: 32}
	bi.Size = uint32(unsafe.Sizeof(bi))
	var bits unsafe.Pointer
	bmp, _, err := procCreateDIBSection.Call(screen, uintptr(unsafe.Pointer(&bi)), 0, uintptr(unsafe.Pointer(&bits)), 0, 0)
	if bmp == 0 || bits == nil {
		return nil, fmt.Errorf("CreateDIBSection %dx%d: %w", r.W, r.H, err)
	}
	defer procDeleteObject.Call(bmp)
	old, _, _ := procSelectObject.Call(mem, bmp)
	defer procSelectObject.Call(mem, old)
	if ok, _, err := procBitBlt.Call(mem, 0, 0, uintptr(r.W), uintptr(r.H), screen, uintptr(int32(r.X)), uintptr(int32(r.Y)), srccopy|captureBlt); ok == 0 {
		return nil, fmt.Errorf("BitBlt of the screen into memory failed (%v): the display driver gave no pixels", err)
	}
	procGdiFlush.Call()
	src := unsafe.Slice((*byte)(bits), 4*r.W*r.H)
	img := image.NewRGBA(image.Rect(0, 0, r.W, r.H))
	for i := 0; i < len(src); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = src[i+2], src[i+1], src[i], 0xff
	}
	return img, nil
}
