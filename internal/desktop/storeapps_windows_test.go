package desktop

import (
	"testing"

	"golang.org/x/sys/windows"
)

// TestAppsFolderRead reads the shell's Applications folder for real. On
// Windows it must answer (a Windows without packaged apps answers an
// empty list); Wine has no such folder, and there the listing of apps
// goes on without packaged apps, which hearth-tray selftest's
// desktop.store_apps check covers on a PC.
func TestAppsFolderRead(t *testing.T) {
	wine := windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
	items, err := appsFolderItems()
	switch {
	case err != nil && wine:
		t.Logf("Wine: %v", err)
		if got := listStoreApps(); got != nil {
			t.Fatalf("listStoreApps with no Applications folder = %+v, want none", got)
		}
	case err != nil:
		t.Fatalf("read the Applications folder: %v", err)
	default:
		store := storeApps(items)
		t.Logf("the Applications folder has %d entries, %d of them packaged apps", len(items), len(store))
		for _, it := range items {
			if it.Name == "" && it.Parsing == "" {
				t.Errorf("an entry with neither a name nor a parsing name: %+v", it)
			}
		}
	}
	apps, err := listApps()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		if a.Kind != "desktop" && a.Kind != "store" {
			t.Errorf("app %+v has kind %q", a, a.Kind)
		}
	}
}
