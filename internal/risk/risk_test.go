package risk_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/risk"
)

// update rewrites the docs' risk-table blocks from the code:
// go test ./internal/risk/ -run TestDocsShowTheTable -update
var update = flag.Bool("update", false, "rewrite the risk-table blocks of README.md and docs/SECURITY.md")

// TestDocsShowTheTable: the README's safety section shows the cases, and
// docs/SECURITY.md's Governance section the cases and every primitive's,
// exactly as the code has them.
func TestDocsShowTheTable(t *testing.T) {
	for _, doc := range []struct {
		file, want string
	}{
		{"README.md", risk.CasesMarkdown()},
		{filepath.Join("docs", "SECURITY.md"), risk.Markdown()},
	} {
		file := filepath.Join("..", "..", doc.file)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		start := strings.Index(s, "<!-- risk-table")
		end := strings.Index(s, "<!-- /risk-table -->")
		if start < 0 || end < start {
			t.Fatalf("%s has no risk-table block", doc.file)
		}
		from := start + strings.Index(s[start:], "\n") + 1
		block := s[from:end]
		if block != doc.want && *update {
			if err := os.WriteFile(file, []byte(s[:from]+doc.want+s[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if block != doc.want {
			t.Errorf("%s's risk table differs from internal/risk; run go test ./internal/risk/ -run TestDocsShowTheTable -update, or put this between the markers:\n%s", doc.file, doc.want)
		}
	}
}

// TestEveryKindHasCasesAndWords: every row's kind has cases, every case
// words and a verdict in each mode, and an unknown mode asks.
func TestEveryKindHasCasesAndWords(t *testing.T) {
	for name := range risk.Rows {
		if len(risk.CasesOf(name)) == 0 {
			t.Errorf("%s: its kind has no cases", name)
		}
	}
	for _, c := range risk.Cases {
		if c.Words == "" {
			t.Errorf("case %s has no words", c.ID)
		}
		for _, m := range risk.Modes {
			switch c.Verdict(m) {
			case risk.Runs, risk.Asks, risk.Refused:
			default:
				t.Errorf("case %s has no verdict in %s", c.ID, m)
			}
		}
		if c.Verdict("sloppy") != risk.Asks {
			t.Errorf("case %s: an unknown mode must ask", c.ID)
		}
	}
	if got := risk.CasesOf("nobody.knows"); len(got) != 1 || got[0] != risk.CaseUnlisted || risk.CaseOf(risk.CaseUnlisted).Ask != risk.Asks {
		t.Fatalf("a primitive without a row must ask: %v", got)
	}
	if err := risk.Check([]string{"fs.read", "new.primitive"}); err == nil || !strings.Contains(err.Error(), "new.primitive") {
		t.Fatalf("Check must name a primitive without a row: %v", err)
	}
}

// TestDescribeSaysEachCaseOnce: each mode's words list every case under
// its verdict, and the panel's paragraph names every case that asks or
// is refused.
func TestDescribeSaysEachCaseOnce(t *testing.T) {
	for _, m := range risk.Modes {
		d := risk.Describe(m)
		if n := len(d.Runs) + len(d.Asks) + len(d.Refused); n != len(risk.Cases) {
			t.Errorf("%s: %d cases described, want %d", m, n, len(risk.Cases))
		}
		plain := d.Plain()
		for _, w := range append(append([]string{}, d.Asks...), d.Refused...) {
			if !strings.Contains(plain, w) && !(len(d.Refused) > len(d.Runs) && strings.Contains(plain, "everything else is refused")) {
				t.Errorf("%s: the panel's words omit %q: %s", m, w, plain)
			}
		}
	}
	if s := risk.Describe(risk.ModeAsk).Plain(); !strings.Contains(s, "makes a program start by itself") || !strings.Contains(s, "once per app") {
		t.Fatalf("ask mode's words: %s", s)
	}
}

// placeProbe is one path a persistence entry must catch.
func probe(p risk.Place, sep string) string {
	switch p.Kind {
	case risk.ExactFile:
		return p.Path
	case risk.GitRepo:
		return strings.Join([]string{"", "home", "u", "src", "site", ".git", "hooks", "pre-commit"}, sep)
	}
	name := "x"
	if len(p.Exts) > 0 {
		name += p.Exts[0]
	} else if len(p.Names) > 0 {
		name = p.Names[0]
	} else if len(p.Prefixes) > 0 {
		name = p.Prefixes[0] + ".fish"
	}
	switch p.Kind {
	case risk.InAnyDir:
		return strings.Join([]string{"", "home", "u", "src", "venv", p.Path, name}, sep)
	case risk.AnyName:
		return strings.Join([]string{"", "home", "u", "src", name}, sep)
	}
	return p.Path + sep + "sub" + sep + name
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestLinuxPlacesEachEntry: each entry of the Linux table catches a path
// in it, and an ordinary file beside it is not caught.
func TestLinuxPlacesEachEntry(t *testing.T) {
	e := env(map[string]string{"HOME": "/home/u"})
	ps := risk.NewPlacesFor(false, e, nil)
	for _, p := range risk.LinuxPlaces(e) {
		got, ok := ps.Match(probe(p, "/"))
		if !ok || got.Sentence == "" {
			t.Errorf("entry %s %s: %s not caught", p.ID, p.Path, probe(p, "/"))
		}
	}
	for _, want := range []string{"/home/u/.config/autostart/x.desktop", "/home/u/.bashrc", "/home/u/.profile",
		"/home/u/src/.git/hooks/pre-commit", "/home/u/.config/systemd/user/x.service", "/home/u/.ssh/authorized_keys",
		"/home/u/src/.git/config", "/home/u/src/.git/modules/lib/hooks/post-checkout", "/var/spool/cron/crontabs/u",
		"/home/u/.gitconfig", "/home/u/.config/git/config", "/home/u/src/lib/.git", "/home/u/src/venv/bin/activate",
		"/home/u/src/venv/bin/Activate.ps1", "/home/u/miniconda3/etc/conda/activate.d/x.sh",
		"/home/u/miniconda3/envs/x/etc/conda/deactivate.d/x.sh", "/home/u/google-cloud-sdk/path.bash.inc",
		"/home/u/src/site.code-workspace"} {
		if _, ok := ps.Match(want); !ok {
			t.Errorf("%s is not caught", want)
		}
	}
	for _, fine := range []string{"/home/u/notes.txt", "/home/u/.config/autostartx", "/home/u/src/hooks/x", "/home/u/.ssh/known_hosts",
		"/home/u/.bashrc.bak", "/home/u/src/.gitignore", "/home/u/.local/share/applications/readme.txt",
		"/home/u/src/venv/bin/python-config.txt", "/home/u/src/activate", "/home/u/google-cloud-sdk/README",
		"/home/u/src/code-workspace.md"} {
		if p, ok := ps.Match(fine); ok {
			t.Errorf("%s is caught as %s, but runs nothing by itself", fine, p.ID)
		}
	}
}

// TestWindowsPlacesEachEntry: each entry of the Windows table catches a
// path in it, in any case and with either separator.
func TestWindowsPlacesEachEntry(t *testing.T) {
	e := env(map[string]string{"USERPROFILE": `C:\Users\Ann`, "APPDATA": `C:\Users\Ann\AppData\Roaming`, "ProgramData": `C:\ProgramData`,
		"SystemRoot": `C:\Windows`, "OneDrive": `C:\Users\Ann\OneDrive`})
	ps := risk.NewPlacesFor(true, e, nil)
	for _, p := range risk.WindowsPlaces(e) {
		path := probe(p, `\`)
		if p.Kind == risk.GitRepo {
			path = `C:\Users\Ann\src\site\.git\hooks\pre-commit`
		}
		if _, ok := ps.Match(path); !ok {
			t.Errorf("entry %s %s: %s not caught", p.ID, p.Path, path)
		}
		if _, ok := ps.Match(strings.ToUpper(path)); !ok {
			t.Errorf("entry %s: %s in upper case not caught", p.ID, path)
		}
	}
	for _, want := range []string{
		`C:\Users\Ann\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\x.lnk`,
		`c:/programdata/microsoft/windows/start menu/programs/startup/run.bat`,
		`C:\Users\Ann\Documents\WindowsPowerShell\Microsoft.PowerShell_profile.ps1`,
		`C:\Users\Ann\.gitconfig`, `c:\users\ann\src\lib\.GIT`,
		`C:\Users\Ann\Documents\PowerShell\profile.ps1`,
		`C:\Users\Ann\Desktop\Word.lnk`, `C:\Users\Ann\Desktop\go.hta`,
		`C:\Windows\System32\Tasks\Updater`, `C:\Users\Ann\.ssh\authorized_keys`, `C:\Users\Ann\.bashrc`,
		`C:\Users\Ann\src\venv\Scripts\Activate.ps1`, `C:\Users\Ann\src\venv\Scripts\activate.bat`,
		`C:\Users\Ann\src\App.Code-Workspace`,
	} {
		if _, ok := ps.Match(want); !ok {
			t.Errorf("%s is not caught", want)
		}
	}
	for _, fine := range []string{`C:\Users\Ann\Desktop\notes.txt`, `C:\Users\Ann\Documents\report.docx`, `C:\Users\Ann\src\run.bat`} {
		if p, ok := ps.Match(fine); ok {
			t.Errorf("%s is caught as %s", fine, p.ID)
		}
	}
}

// TestRealPathOfLocation: a location reached through a symlink is
// matched at its real path (a home whose .config is a link elsewhere),
// on this OS's own table.
func TestRealPathOfLocation(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows; junctions are tested in internal/fsops")
	}
	home := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(home, ".config")); err != nil {
		t.Fatal(err)
	}
	ps := risk.NewPlacesFor(false, env(map[string]string{"HOME": home}), risk.RealPrefix)
	real, err := filepath.EvalSymlinks(elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ps.Match(filepath.Join(real, "autostart", "x.desktop")); !ok {
		t.Fatal("the real path of ~/.config/autostart is not caught")
	}
	if got := risk.RealPrefix(filepath.Join(home, ".config", "autostart", "new", "x")); got != filepath.Join(real, "autostart", "new", "x") {
		t.Fatalf("RealPrefix = %s", got)
	}
}

// TestConsoleApps: consoles and Explorer are consoles in any case, with
// or without .exe; an ordinary app is not.
func TestConsoleApps(t *testing.T) {
	for _, c := range []string{"cmd.exe", "PowerShell.EXE", "pwsh", "explorer.exe", "WindowsTerminal.exe", "conhost.exe", "taskmgr.exe"} {
		if !risk.IsConsoleApp(c) {
			t.Errorf("%s is not a console", c)
		}
	}
	if risk.IsConsoleApp("notepad.exe") {
		t.Error("notepad is a console")
	}
}

// TestLocationBecomingALinkIsSeen: a location's real path is reused for
// at most RefreshEvery; a home whose .config becomes a link elsewhere is
// matched at the new real path once that time has passed.
func TestLocationBecomingALinkIsSeen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	home, elsewhere := t.TempDir(), t.TempDir()
	ps := risk.NewPlacesFor(false, env(map[string]string{"HOME": home}), risk.RealPrefix)
	now := time.Now()
	ps.SetClock(func() time.Time { return now })
	real, err := filepath.EvalSymlinks(elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(real, "autostart", "x.desktop")
	if _, ok := ps.Match(target); ok {
		t.Fatal("caught before the link exists")
	}
	if err := os.Symlink(elsewhere, filepath.Join(home, ".config")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(risk.RefreshEvery)
	if _, ok := ps.Match(target); !ok {
		t.Fatal("the new real path of ~/.config/autostart is not caught after the refresh time")
	}
}

// TestDocsShowTheAllowlist: docs/SECURITY.md's allowlist block is the
// code's (AllowlistMarkdown), word for word.
func TestDocsShowTheAllowlist(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "SECURITY.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "<!-- allowlist")
	end := strings.Index(s, "<!-- /allowlist -->")
	if start < 0 || end < start {
		t.Fatal("docs/SECURITY.md has no allowlist block")
	}
	from := start + strings.Index(s[start:], "\n") + 1
	want := risk.AllowlistMarkdown()
	if s[from:end] == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(s[:from]+want+s[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/SECURITY.md's allowlist differs from internal/risk; run go test ./internal/risk/ -run TestDocsShowThe -update, or put this between the markers:\n%s", want)
}

// TestDocsShowTheKindTables: docs/SECURITY.md's documents and
// runs-when-opened blocks are the code's tables, word for word.
func TestDocsShowTheKindTables(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "SECURITY.md")
	for _, block := range []struct{ name, want string }{
		{"documents", risk.DocumentsMarkdown()},
		{"opens", risk.OpensMarkdown()},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		start := strings.Index(s, "<!-- "+block.name+":")
		end := strings.Index(s, "<!-- /"+block.name+" -->")
		if start < 0 || end < start {
			t.Fatalf("docs/SECURITY.md has no %s block", block.name)
		}
		from := start + strings.Index(s[start:], "\n") + 1
		if s[from:end] == block.want {
			continue
		}
		if *update {
			if err := os.WriteFile(file, []byte(s[:from]+block.want+s[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("docs/SECURITY.md's %s table differs from internal/risk; run go test ./internal/risk/ -run TestDocsShowThe -update, or put this between the markers:\n%s", block.name, block.want)
	}
}
