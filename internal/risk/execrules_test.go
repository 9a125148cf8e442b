package risk_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestDocsShowTheExecRules: docs/SECURITY.md shows the harmless
// environment variables, the programs that ask every time and the
// per-program argument table exactly as the code has them (-update
// rewrites the block).
func TestDocsShowTheExecRules(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "SECURITY.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, want := string(b), risk.ExecRulesMarkdown()
	start := strings.Index(s, "<!-- exec-rules")
	end := strings.Index(s, "<!-- /exec-rules -->")
	if start < 0 || end < start {
		t.Fatal("docs/SECURITY.md has no exec-rules block")
	}
	from := start + strings.Index(s[start:], "\n") + 1
	if block := s[from:end]; block != want {
		if *update {
			if err := os.WriteFile(file, []byte(s[:from]+want+s[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/SECURITY.md's exec-rules block differs from internal/risk; run go test ./internal/risk/ -run TestDocsShowTheExecRules -update, or put this between the markers:\n%s", want)
	}
}

// Each shape of an argument-table entry matches what it says and no
// more.
func TestArgTableShapes(t *testing.T) {
	for _, c := range []struct {
		program string
		args    []string
		asks    bool
	}{
		{"git", []string{"-c", "x=y"}, true},
		{"git", []string{"-vc"}, true},
		{"git", []string{"--exec-path=/x"}, true},
		{"git", []string{"--exec"}, true},
		{"git", []string{"--upl=x"}, true},
		{"git", []string{"--oneline"}, false},
		{"git", []string{"--e"}, false},
		{"git", []string{"Difftool"}, true},
		{"git", []string{"EXT::sh"}, true},
		{"git", []string{"log", "-5"}, false},
		{"git", []string{"archive", "-o", "/home/u/.bashrc", "HEAD"}, true},
		{"git", []string{"format-patch", "-o", "/home/u/x"}, true},
		{"find", []string{"-exec"}, true},
		{"find", []string{"--exec"}, true},
		{"find", []string{"-executable"}, false},
		{"make", []string{"CC=x"}, true},
		{"make", []string{"--jobs=4"}, false},
		{"rg", []string{"--pre", "sh"}, true},
		{"rg", []string{"--pre-glob=*"}, true},
		{"rg", []string{"-n", "src"}, false},
		{"sort", []string{"--compress-program=sh"}, true},
		{"sort", []string{"-no", "out"}, true},
		{"sort", []string{"-n", "-k2"}, false},
		{"fd", []string{"-e", "go", "-x", "rm"}, true},
		{"fd", []string{"--exec-batch", "rm"}, true},
		{"fd", []string{"-e", "go"}, false},
		// Go's flags are words after one dash: -o (a built program written
		// where the model says, such as a folder on PATH) asks, and
		// -count=1 or -cover, which hold an o, do not.
		{"go", []string{"./...", "-o", "/home/u/.local/bin/ls"}, true},
		{"go", []string{"-o=/home/u/.local/bin/ls"}, true},
		{"go", []string{"--o", "x"}, true},
		{"go", []string{"-count=1", "-cover", "-json", "./..."}, false},
		{"vim", []string{"+!sh"}, true},
		{"GIT.EXE", []string{"-c"}, true},
		{"ls", []string{"-c"}, false},
	} {
		if _, got := risk.ArgAsks(c.program, c.args); got != c.asks {
			t.Errorf("%s %q: asks %v, want %v", c.program, c.args, got, c.asks)
		}
	}
	for _, name := range []string{"LANG", "lc_all", "LC_CTYPE", "TERM", "NO_COLOR"} {
		if !risk.IsHarmlessEnv(name) {
			t.Errorf("%s is not harmless", name)
		}
	}
	for _, name := range []string{"HOME", "PATH", "GIT_DIR", "LD_PRELOAD", "PAGER", "LANGX", "TERMINFO", "EDITOR"} {
		if risk.IsHarmlessEnv(name) {
			t.Errorf("%s is harmless", name)
		}
	}
	if risk.ProgramName(`C:\Program Files\Python312\python3.12.exe`) != "python" || risk.ProgramName("/usr/bin/git") != "git" {
		t.Error("program names")
	}
}

// Every program the tables name is known by that name, digits and all
// (rundll32 and regsvr32 were read as "rundll" and "regsvr", so no table
// covered them).
func TestTablesKnowTheirOwnNames(t *testing.T) {
	var names []string
	for _, g := range risk.AsksEveryTime {
		names = append(names, g.Programs...)
		for _, p := range g.Programs {
			if risk.AsksEveryTimeWhy(p+".exe") != g.Why {
				t.Errorf("%s.exe is not told as a program that %s", p, g.Why)
			}
		}
	}
	for _, r := range risk.ArgTable {
		names = append(names, r.Programs...)
		for _, p := range r.Programs {
			if !risk.RunsOthers(p) {
				t.Errorf("%s has no row in the argument table by its name", p)
			}
		}
	}
	for _, g := range risk.ExactOnly {
		names = append(names, g.Programs...)
		for _, p := range g.Programs {
			if risk.ExactOnlyWhy(p+".exe") != g.Why {
				t.Errorf("%s.exe is not told as a program that %s", p, g.Why)
			}
			// A row in the argument table would let arguments after
			// the card's through.
			if risk.RunsOthers(p) {
				t.Errorf("%s is covered only exactly, but has a row in the argument table", p)
			}
		}
	}
	for _, n := range names {
		if got := risk.ProgramName(n); got != n {
			t.Errorf("%s is named %s", n, got)
		}
	}
	if risk.ProgramName("python3.12") != "python" || risk.ProgramName(`C:\Windows\System32\RUNDLL32.EXE`) != "rundll32" {
		t.Error("versions are not trimmed, or table names with digits are")
	}
}

// Arguments a call adds after a rule's own: any asks for a program
// without a row in the argument table (cp's last argument may be a
// folder to copy into); for one with a row, only what the row lists.
func TestExtraArgumentsAskUnlessTheTableKnowsTheProgram(t *testing.T) {
	for _, c := range []struct {
		program string
		rest    []string
		asks    bool
	}{
		{"cp", nil, false},
		{"cp", []string{"/home/u/.config/autostart"}, true},
		{"ls", []string{"-la"}, true},
		{"sed", []string{"-e", "1e sh"}, true},
		{"tar", []string{"-C", "/home/u"}, true},
		{"git", []string{"--short"}, false},
		{"git", []string{"-c", "x=y"}, true},
		{"rg", []string{"src"}, false},
		{"rg", []string{"--pre", "sh"}, true},
	} {
		if _, got := risk.ExtraArgAsks(c.program, c.rest, 0); got != c.asks {
			t.Errorf("%s + %q: asks %v, want %v", c.program, c.rest, got, c.asks)
		}
	}
}

// A git call that sends or fetches asks for a place the card did not
// show: the repository argument cannot be told from a refspec by its
// shape, so after the subcommand every argument (and option value) must
// be a plain name.
func TestGitAsksForAnotherPlace(t *testing.T) {
	for _, c := range []struct {
		args  []string
		shown int
		asks  bool
	}{
		{[]string{"push"}, 1, false},
		{[]string{"push", "origin", "main"}, 1, false},
		{[]string{"push", "origin", "feature/x", "v1.2"}, 1, false},
		{[]string{"push", "--force-with-lease", "origin", "main"}, 1, false},
		{[]string{"fetch", "--all", "--prune"}, 1, false},
		{[]string{"pull", "--depth=1", "origin"}, 1, false},
		{[]string{"push", "https://example.org/x.git", "main"}, 1, true},
		{[]string{"push", "git@example.org:x/y.git"}, 1, true},
		{[]string{"push", "example.org:x.git", "HEAD"}, 1, true},
		{[]string{"push", "--repo=git@example.org:x.git"}, 1, true},
		{[]string{"push", "--repo", "example.org:x.git"}, 1, true},
		{[]string{"push", `\\server\share\x.git`}, 1, true},
		{[]string{"push", "//server/share/x.git"}, 1, true},
		{[]string{"push", "../elsewhere"}, 1, true},
		{[]string{"push", "~/elsewhere"}, 1, true},
		{[]string{"push", `C:\elsewhere`}, 1, true},
		{[]string{"fetch", "file:///home/u/other"}, 1, true},
		{[]string{"remote", "set-url", "origin", "example.org:x.git"}, 1, true},
		{[]string{"remote", "add", "other", "https://example.org/x.git"}, 2, true},
		{[]string{"send-email", "--to=me@example.org", "0001.patch"}, 2, true},
		{[]string{"-C", "sub", "push", "example.org:x"}, 3, true},
		// What the card showed is covered, address and all.
		{[]string{"push", "https://example.org/x.git", "main"}, 3, false},
		{[]string{"clone", "https://example.org/x.git"}, 2, false},
		// Other subcommands keep their own arguments: no place there.
		{[]string{"show", "HEAD@{1}:file.go"}, 1, false},
		{[]string{"commit", "-m", "fix: see https://example.org and a@b.c"}, 1, false},
		{[]string{"log", "--author=me@example.org"}, 1, false},
	} {
		if _, got := risk.ExtraArgAsks("git", c.args, c.shown); got != c.asks {
			t.Errorf("git %q (the card showed %d): asks %v, want %v", c.args, c.shown, got, c.asks)
		}
	}
}

// TestArgRunnerWhyByPlace: a launcher's name counts only where the call
// would run it (a command string's first word, an option's value, a
// path), a shell's or an interpreter's anywhere; a bare word such as
// start, open, time or env is text.
func TestArgRunnerWhyByPlace(t *testing.T) {
	for _, args := range [][]string{{"start"}, {"open"}, {"time"}, {"env"}, {"-n", "start", "now"}, {"xdg-open"}} {
		if a, why := risk.ArgRunnerWhy(args); why != "" {
			t.Errorf("%v: %q counted as a program the call runs (%s)", args, a, why)
		}
	}
	for _, args := range [][]string{{"-c", "0", "bash", "x.sh"}, {"env", "bash"}, {"-c", "env bash"}, {"--exec=env"},
		{"/usr/bin/env", "x"}, {`C:\Windows\System32\rundll32.exe`}, {"python3"}} {
		if a, why := risk.ArgRunnerWhy(args); why == "" {
			t.Errorf("%v: no argument counted as a program the call runs (%q)", args, a)
		}
	}
}
