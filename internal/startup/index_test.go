package startup

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// home is a temporary Linux home and the index of it.
type testHome struct {
	t    *testing.T
	dir  string
	idx  *Index
	vars map[string]string
}

func newHome(t *testing.T) *testHome {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the Linux sources")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &testHome{t: t, dir: dir, vars: map[string]string{"HOME": dir, "PATH": "/usr/bin:/bin"}}
	x, err := newFor(false, Options{Env: func(k string) string { return h.vars[k] }, Real: realPrefix, Refresh: 0})
	if err != nil {
		t.Fatal(err)
	}
	h.idx = x
	return h
}

// realPrefix resolves the existing part of p (as fsops.RealPrefix).
func realPrefix(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// write writes content at rel in the home and returns its path.
func (h *testHome) write(rel, content string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// hit asserts that the file at rel is named by an entry of kind named
// name.
func (h *testHome) hit(rel string, kind Kind, name string) Hit {
	h.t.Helper()
	p := filepath.Join(h.dir, rel)
	got, ok := h.idx.Match(p)
	if !ok {
		h.t.Fatalf("%s is not in the index; entries: %+v", rel, h.idx.Entries())
	}
	if got.Entry.Kind != kind || got.Entry.Name != name {
		h.t.Fatalf("%s: named by %s %q, want %s %q", rel, got.Entry.Kind, got.Entry.Name, kind, name)
	}
	return got
}

func (h *testHome) miss(rel string) {
	h.t.Helper()
	if got, ok := h.idx.Match(filepath.Join(h.dir, rel)); ok {
		h.t.Fatalf("%s is in the index, named by %+v", rel, got.Entry)
	}
}

// TestAutostartEntryNamesItsScript: a .desktop file whose Exec= runs
// python3 on a script names the script (with ~ expanded) and the card
// says which entry runs it.
func TestAutostartEntryNamesItsScript(t *testing.T) {
	h := newHome(t)
	h.write("apps/tray/tray.py", "print('tray')\n")
	h.miss("apps/tray/tray.py")
	h.write(".config/autostart/tray.desktop", "[Desktop Entry]\nType=Application\nName=Tray\nName[de]=Leiste\nExec=/usr/bin/python3 ~/apps/tray/tray.py %U\n")
	got := h.hit("apps/tray/tray.py", KindAutostart, "Tray")
	if s := got.Said(filepath.Join(h.dir, "apps/tray/tray.py")); s != "change tray.py, which the autostart entry “Tray” runs every time you sign in" {
		t.Errorf("the card says %q", s)
	}
	// A quoted argument with a space, the Desktop Entry quoting.
	h.write("My Apps/run me.sh", "echo\n")
	h.write(".config/autostart/other.desktop", "[Desktop Entry]\nName=Other\nExec=sh \""+h.dir+"/My Apps/run me.sh\" --x\n")
	h.hit("My Apps/run me.sh", KindAutostart, "Other")
}

// TestUserUnitNamesItsScripts: a systemd user unit's ExecStart= (with
// %h), ExecStartPre= (with a prefix) and EnvironmentFile= are named.
func TestUserUnitNamesItsScripts(t *testing.T) {
	h := newHome(t)
	h.write(".config/systemd/user/sync.service", "[Unit]\nDescription=Sync\n[Service]\nExecStartPre=-%h/bin/prepare.sh\nExecStart=/bin/bash %h/bin/sync.sh --every 5\nEnvironmentFile=-%h/.config/sync.env\nWorkingDirectory=~\n[Install]\nWantedBy=default.target\n")
	h.hit("bin/sync.sh", KindUserUnit, "sync.service")
	h.hit("bin/prepare.sh", KindUserUnit, "sync.service")
	h.hit(".config/sync.env", KindUserUnit, "sync.service")
	// A drop-in overriding ExecStart.
	h.write(".config/systemd/user/sync.service.d/override.conf", "[Service]\nExecStart=\nExecStart=%h/bin/other.sh\n")
	h.hit("bin/other.sh", KindUserUnit, "sync.service")
}

// TestShellStartupFilesAndWhatTheySource: .bashrc's sourced file is
// named and read one level further; the file that one sources is named,
// and no deeper.
func TestShellStartupFilesAndWhatTheySource(t *testing.T) {
	h := newHome(t)
	h.write(".bashrc", "# mine\nif [ -f ~/dotfiles/aliases.sh ]; then . ~/dotfiles/aliases.sh; fi\n[ -r \"$HOME/dotfiles/env.sh\" ] && source \"$HOME/dotfiles/env.sh\" # env\n")
	h.write("dotfiles/aliases.sh", "source ${HOME}/dotfiles/more.sh\n")
	h.write("dotfiles/more.sh", ". ~/dotfiles/deepest.sh\n")
	h.hit("dotfiles/aliases.sh", KindShell, "~/.bashrc")
	h.hit("dotfiles/env.sh", KindShell, "~/.bashrc")
	h.hit("dotfiles/more.sh", KindShell, "~/dotfiles/aliases.sh")
	h.miss("dotfiles/deepest.sh")
	// A comment is not a command.
	h.write(".profile", "# . ~/dotfiles/commented.sh\nexport X=1 # source ~/dotfiles/also.sh\n")
	h.miss("dotfiles/commented.sh")
	h.miss("dotfiles/also.sh")
}

// TestShellCommandsNameTheirScripts: a command of a shell start-up file
// names the files in its arguments whatever runs them (python3, bash),
// as an autostart entry's does; options, unknown variables and folders
// are not files.
func TestShellCommandsNameTheirScripts(t *testing.T) {
	h := newHome(t)
	h.write("proj/run.sh", "echo hi\n")
	h.write(".bashrc", "python3 ~/proj/motd.py --quiet\nbash proj/run.sh && cd ~/proj\nls -la $UNSET_DIR/x.py ~/proj\n")
	h.hit("proj/motd.py", KindShell, "~/.bashrc")
	h.hit("proj/run.sh", KindShell, "~/.bashrc")
	h.miss("proj")
	h.miss("--quiet")
	h.miss("-la")
	for _, e := range h.idx.Entries() {
		for _, f := range e.Files {
			if strings.Contains(f, "$") || strings.Contains(f, "UNSET") || filepath.Base(f) == "-la" {
				t.Errorf("%s names %q, which is not a file", e.Name, f)
			}
		}
	}
}

// TestGitIncludesAndPrograms: [include] and [includeIf] paths (relative
// to the including file), core.hooksPath and core.fsmonitor are named.
func TestGitIncludesAndPrograms(t *testing.T) {
	h := newHome(t)
	h.write(".gitconfig", "[user]\n\tname = Ann\n[include]\n\tpath = ~/dotfiles/git/extra.gitconfig\n[includeIf \"gitdir:~/work/\"]\n\tpath = work.gitconfig ; for work\n[core]\n\thooksPath = ~/githooks\n")
	h.write("dotfiles/git/extra.gitconfig", "[core]\n\tfsmonitor = \"/home/nobody/fsmon.sh\"\n[include]\n\tpath = nested.gitconfig\n")
	h.hit("dotfiles/git/extra.gitconfig", KindGit, "~/.gitconfig")
	h.hit("work.gitconfig", KindGit, "~/.gitconfig")
	h.hit("githooks/pre-commit", KindGit, "~/.gitconfig")
	// The folder itself: a folder of hooks moved or made there.
	h.hit("githooks", KindGit, "~/.gitconfig")
	h.hit("dotfiles/git/nested.gitconfig", KindGit, "~/dotfiles/git/extra.gitconfig")
	if _, ok := h.idx.Match("/home/nobody/fsmon.sh"); !ok {
		t.Error("core.fsmonitor's program is not named")
	}
	h.write(".config/git/config", "[include]\n\tpath = ../../xdg-extra\n")
	h.hit("xdg-extra", KindGit, "~/.config/git/config")
}

// TestSSHIncludes: Include (relative to ~/.ssh, a glob's folder named
// whole) and ProxyCommand's script are named.
func TestSSHIncludes(t *testing.T) {
	h := newHome(t)
	h.write(".ssh/config", "Include hosts.conf ~/dotfiles/ssh/*\nHost x\n  ProxyCommand ~/bin/proxy.sh %h %p\n")
	h.write("dotfiles/ssh/a", "Host a\n")
	h.hit(".ssh/hosts.conf", KindSSH, "~/.ssh/config")
	h.hit("dotfiles/ssh/a", KindSSH, "~/.ssh/config")
	h.hit("dotfiles/ssh/new-one", KindSSH, "~/.ssh/config")
	h.hit("bin/proxy.sh", KindSSH, "~/.ssh/config")
}

// TestPythonPathFromPth: a .pth in the user site-packages puts a project
// folder on Python's path, whose usercustomize.py then runs at every
// start; the site folder's own usercustomize.py too. A .pth's import
// line names no folder.
func TestPythonPathFromPth(t *testing.T) {
	h := newHome(t)
	site := ".local/lib/python3.12/site-packages"
	h.write(site+"/__editable__.proj.pth", h.dir+"/src/proj\n# comment\nimport os; os.getcwd()\n")
	h.hit("src/proj/usercustomize.py", KindPython, "__editable__.proj.pth")
	h.hit("src/proj/sitecustomize.py", KindPython, "__editable__.proj.pth")
	h.hit(site+"/usercustomize.py", KindPython, "the user site-packages")
	h.miss("src/proj/other.py")
	h.write(site+"/rel.pth", "../../../../relproj\n")
	h.hit("relproj/usercustomize.py", KindPython, "rel.pth")
}

// TestAnEntryAddedOrRemovedCountsAtTheNextCheck: the index is looked at
// again (Refresh 0: at every check): an entry added, changed or removed
// counts at once; and an entry read from a source not changed is not
// parsed again.
func TestAnEntryAddedOrRemovedCountsAtTheNextCheck(t *testing.T) {
	h := newHome(t)
	h.miss("apps/late.py")
	d := h.write(".config/autostart/late.desktop", "[Desktop Entry]\nName=Late\nExec=python3 "+h.dir+"/apps/late.py\n")
	h.hit("apps/late.py", KindAutostart, "Late")
	h.write(".config/autostart/late.desktop", "[Desktop Entry]\nName=Later\nExec=python3 "+h.dir+"/apps/later.py\n")
	h.miss("apps/late.py")
	h.hit("apps/later.py", KindAutostart, "Later")
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	h.miss("apps/later.py")
}

// TestRefreshBoundsTheLooks: within Refresh of a look a check uses the
// index as it was; after it, the change counts.
func TestRefreshBoundsTheLooks(t *testing.T) {
	h := newHome(t)
	h.idx.refresh = Refresh
	h.miss("apps/late.py")
	h.write(".config/autostart/late.desktop", "[Desktop Entry]\nName=Late\nExec=python3 "+h.dir+"/apps/late.py\n")
	h.idx.mu.Lock()
	h.idx.checked = h.idx.checked.Add(-Refresh)
	h.idx.mu.Unlock()
	h.hit("apps/late.py", KindAutostart, "Late")
}

// TestTouchedLooksAgain: after Hearth says it changed a file, the next
// check looks at the sources again, within Refresh of the last look.
func TestTouchedLooksAgain(t *testing.T) {
	h := newHome(t)
	h.idx.refresh = time.Hour
	h.miss("apps/late.py")
	h.write(".bashrc", "python3 ~/apps/late.py\n")
	h.miss("apps/late.py")
	h.idx.Touched()
	h.hit("apps/late.py", KindShell, "~/.bashrc")
}

// TestNamedFileThroughALink: a file an entry names through a symlinked
// folder is matched at its real path, and a file written through a link
// to it too.
func TestNamedFileThroughALink(t *testing.T) {
	h := newHome(t)
	real := h.write("real-apps/tray.py", "x\n")
	if err := os.Symlink(filepath.Join(h.dir, "real-apps"), filepath.Join(h.dir, "apps")); err != nil {
		t.Fatal(err)
	}
	h.write(".config/autostart/tray.desktop", "[Desktop Entry]\nName=Tray\nExec=python3 ~/apps/tray.py\n")
	if _, ok := h.idx.Match(real); !ok {
		t.Fatal("the real path of a named file is not matched")
	}
}

// TestNamedFileIsABrokenLink: a sourced file that is a link to a file
// not made yet (as stow leaves them) names the link's target too, so
// creating the target is a write to a start-up file.
func TestNamedFileIsABrokenLink(t *testing.T) {
	h := newHome(t)
	if err := os.MkdirAll(filepath.Join(h.dir, "Documents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("Documents", "y.sh"), filepath.Join(h.dir, "x.sh")); err != nil {
		t.Fatal(err)
	}
	h.write(".bashrc", "source ~/x.sh\n")
	h.hit("x.sh", KindShell, "~/.bashrc")
	h.hit("Documents/y.sh", KindShell, "~/.bashrc")
}

func TestNewRefusesMissingParts(t *testing.T) {
	for _, o := range []Options{{Real: realPrefix}, {Env: os.Getenv}, {Env: os.Getenv, Real: realPrefix, Refresh: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) built an index", o)
		}
	}
}

// TestWindowsCommandLines: Run values, shortcuts and tasks split as
// Windows splits them; the program and the script in the arguments are
// named (AutoHotkey.exe C:\Users\Ann\tidy.ahk names tidy.ahk).
func TestWindowsCommandLines(t *testing.T) {
	h := host{windows: true, home: `C:\Users\Ann`, env: func(k string) string {
		return map[string]string{"USERPROFILE": `C:\Users\Ann`, "APPDATA": `C:\Users\Ann\AppData\Roaming`}[k]
	}}
	for _, c := range []struct {
		line string
		want []string
	}{
		{`"C:\Program Files\AutoHotkey\AutoHotkey.exe" C:\Users\Ann\tidy.ahk`, []string{`C:\Program Files\AutoHotkey\AutoHotkey.exe`, `C:\Users\Ann\tidy.ahk`}},
		{`C:\Tools\ahk.exe "%APPDATA%\scripts\my tidy.ahk" /restart`, []string{`C:\Tools\ahk.exe`, `C:\Users\Ann\AppData\Roaming\scripts\my tidy.ahk`}},
		{`wscript.exe //B "C:\Users\Ann\run.vbs"`, []string{`C:\Users\Ann\run.vbs`}},
		{`cmd /c "C:\Users\Ann\start.bat & C:\Users\Ann\two.bat"`, []string{`C:\Users\Ann\start.bat`, `C:\Users\Ann\two.bat`}},
		{`C:\x.exe --config=C:\Users\Ann\x.ini`, []string{`C:\x.exe`, `C:\Users\Ann\x.ini`}},
	} {
		got := h.commandFiles(h.windowsCommand(c.line), "")
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.line, got, c.want)
		}
	}
	for _, c := range []struct {
		line string
		want []string
	}{
		{`a "b c" d`, []string{"a", "b c", "d"}},
		{`"C:\a b\x.exe" "q\"x" e\\\"f`, []string{`C:\a b\x.exe`, `q"x`, `e\"f`}},
		{`x a\\b "c\\"`, []string{"x", `a\\b`, `c\`}},
	} {
		if got := windowsArgs(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("windowsArgs(%s) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestWindowsStartupShortcutAndTask: a Startup folder's .lnk names its
// target and the script in its arguments; a task's UTF-16 XML its
// command and script.
func TestWindowsStartupShortcutAndTask(t *testing.T) {
	h := host{windows: true, home: `C:\Users\Ann`, env: func(k string) string { return "" }}
	es, _ := parseStartupItem(h, `C:\Users\Ann\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\Tidy.lnk`,
		0, lnk(`C:\Program Files\AutoHotkey\AutoHotkey.exe`, `"C:\Users\Ann\scripts\tidy.ahk"`))
	if len(es) != 1 || es[0].Name != "Tidy" || !containsString(es[0].Files, `C:\Users\Ann\scripts\tidy.ahk`) || !containsString(es[0].Files, `C:\Program Files\AutoHotkey\AutoHotkey.exe`) {
		t.Errorf("the shortcut: %+v", es)
	}
	xml := `<?xml version="1.0" encoding="UTF-16"?><Task><Actions Context="Author"><Exec><Command>C:\Python\pythonw.exe</Command><Arguments>C:\Users\Ann\jobs\backup.py --quiet</Arguments></Exec></Actions></Task>`
	u := utf16.Encode([]rune(xml))
	b := []byte{0xff, 0xfe}
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	es, _ = parseTask(h, `C:\Windows\System32\Tasks\Backup`, 0, b)
	if len(es) != 1 || es[0].Name != "Backup" || !reflect.DeepEqual(es[0].Files, []string{`C:\Python\pythonw.exe`, `C:\Users\Ann\jobs\backup.py`}) {
		t.Errorf("the task: %+v", es)
	}
	es, _ = parsePowerShell(h, `C:\Users\Ann\Documents\PowerShell\profile.ps1`, 0, []byte(". $HOME\\ps\\aliases.ps1\nImport-Module $PSScriptRoot\\mods\\x.psm1\n"))
	if len(es) != 1 || !reflect.DeepEqual(es[0].Files, []string{`C:\Users\Ann\ps\aliases.ps1`, `C:\Users\Ann\Documents\PowerShell\mods\x.psm1`}) {
		t.Errorf("the profile: %+v", es)
	}
}

// TestWindowsMatchesWithoutCase: on Windows a named file matches in any
// case and with either separator.
func TestWindowsMatchesWithoutCase(t *testing.T) {
	x := &Index{windows: true, real: func(s string) string { return s }}
	x.entries = []Entry{{Kind: KindRun, Name: "Tidy", Files: []string{`C:\Users\Ann\Tidy.ahk`}}}
	x.build()
	x.checked, x.refresh = time.Now(), time.Hour
	if _, ok := x.Match(`c:/users/ann/TIDY.AHK`); !ok {
		t.Error("not matched without case")
	}
}

// lnk builds a Shell Link whose link info names target, with arguments
// args (Unicode string data), as Windows writes one.
func lnk(target, args string) []byte {
	b := make([]byte, 0x4c)
	binary.LittleEndian.PutUint32(b, 0x4c)
	binary.LittleEndian.PutUint32(b[0x14:], 0x2|0x20|0x80)
	info := make([]byte, 28)
	base := append([]byte(target), 0)
	binary.LittleEndian.PutUint32(info[0:], uint32(len(info)+len(base)))
	binary.LittleEndian.PutUint32(info[4:], 28)
	binary.LittleEndian.PutUint32(info[8:], 1)
	binary.LittleEndian.PutUint32(info[16:], 28)
	b = append(append(b, info...), base...)
	u := utf16.Encode([]rune(args))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}

// TestDesktopExecQuoting: the Desktop Entry Specification's quoting and
// escapes.
func TestDesktopExecQuoting(t *testing.T) {
	for _, c := range []struct {
		exec string
		want []string
	}{
		{`python3 ~/x.py %U`, []string{"python3", "~/x.py"}},
		{`"/opt/my app/run" "a \"q\" b" 100%%`, []string{"/opt/my app/run", `a "q" b`, "100%"}},
		{desktopString(`sh -c "echo\shi"`), []string{"sh", "-c", "echo hi"}},
	} {
		if got := desktopExec(c.exec); !reflect.DeepEqual(got, c.want) {
			t.Errorf("desktopExec(%s) = %q, want %q", c.exec, got, c.want)
		}
	}
	if got := shellWords(`. "$HOME/a b" # c`); !reflect.DeepEqual(got, []string{".", "$HOME/a b"}) {
		t.Errorf("shellWords: %q", got)
	}
	if !strings.Contains(Markdown(), "`ExecStart=`") {
		t.Error("the docs' table misses ExecStart=")
	}
}

// TestScriptsAnEntryRunsAreReadOneLevelFurther: a script an entry runs
// through a shell (bash script.sh) or by its own path with a #! line
// naming a shell is read as a start-up file is: what it sources is
// named, as run by that entry; a script without such a line is not read.
func TestScriptsAnEntryRunsAreReadOneLevelFurther(t *testing.T) {
	h := newHome(t)
	h.write("bin/sync.sh", "set -e\n. ~/lib/common.sh\n")
	h.write(".config/systemd/user/sync.service", "[Service]\nExecStart=/bin/bash -e %h/bin/sync.sh\n")
	h.hit("lib/common.sh", KindUserUnit, "sync.service")
	h.write("bin/start", "#!/usr/bin/env bash\nsource ~/lib/start-env.sh\n")
	h.write(".config/autostart/start.desktop", "[Desktop Entry]\nName=Start\nExec="+h.dir+"/bin/start --now\n")
	h.hit("lib/start-env.sh", KindAutostart, "Start")
	h.write("bin/tool.py", "#!/usr/bin/python3\nimport x\n# . ~/lib/not-shell.sh\n")
	h.write(".config/autostart/tool.desktop", "[Desktop Entry]\nName=Tool\nExec="+h.dir+"/bin/tool.py\n")
	h.miss("lib/not-shell.sh")
}

// TestShellVariablesSetBeforeASource: a variable the start-up file sets
// (nvm's export NVM_DIR="$HOME/.nvm") expands in the source line after.
func TestShellVariablesSetBeforeASource(t *testing.T) {
	h := newHome(t)
	h.write(".bashrc", "export NVM_DIR=\"$HOME/.nvm\"\n[ -s \"$NVM_DIR/nvm.sh\" ] && \\. \"$NVM_DIR/nvm.sh\"  # This loads nvm\n")
	h.hit(".nvm/nvm.sh", KindShell, "~/.bashrc")
}

// TestConcurrentChecks: checks from many calls at once, while an entry
// changes, share one index safely (run with -race).
func TestConcurrentChecks(t *testing.T) {
	h := newHome(t)
	h.write(".config/autostart/a.desktop", "[Desktop Entry]\nName=A\nExec=python3 "+h.dir+"/apps/a.py\n")
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				h.idx.Match(filepath.Join(h.dir, "apps", "a.py"))
				h.idx.Entries()
			}
		}()
	}
	for i := range 20 {
		h.write(".config/autostart/a.desktop", fmt.Sprintf("[Desktop Entry]\nName=A%d\nExec=python3 %s/apps/a.py\n", i, h.dir))
	}
	for range 4 {
		<-done
	}
	h.hit("apps/a.py", KindAutostart, "A19")
}

// TestSameSizeAndTimeChangeCounts: an entry rewritten with the same size
// within the file system's time tick (its modification time unchanged)
// still counts: a recent time is not trusted.
func TestSameSizeAndTimeChangeCounts(t *testing.T) {
	h := newHome(t)
	d := h.write(".config/autostart/a.desktop", "[Desktop Entry]\nName=A\nExec=python3 "+h.dir+"/apps/a.py\n")
	h.hit("apps/a.py", KindAutostart, "A")
	fi, err := os.Stat(d)
	if err != nil {
		t.Fatal(err)
	}
	h.write(".config/autostart/a.desktop", "[Desktop Entry]\nName=B\nExec=python3 "+h.dir+"/apps/b.py\n")
	if err := os.Chtimes(d, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	h.hit("apps/b.py", KindAutostart, "B")
	h.miss("apps/a.py")
}
