package screen

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/windows"
)

// TestPerMonitorDPIAware: the start-up call sets the process's DPI
// awareness to per monitor (v2, or v1 where Windows knows only that, as
// Wine 8) or is absent without failing; asked again (as when the manifest
// already set it, which Windows answers with access denied) it still
// answers nil and the awareness stays. Each monitor's scale is its
// DPI over 96: 1 on Wine's 96-dpi screen, 1.5 where scripts/test-windows
// set 144 dpi (LogPixels) in a prefix of its own, and on any PC a scale
// Windows offers (100 % to 500 %).
func TestPerMonitorDPIAware(t *testing.T) {
	if err := SetPerMonitorDPIAware(); err != nil {
		t.Fatal(err)
	}
	if procSetProcessDpiAwarenessContext.Find() == nil {
		// The test binary has no manifest: on Windows only that call can
		// have set the process's awareness, which Windows then refuses to
		// change. (Wine 8 sets every process's awareness before it
		// starts, so there this shows only that the call is harmless.)
		if r, _, err := procSetProcessDpiAwarenessContext.Call(dpiContextPerMonitor); r != 0 || !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			t.Fatalf("the process's DPI awareness was still unset after SetPerMonitorDPIAware (a second setting answered %d, %v)", r, err)
		}
	}
	if err := SetPerMonitorDPIAware(); err != nil {
		t.Fatalf("asked again, as when the manifest set it: %v", err)
	}
	if aware, known := perMonitorDPIAware(); known && !aware {
		t.Fatal("after SetPerMonitorDPIAware the thread is not per-monitor aware (v2)")
	} else if !known {
		t.Log("this Windows cannot say the thread's DPI awareness")
	}
	d, err := DefaultDisplay()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mons, err := d.Monitors()
	if err != nil || len(mons) == 0 {
		t.Fatalf("monitors %v, %v", mons, err)
	}
	// Under Wine the screen has 96 dpi, or the LogPixels that
	// scripts/test-windows set in a prefix of its own (HEARTH_WINE_DPI).
	want := 0.0
	if os.Getenv("HEARTH_WINE_WINDOWS") != "" {
		want = 1
	}
	if v := os.Getenv("HEARTH_WINE_DPI"); v != "" {
		dpi, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("HEARTH_WINE_DPI=%q", v)
		}
		want = float64(dpi) / 96
	}
	for i, m := range mons {
		scale := d.Scale(m)
		t.Logf("monitor %d %+v: scale %v", i+1, m, scale)
		if want != 0 && scale != want {
			t.Errorf("monitor %d's scale under Wine is %v, want %v (HEARTH_WINE_DPI %q)", i+1, scale, want, os.Getenv("HEARTH_WINE_DPI"))
		}
		if scale < 1 || scale > 5 {
			t.Errorf("monitor %d's scale %v is none Windows offers", i+1, scale)
		}
	}
}
