package risk_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows/registry"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestStartupMovedWhileRunningIsAPlace: the persistence table asks the
// known folders again when User Shell Folders changes: a Startup folder
// redirected while the table is in use is a persistence place where it
// now is, at the first check once the stamp is read again (StampEvery),
// not only at the table's next refresh (RefreshEvery).
func TestStartupMovedWhileRunningIsAPlace(t *testing.T) {
	d, err := os.MkdirTemp(os.Getenv("USERPROFILE"), "hearth-places-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	moved := filepath.Join(d, "Moved Startup")
	if err := os.MkdirAll(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	ps := risk.NewPlaces(os.Getenv)
	// The test's clock: the change must count within StampEvery, long
	// before the table's own refresh (RefreshEvery) would see it.
	now := time.Now()
	ps.SetClock(func() time.Time { return now })
	target := filepath.Join(moved, "tidy.ahk")
	if _, ok := ps.Match(target); ok {
		t.Fatal("a place before the Startup folder moved")
	}
	const shellFolders = `Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders`
	k, err := registry.OpenKey(registry.CURRENT_USER, shellFolders, registry.QUERY_VALUE|registry.SET_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	old, oldType, err := k.GetStringValue("Startup")
	had := err == nil
	t.Cleanup(func() {
		switch {
		case !had:
			k.DeleteValue("Startup")
		case oldType == registry.EXPAND_SZ:
			k.SetExpandStringValue("Startup", old)
		default:
			k.SetStringValue("Startup", old)
		}
	})
	if err := k.SetExpandStringValue("Startup", moved); err != nil {
		t.Fatal(err)
	}
	now = now.Add(risk.StampEvery)
	pl, ok := ps.Match(target)
	if !ok || pl.ID != "autostart" {
		t.Fatalf("the moved Startup folder: %+v %v", pl, ok)
	}
}
