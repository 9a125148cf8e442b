package fsops

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/risk"
)

// TestAccountWrites: for the account the test runs as, with its known
// folders where Windows says they are (under Wine in CI: "Zoë Ünal",
// Documents and Desktop in OneDrive folders, Downloads moved off the
// profile; see scripts/test-windows), and Hearth's default roots for it:
// a document written into Documents, Desktop or Downloads is ordinary
// (ask mode does not ask), also when the path is typed in capitals; a
// script on the moved Desktop, a PowerShell profile in the moved
// Documents and a program in the Startup folder are not, each naming its
// place in the persistence table. The folders' 8.3 short names are refused
// naming the rule.
func TestAccountWrites(t *testing.T) {
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil && os.Getenv("HEARTH_WINE_PROFILE") == "" {
		// There every shell folder, Templates included (a system
		// area), is a link to the Linux home, so a document in
		// Documents is in a system area.
		t.Skip("Wine's default prefix links its shell folders to the Linux home; scripts/test-windows runs this test in its prefix of the user \"Zoë Ünal\"")
	}
	t.Setenv("HEARTH_HOME", "")
	env := risk.KnownFolderEnv(os.Getenv)
	docs, desk := env("FOLDERID_Documents"), env("FOLDERID_Desktop")
	down, _ := windows.KnownFolderPath(windows.FOLDERID_Downloads, windows.KF_FLAG_DONT_VERIFY)
	startup := env("FOLDERID_Startup")
	if docs == "" || desk == "" || down == "" || startup == "" {
		t.Fatalf("known folders: Documents %q, Desktop %q, Downloads %q, Startup %q", docs, desk, down, startup)
	}
	if want := os.Getenv("HEARTH_WINE_PROFILE"); want != "" {
		for _, p := range []string{docs, desk} {
			if !strings.Contains(p, `\`+want+`\OneDrive`) {
				t.Fatalf("known folder %s is not in %s's OneDrive: this account lacks the moved folders", p, want)
			}
		}
	}
	var work []string
	for _, d := range []string{docs, desk, down} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := os.MkdirTemp(d, "Hearth test ")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(w) })
		work = append(work, w)
	}
	roots, err := NewRoots(config.Default().Roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	writes := risk.NewWrites(env, RealPrefix)
	places := risk.NewPlacesResolved(env, RealPrefix)
	e := &Engine{Roots: roots, Writes: writes}
	judge := func(p string) (risk.Why, bool, string) {
		t.Helper()
		in, err := json.Marshal(map[string]string{"path": p, "data": "text"})
		if err != nil {
			t.Fatal(err)
		}
		tg, err := e.writeTarget(context.Background(), "", in)
		if err != nil || len(tg.Files) != 1 {
			t.Fatalf("target of %s: %v %+v", p, err, tg)
		}
		why, ok := writes.Classify(tg.Files[0])
		pl, _ := places.Match(tg.Paths[0])
		return why, ok, pl.ID
	}
	for _, p := range []string{
		filepath.Join(work[0], "Budget Zoë 2026.txt"),
		filepath.Join(work[1], "Einkaufsliste.txt"),
		filepath.Join(work[2], "Rechnung März.txt"),
		strings.ToUpper(filepath.Join(work[0], "brief an ömer.txt")),
	} {
		if why, ok, place := judge(p); !ok || place != "" {
			t.Errorf("a document %s is not ordinary: %q place %q", p, why, place)
		}
	}
	// The same folders by their 8.3 short names (Windows gives a profile
	// folder with a space or letters outside ASCII one, and %TEMP% is
	// often written with it): refused, saying to use the long name, never
	// taken for a folder outside the roots or for another file.
	short := func(p string) string {
		t.Helper()
		in, err := windows.UTF16PtrFromString(p)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]uint16, 1024)
		n, err := windows.GetShortPathName(in, &buf[0], uint32(len(buf)))
		if err != nil || n == 0 || int(n) > len(buf) {
			t.Fatalf("GetShortPathName(%s): %d %v", p, n, err)
		}
		return windows.UTF16ToString(buf[:n])
	}
	shortWork, shortDesk := short(work[0]), short(desk)
	t.Logf("short names: %s, %s", shortWork, shortDesk)
	for _, c := range [][2]string{{shortWork, work[0]}, {shortDesk, desk}} {
		if strings.EqualFold(c[0], c[1]) {
			continue // this volume gives no short names
		}
		p := filepath.Join(c[0], "Brief.txt")
		if _, err := roots.Resolve(p); ruleOf(err) != RuleShortName || !strings.Contains(err.Error(), "use the long name") {
			t.Errorf("Resolve(%s) = %v, want the short-name refusal", p, err)
		}
	}
	for _, c := range []struct{ path, place string }{
		{filepath.Join(desk, "Hearth test run.bat"), "shortcut"},
		{filepath.Join(docs, `WindowsPowerShell\Microsoft.PowerShell_profile.ps1`), "powershell"},
		{filepath.Join(startup, "Hearth test.exe"), "autostart"},
	} {
		if why, ok, place := judge(c.path); ok || place != c.place {
			t.Errorf("%s: %q ordinary=%v place %q, want not ordinary, place %q", c.path, why, ok, place, c.place)
		}
	}
}
