package screen

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// TestPerMonitorDPIAware: the start-up call sets the process's DPI
// awareness to per monitor (v2, or v1 where Windows knows only that, as
// Wine 8) or is absent without failing; asked again (as when the manifest
// already set it, which Windows answers with access denied) it still
// answers nil and the awareness stays. Each monitor's scale is its
// DPI over 96: 1 on Wine's 96-dpi screen, and on any PC a scale Windows
// offers (100 % to 500 %).
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
	for i, m := range mons {
		scale := d.Scale(m)
		t.Logf("monitor %d %+v: scale %v", i+1, m, scale)
		if os.Getenv("HEARTH_WINE_WINDOWS") != "" && scale != 1 {
			t.Errorf("monitor %d's scale under Wine (96 dpi) is %v, want 1", i+1, scale)
		}
		if scale < 1 || scale > 5 {
			t.Errorf("monitor %d's scale %v is none Windows offers", i+1, scale)
		}
	}
}
