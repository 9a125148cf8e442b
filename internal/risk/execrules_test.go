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
		{"find", []string{"-exec"}, true},
		{"find", []string{"--exec"}, true},
		{"find", []string{"-executable"}, false},
		{"make", []string{"CC=x"}, true},
		{"make", []string{"--jobs=4"}, false},
		{"tar", []string{"cvIf"}, true},
		{"tar", []string{"czf"}, false},
		{"vim", []string{"+!sh"}, true},
		{"GIT.EXE", []string{"-c"}, true},
		{"ls", []string{"-c"}, false},
	} {
		if _, got := risk.ArgAsks(c.program, c.args, true); got != c.asks {
			t.Errorf("%s %q: asks %v, want %v", c.program, c.args, got, c.asks)
		}
	}
	if _, got := risk.ArgAsks("tar", []string{"cvIf"}, false); got {
		t.Error("tar's letters read in an argument that is not the first")
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
	for _, n := range names {
		if got := risk.ProgramName(n); got != n {
			t.Errorf("%s is named %s", n, got)
		}
	}
	if risk.ProgramName("python3.12") != "python" || risk.ProgramName(`C:\Windows\System32\RUNDLL32.EXE`) != "rundll32" {
		t.Error("versions are not trimmed, or table names with digits are")
	}
}
