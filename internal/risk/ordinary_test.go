package risk_test

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestLinuxAllowlist: on Linux an ordinary file is one below the root
// with no dot-name on the way, outside the system's folders, and no
// program; each rule alone makes a write not ordinary, with its reason.
func TestLinuxAllowlist(t *testing.T) {
	w := risk.NewWritesFor(false, env(map[string]string{"HOME": "/home/u"}), nil)
	for _, c := range []struct {
		f    risk.FileFacts
		want risk.Why
	}{
		{risk.FileFacts{Path: "/home/u/src/site/main.go", Root: "/home/u", Exists: true, Head: []byte("pack")}, risk.WhyNotDocument},
		{risk.FileFacts{Path: "/home/u/Documents/a b.txt", Root: "/home/u", NewHead: []byte("Dear")}, ""},
		{risk.FileFacts{Path: "/home/u/proj/main.go", Root: "/home/u/proj", NewHead: []byte("pack")}, risk.WhyNotDocument},
		{risk.FileFacts{Path: "/home/u/proj/notes.md", Root: "/home/u/proj", NewHead: []byte("# No")}, ""},
		{risk.FileFacts{Path: "/home/u/.bash_aliases", Root: "/home/u"}, risk.WhyHidden},
		{risk.FileFacts{Path: "/home/u/src/.github/workflows/ci.yml", Root: "/home/u"}, risk.WhyHidden},
		{risk.FileFacts{Path: "/home/u/.local/proj/main.go", Root: "/home/u/.local/proj"}, risk.WhyHidden},
		{risk.FileFacts{Path: "/srv/x/.cfg", Root: "/"}, risk.WhySystem},
		{risk.FileFacts{Path: "/data/x/.cfg", Root: "/"}, risk.WhyHidden},
		{risk.FileFacts{Path: "/etc/motd", Root: "/"}, risk.WhySystem},
		{risk.FileFacts{Path: "/usr/local/bin/x", Root: "/"}, risk.WhySystem},
		{risk.FileFacts{Path: "/home/u/bin/tool", Root: "/home/u", Exists: true, Executable: true}, risk.WhyProgram},
		{risk.FileFacts{Path: "/home/u/bin/tool", Root: "/home/u", Exists: true, Head: []byte("\x7fELF")}, risk.WhyProgram},
		{risk.FileFacts{Path: "/home/u/a.txt", Root: "/home/u", Exists: true, Head: []byte("MZ\x90\x00")}, risk.WhyProgram},
		{risk.FileFacts{Path: "/home/u/run", Root: "/home/u", NewHead: []byte("#!/b")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/run", Root: "/home/u", NewHead: []byte("\x7fELF")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/a.exe", Root: "/home/u", NewHead: []byte("MZ\x90\x00")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/notes.sh", Root: "/home/u", Exists: true, Head: []byte("#!/b"), NewHead: []byte("#!/b")}, risk.WhyOpens},
		// An existing ordinary file made to start as a program: the same
		// as a new one (what a patch or an undo leaves counts).
		{risk.FileFacts{Path: "/home/u/notes.txt", Root: "/home/u", Exists: true, Head: []byte("Dear"), NewHead: []byte("#!/b")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/notes.txt", Root: "/home/u", Exists: true, Head: []byte("Dear"), NewHead: []byte("\x7fELF")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/notes.txt", Root: "/home/u", Exists: true, Head: []byte("Dear"), NewHead: []byte("MZ\x90\x00")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/notes.sh", Root: "/home/u", Exists: true, Head: []byte("#!/b"), NewHead: []byte("\x7fELF")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: "/home/u/notes.txt", Root: "/home/u", Exists: true, Head: []byte("Dear"), NewHead: []byte("Hell")}, ""},
		{risk.FileFacts{Path: "/home/u/x", Root: ""}, risk.WhyOutside},
	} {
		why, ok := w.Classify(c.f)
		if ok != (c.want == "") || why != c.want {
			t.Errorf("%+v: got %q (ordinary %v), want %q", c.f, why, ok, c.want)
		}
	}
}

// TestWindowsAllowlist: the Windows rules, on their own data: the
// system's folders by variable and known folder (a Documents moved by
// OneDrive stays ordinary), the Hidden or System attribute on the way
// below the home, files that run a program when opened (by the table and
// by PATHEXT), PE content under any name, an existing PE replaced.
func TestWindowsAllowlist(t *testing.T) {
	w := risk.NewWritesFor(true, env(map[string]string{"USERPROFILE": `C:\Users\Ann`, "APPDATA": `C:\Users\Ann\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\Ann\AppData\Local`, "ProgramData": `C:\ProgramData`, "SystemRoot": `C:\Windows`,
		"ProgramFiles": `C:\Program Files`, "PATHEXT": ".COM;.EXE;.BAT;.CMD;.VBS;.JS;.WS;.MSC;.PY",
		"FOLDERID_Documents": `D:\OneDrive\Documents`, "FOLDERID_Startup": `D:\Moved\Startup`}), nil)
	const home = `C:\Users\Ann`
	for _, c := range []struct {
		f    risk.FileFacts
		want risk.Why
	}{
		{risk.FileFacts{Path: `C:\Users\Ann\Documents\report.docx`, Root: home}, ""},
		{risk.FileFacts{Path: `D:\OneDrive\Documents\report.txt`, Root: `D:\OneDrive`}, ""},
		{risk.FileFacts{Path: `C:\Users\Ann\src\app\main.go`, Root: home, Marked: []string{`C:\`}}, risk.WhyNotDocument},
		{risk.FileFacts{Path: `C:\Users\Ann\src\app\README.md`, Root: home, Marked: []string{`C:\`}}, ""},
		{risk.FileFacts{Path: `c:\users\ann\appdata\local\Microsoft\OneDrive\OneDrive.exe`, Root: home, Exists: true, Head: []byte("MZ")}, risk.WhySystem},
		{risk.FileFacts{Path: `C:\Users\Ann\AppData\Roaming\x\y.ini`, Root: home}, risk.WhySystem},
		{risk.FileFacts{Path: `D:\Moved\Startup\run.exe`, Root: `D:\`}, risk.WhySystem},
		{risk.FileFacts{Path: `C:\Users\Ann\secret\x.txt`, Root: home, Marked: []string{`C:\Users\Ann\secret`}}, risk.WhyHidden},
		{risk.FileFacts{Path: `C:\Users\Ann\x\desktop.ini`, Root: home, Exists: true, Marked: []string{`C:\Users\Ann\x\desktop.ini`}}, risk.WhyHidden},
		{risk.FileFacts{Path: `C:\Users\Ann\.gitconfig`, Root: home}, risk.WhyHidden},
		{risk.FileFacts{Path: `C:\Users\Ann\Desktop\game.pif`, Root: home}, risk.WhyOpens},
		{risk.FileFacts{Path: `C:\Users\Ann\Desktop\Word.LNK`, Root: home}, risk.WhyOpens},
		{risk.FileFacts{Path: `C:\Users\Ann\Downloads\x.appref-ms`, Root: home}, risk.WhyOpens},
		{risk.FileFacts{Path: `C:\Users\Ann\src\tool.py`, Root: home}, risk.WhyOpens},
		{risk.FileFacts{Path: `C:\Users\Ann\src\build.ws`, Root: home}, risk.WhyOpens},
		{risk.FileFacts{Path: `C:\Users\Ann\src\run.bat`, Root: home, Exists: true, Head: []byte("@ech")}, risk.WhyOpens},
		{risk.FileFacts{Path: `C:\Users\Ann\Documents\photo.jpg`, Root: home, NewHead: []byte("MZ\x90\x00")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: `C:\Users\Ann\Documents\old.dat`, Root: home, Exists: true, Head: []byte("MZ\x90\x00")}, risk.WhyProgram},
		{risk.FileFacts{Path: `C:\Users\Ann\Documents\run`, Root: home, NewHead: []byte("#!/b")}, risk.WhyNotDocument},
		{risk.FileFacts{Path: `C:\Users\Ann\Documents\notes.txt`, Root: home, Exists: true, Head: []byte("Dear"), NewHead: []byte("MZ\x90\x00")}, risk.WhyNewProgram},
		{risk.FileFacts{Path: `C:\Users\Ann\Documents\notes.txt`, Root: home, Exists: true, Head: []byte("Dear"), NewHead: []byte("#!/b")}, ""},
	} {
		why, ok := w.Classify(c.f)
		if ok != (c.want == "") || why != c.want {
			t.Errorf("%s: got %q (ordinary %v), want %q", c.f.Path, why, ok, c.want)
		}
	}
}

// TestKnownFoldersInThePlaces: the Windows table names a Startup moved by
// User Shell Folders, a PowerShell profile under a Documents moved by
// OneDrive, Word's and Excel's start-up folders and the terminals'
// settings, where the known folders and variables say they are.
func TestKnownFoldersInThePlaces(t *testing.T) {
	e := env(map[string]string{"USERPROFILE": `C:\Users\Ann`, "APPDATA": `C:\Users\Ann\AppData\Roaming`, "LOCALAPPDATA": `C:\Users\Ann\AppData\Local`,
		"FOLDERID_Startup": `D:\Moved\Startup`, "FOLDERID_Documents": `D:\OneDrive\Docs`, "FOLDERID_Desktop": `D:\OneDrive\Desk`})
	ps := risk.NewPlacesFor(true, e, nil)
	for path, id := range map[string]string{
		`D:\Moved\Startup\run.exe`: "autostart",
		`D:\OneDrive\Docs\WindowsPowerShell\Microsoft.PowerShell_profile.ps1`:                                  "powershell",
		`D:\OneDrive\Docs\PowerShell\profile.ps1`:                                                              "powershell",
		`D:\OneDrive\Desk\game.pif`:                                                                            "shortcut",
		`C:\Users\Ann\AppData\Roaming\Microsoft\Excel\XLSTART\book.xlsm`:                                       "office",
		`C:\Users\Ann\AppData\Roaming\Microsoft\Word\STARTUP\x.dotm`:                                           "office",
		`C:\Users\Ann\AppData\Roaming\Microsoft\Templates\Normal.dotm`:                                         "office",
		`C:\Users\Ann\AppData\Local\Packages\Microsoft.WindowsTerminal_8wekyb3d8bbwe\LocalState\settings.json`: "editor",
		`C:\Users\Ann\AppData\Roaming\Code\User\settings.json`:                                                 "editor",
		`C:\Users\Ann\src\app\.vscode\tasks.json`:                                                              "editor",
		`C:\Users\Ann\src\app\.git\commondir`:                                                                  "git",
		`C:\Users\Ann\AppData\Local\Programs\Python\Python312\Lib\site-packages\x.pth`:                         "python",
	} {
		p, ok := ps.Match(path)
		if !ok || p.ID != id {
			t.Errorf("%s: caught as %q (%v), want %s", path, p.ID, ok, id)
		}
	}
	if p, ok := ps.Match(`C:\Users\Ann\AppData\Local\Packages\App\LocalState\notes.txt`); ok {
		t.Errorf("an app's own notes are caught as %s", p.ID)
	}
}
