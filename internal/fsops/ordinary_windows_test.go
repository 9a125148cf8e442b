package fsops

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
)

// TestWindowsWritesAsk: on the real Windows build, what fs gathers of a
// file (its target: the Hidden attribute on the way, an existing
// program's content) and the allowlist and persistence table built from
// the real environment and known folders make each of the issue's
// Windows cases not ordinary (so ask mode asks), while a plain document
// under the profile stays ordinary: a file under a Hidden folder, the
// Startup folder in %APPDATA%, a Startup redirected by User Shell
// Folders, a .lnk and a .pif, a PowerShell profile under a Documents
// moved elsewhere, Excel's XLSTART, and an existing .exe under
// %LOCALAPPDATA% overwritten.
func TestWindowsWritesAsk(t *testing.T) {
	profile := os.Getenv("USERPROFILE")
	appdata, local := os.Getenv("APPDATA"), os.Getenv("LOCALAPPDATA")
	if profile == "" || appdata == "" || local == "" {
		t.Fatalf("no profile in the environment: %q %q %q", profile, appdata, local)
	}
	work, err := os.MkdirTemp(profile, "hearth-ordinary-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	inLocal, err := os.MkdirTemp(local, "hearth-ordinary-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(inLocal) })
	movedStartup := filepath.Join(work, "Moved Startup")
	movedDocs := filepath.Join(work, "OneDrive", "Documents")
	for _, d := range []string{movedStartup, movedDocs, filepath.Join(work, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	startuptest.Redirect(t, "Startup", movedStartup)
	startuptest.Redirect(t, "Personal", movedDocs)
	hide, err := windows.UTF16PtrFromString(filepath.Join(work, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetFileAttributes(hide, windows.FILE_ATTRIBUTE_HIDDEN); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(inLocal, "OneDrive.exe")
	if err := os.WriteFile(exe, []byte("MZ\x90\x00rest of a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldProgram := filepath.Join(work, "tool.dat")
	if err := os.WriteFile(oldProgram, []byte("MZ\x90\x00"), 0o644); err != nil {
		t.Fatal(err)
	}

	env := risk.KnownFolderEnv(os.Getenv)
	if got := env("FOLDERID_Startup"); RealPrefix(got) != RealPrefix(movedStartup) {
		t.Fatalf("the known Startup folder is %q, not the redirected %q", got, movedStartup)
	}
	writes := risk.NewWrites(env, RealPrefix)
	places := risk.NewPlacesResolved(env, RealPrefix)
	roots, err := NewRoots([]string{profile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Roots: roots, Writes: writes}
	judge := func(p, data string) (risk.Why, bool, string) {
		t.Helper()
		in, err := json.Marshal(map[string]string{"path": p, "data": data})
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

	if why, ok, place := judge(filepath.Join(work, "Letters", "to Ann.txt"), "Dear Ann"); !ok || place != "" {
		t.Fatalf("a plain document under the profile is not ordinary: %s %s", why, place)
	}
	for _, c := range []struct {
		name, path, data string
		why              risk.Why
		place            string
	}{
		{"Hidden attribute", filepath.Join(work, "secret", "notes.txt"), "x", risk.WhyHidden, ""},
		{"Startup in APPDATA", filepath.Join(appdata, `Microsoft\Windows\Start Menu\Programs\Startup\run.exe`), "MZ", risk.WhySystem, "autostart"},
		{"redirected Startup", filepath.Join(movedStartup, "run.bat"), "calc", risk.WhySystem, "autostart"},
		{".lnk", filepath.Join(work, "Word.lnk"), "L", risk.WhyOpens, ""},
		{".pif", filepath.Join(work, "game.pif"), "x", risk.WhyOpens, ""},
		{"PowerShell profile in a moved Documents", filepath.Join(movedDocs, `WindowsPowerShell\Microsoft.PowerShell_profile.ps1`), "calc", risk.WhyOpens, "powershell"},
		{"XLSTART", filepath.Join(appdata, `Microsoft\Excel\XLSTART\book.xlsm`), "x", risk.WhySystem, "office"},
		{"an existing .exe under LOCALAPPDATA", exe, "MZ", risk.WhySystem, ""},
		{"an existing PE under another name", oldProgram, "text", risk.WhyProgram, ""},
		{"PE content under any name", filepath.Join(work, "photo.jpg"), "MZ\x90\x00", risk.WhyNewProgram, ""},
	} {
		why, ok, place := judge(c.path, c.data)
		if ok || why != c.why || place != c.place {
			t.Errorf("%s (%s): %q ordinary=%v place %q, want %q place %q", c.name, c.path, why, ok, place, c.why, c.place)
		}
	}
}
