package screen

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Scaling on Windows. A process that is not per-monitor DPI aware sees a
// scaled monitor's coordinates shrunk by its scale (and, across monitors
// of different scales, shrunk differently), so a screenshot's pixels and
// the point a fallback click goes to would disagree on all but one
// monitor. Hearth is per-monitor aware (v2): its manifest declares it, and
// SetPerMonitorDPIAware says it again at start, for a build run without
// the manifest. Every coordinate Hearth reads or sends is then a physical
// pixel, on every monitor; the scale a screenshot reports only says how
// large things look there.

var (
	modshcore                         = windows.NewLazySystemDLL("shcore.dll")
	procGetDpiForMonitor              = modshcore.NewProc("GetDpiForMonitor")
	procSetProcessDpiAwarenessContext = moduser32.NewProc("SetProcessDpiAwarenessContext")
	procGetThreadDpiAwarenessContext  = moduser32.NewProc("GetThreadDpiAwarenessContext")
	procGetAwarenessFromDpiContext    = moduser32.NewProc("GetAwarenessFromDpiAwarenessContext")
	procMonitorFromRect               = moduser32.NewProc("MonitorFromRect")
	procGetDeviceCaps                 = modgdi32.NewProc("GetDeviceCaps")
)

const (
	// dpiContextPerMonitorV2 and dpiContextPerMonitor are
	// DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2 and _PER_MONITOR_AWARE.
	dpiContextPerMonitorV2 = ^uintptr(3) // (DPI_AWARENESS_CONTEXT)-4
	dpiContextPerMonitor   = ^uintptr(2) // (DPI_AWARENESS_CONTEXT)-3
	// dpiAwarenessPerMonitor is DPI_AWARENESS_PER_MONITOR_AWARE.
	dpiAwarenessPerMonitor  = 2
	mdtEffectiveDPI         = 0  // MDT_EFFECTIVE_DPI
	monitorDefaultToNearest = 2  // MONITOR_DEFAULTTONEAREST
	logPixelsX              = 88 // LOGPIXELSX
	baseDPI                 = 96
)

// SetPerMonitorDPIAware makes the process per-monitor DPI aware (v2), as
// Hearth's manifest declares, before any window or coordinate is read. It
// answers nil when the process is so already (the manifest set it, which
// makes the call fail with access denied) and where Windows has no such
// call (before Windows 10 1703; the manifest's older setting stands). A
// system that knows only the first per-monitor awareness (Wine 8) gets
// that one: its coordinates are the same physical pixels.
func SetPerMonitorDPIAware() error {
	if procSetProcessDpiAwarenessContext.Find() != nil {
		return nil
	}
	r, _, err := procSetProcessDpiAwarenessContext.Call(dpiContextPerMonitorV2)
	if r == 0 && errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		r, _, err = procSetProcessDpiAwarenessContext.Call(dpiContextPerMonitor)
	}
	if r != 0 || errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return nil
	}
	return fmt.Errorf("make Hearth aware of each monitor's scale (SetProcessDpiAwarenessContext): %w", err)
}

// perMonitorDPIAware reports whether the calling thread sees physical
// pixels on every monitor (per-monitor aware, v1 or v2); known is false
// where Windows cannot say.
func perMonitorDPIAware() (aware, known bool) {
	if procGetThreadDpiAwarenessContext.Find() != nil || procGetAwarenessFromDpiContext.Find() != nil {
		return false, false
	}
	ctx, _, _ := procGetThreadDpiAwarenessContext.Call()
	a, _, _ := procGetAwarenessFromDpiContext.Call(ctx)
	return a == dpiAwarenessPerMonitor, true
}

// Scale is the scale of the monitor holding most of r: its effective DPI
// over 96 (GetDpiForMonitor), else the screen's (GetDeviceCaps), else 1.
func (winDisplay) Scale(r Rect) float64 {
	if procGetDpiForMonitor.Find() == nil {
		rc := rect{Left: int32(r.X), Top: int32(r.Y), Right: int32(r.X + r.W), Bottom: int32(r.Y + r.H)}
		hmon, _, _ := procMonitorFromRect.Call(uintptr(unsafe.Pointer(&rc)), monitorDefaultToNearest)
		var x, y uint32
		if hmon != 0 {
			if hr, _, _ := procGetDpiForMonitor.Call(hmon, mdtEffectiveDPI, uintptr(unsafe.Pointer(&x)), uintptr(unsafe.Pointer(&y))); hr == 0 && x > 0 {
				return float64(x) / baseDPI
			}
		}
	}
	if dc, _, _ := procGetDC.Call(0); dc != 0 {
		defer procReleaseDC.Call(0, dc)
		if dpi, _, _ := procGetDeviceCaps.Call(dc, logPixelsX); dpi > 0 {
			return float64(dpi) / baseDPI
		}
	}
	return 1
}
