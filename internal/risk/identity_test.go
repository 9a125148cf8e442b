package risk_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/risk"
)

// realShell returns this machine's shell (bash or sh on Linux, cmd.exe
// on Windows), after symbolic links, and the table name it goes by.
func realShell(t testing.TB) (string, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		p := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("no cmd.exe: %v", err)
		}
		return p, "cmd"
	}
	for _, p := range []string{"/bin/bash", "/bin/sh"} {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return real, risk.ProgramName(real)
		}
	}
	t.Fatal("no shell in /bin")
	return "", ""
}

// copyAs copies the file src to dir/name, executable, changing it by
// edit first.
func copyAs(t testing.TB, src, dir, name string, edit func([]byte) []byte) string {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b = edit(b)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A real shell copied under another name is still that shell: as it is,
// with bytes appended, and with a byte changed in many places; a link to
// it too. A program the tables do not name, copied, is nothing. The
// tables, asked by the name the copy goes by, say nothing of it: the
// copy is told by what it is.
func TestRenamedShellIsTheShell(t *testing.T) {
	shell, want := realShell(t)
	ids := risk.NewIdentities(os.Getenv)
	dir := t.TempDir()
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	copies := map[string]string{
		"a plain copy": copyAs(t, shell, dir, "tool"+exe, nil),
		"bytes appended": copyAs(t, shell, dir, "notes"+exe, func(b []byte) []byte {
			return append(b, make([]byte, 100_000)...)
		}),
		"a byte changed every 64 KiB": copyAs(t, shell, dir, "helper"+exe, func(b []byte) []byte {
			for i := 200; i < len(b); i += 64 << 10 {
				b[i] ^= 0x5a
			}
			return b
		}),
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "linked")
		if err := os.Symlink(shell, link); err != nil {
			t.Fatal(err)
		}
		copies["a symbolic link"] = link
	}
	for what, p := range copies {
		if why := risk.AsksEveryTimeWhy(p); why != "" {
			t.Fatalf("%s: the tables know %s by its name; the test proves nothing", what, filepath.Base(p))
		}
		names, err := ids.Names(p)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !slices.Contains(names, want) {
			t.Errorf("%s of %s as %s: told %q, want %s", what, shell, filepath.Base(p), names, want)
		}
	}
	other := copyAs(t, shell, dir, "letter.txt", func(b []byte) []byte {
		for i := range b {
			b[i] ^= 0x5a
		}
		return b
	})
	if names, err := ids.Names(other); err != nil || len(names) != 0 {
		t.Errorf("a file with none of the shell's bytes is told %q (%v)", names, err)
	}
	if names, err := ids.Names(filepath.Join(dir, "missing")); err != nil || len(names) != 0 {
		t.Errorf("a missing file is told %q (%v)", names, err)
	}
}

// On Windows the version resource names the program: a copy of one the
// tables name, under another name, still says what it is. (Wine's
// cmd.exe carries no version resource; its regsvr32.exe does, as
// Windows' cmd.exe and powershell.exe do.)
func TestVersionResourceNamesTheProgram(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("version resources are Windows'")
	}
	sys := filepath.Join(os.Getenv("SystemRoot"), "System32")
	tried := 0
	for _, p := range []string{"cmd.exe", "WindowsPowerShell\\v1.0\\powershell.exe", "regsvr32.exe", "mshta.exe"} {
		src := filepath.Join(sys, p)
		if _, err := os.Stat(src); err != nil {
			continue
		}
		tried++
		if len(risk.VersionNames(src)) == 0 {
			continue
		}
		want := risk.ProgramName(src)
		copied := copyAs(t, src, t.TempDir(), "notes.exe", nil)
		if names := risk.VersionNames(copied); !slices.Contains(names, want) {
			t.Errorf("the version resource of a copy of %s names %q, want %s", src, names, want)
		}
		return
	}
	t.Fatalf("none of the %d programs found in %s has a version resource naming it", tried, sys)
}

// A multi-call program (one file installed under many names, as a
// one-file coreutils is) started by one of its names is that program: ls
// of it is not env, so a rule for ls still covers ls. Started by a name
// it is not installed under it may run what its first argument names,
// so it is env. A program installed under a few names (bash as rbash)
// is what it is by any of them.
func TestMultiCallProgramIsWhatItsNameSays(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("multi-call programs are Unix's")
	}
	env, err := filepath.EvalSymlinks("/usr/bin/env")
	if err != nil {
		t.Skip("no /usr/bin/env")
	}
	for _, c := range []struct {
		links int
		multi bool
	}{{20, true}, {3, false}} {
		bin, other := t.TempDir(), t.TempDir()
		one := copyAs(t, env, bin, "env", nil)
		for i := range c.links {
			if err := os.Symlink(one, filepath.Join(bin, "util"+string(rune('a'+i)))); err != nil {
				t.Fatal(err)
			}
		}
		ids := risk.NewIdentitiesIn(func() []string { return []string{bin} })
		names, err := ids.Names(filepath.Join(bin, "utila"))
		if err != nil {
			t.Fatal(err)
		}
		if c.multi && len(names) != 0 {
			t.Errorf("a multi-call program started as utila is told %q", names)
		}
		if !c.multi && !slices.Contains(names, "env") {
			t.Errorf("env installed under %d more names, started as utila, is told %q", c.links, names)
		}
		link := filepath.Join(other, "tool")
		if err := os.Symlink(one, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{link, copyAs(t, env, other, "helper", nil)} {
			if names, err := ids.Names(p); err != nil || !slices.Contains(names, "env") {
				t.Errorf("%d names: %s is told %q (%v), want env", c.links+1, filepath.Base(p), names, err)
			}
		}
	}
}

// A program installed after the folders were read is known once they are
// read again (after IdentityRefresh, in the background): a copy of it is
// then told as it.
func TestIdentitiesReadTheFoldersAgain(t *testing.T) {
	shell, want := realShell(t)
	bin, other := t.TempDir(), t.TempDir()
	now := time.Now()
	var mu sync.Mutex
	ids := risk.NewIdentitiesIn(func() []string { return []string{bin} })
	ids.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	tool := copyAs(t, shell, other, "tool"+exe, nil)
	if names, err := ids.Names(tool); err != nil || len(names) != 0 {
		t.Fatalf("with no program installed the copy is told %q (%v)", names, err)
	}
	copyAs(t, shell, bin, want+exe, nil)
	mu.Lock()
	now = now.Add(risk.IdentityRefresh)
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		names, err := ids.Names(tool)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(names, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s installed and the folders read again, the copy is still told %q", want, names)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
