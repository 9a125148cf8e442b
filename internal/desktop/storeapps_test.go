package desktop

import (
	"slices"
	"testing"
)

// TestStoreApps: of the Applications folder's entries, those whose parsing
// name is an AppUserModelID become "store" apps (each id once, sorted by
// name, named as the Start menu names them); a desktop program's entry
// (a path, a known-folder path, an id without "!", a name-less entry) is
// not one; and merged with the Start menu's shortcuts, a packaged app
// whose name a shortcut has already is left out.
func TestStoreApps(t *testing.T) {
	items := []shellApp{
		{Name: "Rechner", Parsing: "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App"},
		{Name: "Einstellungen", Parsing: "windows.immersivecontrolpanel_cw5n1h2txyewy!microsoft.windows.immersivecontrolpanel"},
		{Name: "Rechner (again)", Parsing: "microsoft.windowscalculator_8wekyb3d8bbwe!app"},
		{Name: "Notepad++", Parsing: `{6D809377-6AF0-444B-8957-A3773F02200E}\Notepad++\notepad++.exe`},
		{Name: "Google Chrome", Parsing: "Chrome"},
		{Name: "Explorer", Parsing: "Microsoft.Windows.Explorer"},
		{Name: "Paint", Parsing: `C:\Windows\system32\mspaint.exe`},
		{Name: "", Parsing: "Microsoft.ZuneMusic_8wekyb3d8bbwe!Microsoft.ZuneMusic"},
		{Name: "  Fotos ", Parsing: " Microsoft.Windows.Photos_8wekyb3d8bbwe!App "},
	}
	got := storeApps(items)
	want := []App{
		{Name: "Einstellungen", ID: "windows.immersivecontrolpanel_cw5n1h2txyewy!microsoft.windows.immersivecontrolpanel", Kind: "store",
			Program: "windows.immersivecontrolpanel_cw5n1h2txyewy!microsoft.windows.immersivecontrolpanel"},
		{Name: "Fotos", ID: "Microsoft.Windows.Photos_8wekyb3d8bbwe!App", Kind: "store", Program: "microsoft.windows.photos_8wekyb3d8bbwe!app"},
		{Name: "Rechner", ID: "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App", Kind: "store", Program: "microsoft.windowscalculator_8wekyb3d8bbwe!app"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("storeApps =\n%+v\nwant\n%+v", got, want)
	}

	shortcuts := []App{
		{Name: "Editor", Kind: "desktop", Program: `C:\Windows\notepad.exe`},
		{Name: "rechner", Kind: "desktop", Program: `C:\Tools\calc.exe`},
	}
	merged := withStoreApps(shortcuts, got)
	var names []string
	for _, a := range merged {
		names = append(names, a.Name+"/"+a.Kind)
	}
	if want := []string{"Editor/desktop", "Einstellungen/store", "Fotos/store", "rechner/desktop"}; !slices.Equal(names, want) {
		t.Fatalf("merged = %q, want %q", names, want)
	}
	if len(shortcuts) != 2 || shortcuts[1].Name != "rechner" {
		t.Fatalf("the shortcuts given were changed: %+v", shortcuts)
	}
}
