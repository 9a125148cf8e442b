package govern_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/store"
)

// TestRulesFromBeforeNarrowToTheBareProgram: a rule with no arguments
// made before rules kept the card's arguments (before migration 0023, or
// a custom one before pins) covered git with any arguments — a
// checkout-index --prefix into the autostart folder too. Migration 0026
// narrows it to the bare program; a rule that kept its arguments stays
// as it was.
func TestRulesFromBeforeNarrowToTheBareProgram(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version > 23 {
			break
		}
		if _, err := raw.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	for _, q := range []string{`PRAGMA user_version = 23`,
		`INSERT INTO rules(id, program, cwd_root, interpreter, created_by, created_at) VALUES ('rul_old', 'git', '', 0, 'ada', 1)`,
		`INSERT INTO rules(id, program, args, cwd_root, interpreter, created_by, created_at) VALUES ('rul_status', 'git', '["status"]', '', 0, 'ada', 2)`} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rules, err := (&govern.Governor{DB: db}).Rules(ctx)
	if err != nil || len(rules) != 2 {
		t.Fatalf("rules after the migration: %+v %v", rules, err)
	}
	old, status := rules[0], rules[1]
	if !old.Narrowed || status.Narrowed || old.Pins != nil {
		t.Fatalf("narrowed: the old rule %v, the status rule %v; pins %+v", old.Narrowed, status.Narrowed, old.Pins)
	}
	if !govern.RuleAllows(old, govern.ProgramUse{Command: "git"}) {
		t.Error("the narrowed rule no longer covers the bare git")
	}
	for _, args := range [][]string{{"log"}, {"checkout-index", "--prefix=/home/u/.config/autostart/", "-a"}} {
		if govern.RuleAllows(old, govern.ProgramUse{Command: "git", Args: args}) {
			t.Errorf("the narrowed rule covers git %v", args)
		}
	}
	if !govern.RuleAllows(status, govern.ProgramUse{Command: "git", Args: []string{"status", "--short"}}) {
		t.Error("a rule that kept its arguments no longer covers its call")
	}
}

// TestArgumentNamingAShellIsCoveredByNoRule: a rule covers no call whose
// arguments name a shell, an interpreter or a launcher — by its name as
// an argument or the first word of one (`sg grp -c "bash x.sh"`), or by
// what the file is (a copy of bash saved as ./tool), wherever it appears.
func TestArgumentNamingAShellIsCoveredByNoRule(t *testing.T) {
	dir := t.TempDir()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	b, err := os.ReadFile(bash)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tool"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"bash", "x.sh"}, {"grp", "-c", "bash x.sh"}, {"--shell=/bin/sh"}, {"-n", "./tool", "x.sh"}} {
		r := govern.Rule{Program: "echo", Args: args, CwdRoot: dir}
		if govern.RuleAllows(r, govern.ProgramUse{Command: "echo", Args: args, Cwd: dir}) {
			t.Errorf("a rule for echo %v covers its call", args)
		}
	}
	// ./tool is told by what the file is, not by a pin.
	if arg, why := (&govern.Governor{}).ArgRunnerWhy([]string{"-n", "./tool", "x.sh"}, dir); arg != "./tool" || !strings.Contains(why, "copy of bash") {
		t.Errorf("a copy of bash as ./tool in the arguments: %q %q", arg, why)
	}
	plain := []string{"-n", "hello"}
	if !govern.RuleAllows(govern.Rule{Program: "echo", Args: plain, CwdRoot: dir}, govern.ProgramUse{Command: "echo", Args: plain, Cwd: dir}) {
		t.Error("a rule for echo -n hello no longer covers its call")
	}
}

// TestLauncherWordIsNotALauncher: a word that names a launcher (start,
// open, time, env) is text to a program that does not run its arguments,
// so a rule for `echo start` may be made and covers its call; a launcher
// where the call would run it, and a shell anywhere, still leave the call
// under no rule, and a launcher program is refused a rule whatever its
// arguments.
func TestLauncherWordIsNotALauncher(t *testing.T) {
	in := hearthtest.Start(t, nil)
	dir := t.TempDir()
	for _, w := range []string{"start", "open", "time", "env"} {
		args := []string{w}
		if _, err := in.App.Operator.AddRule(context.Background(), "alice", "echo", dir, args...); err != nil {
			t.Errorf("a rule for echo %s: %v", w, err)
		}
		if !govern.RuleAllows(govern.Rule{Program: "echo", Args: args, CwdRoot: dir}, govern.ProgramUse{Command: "echo", Args: args, Cwd: dir}) {
			t.Errorf("a rule for echo %s does not cover its call", w)
		}
	}
	for _, c := range [][]string{{"taskset", "-c", "0", "bash", "x.sh"}, {"nice", "env", "bash"}, {"echo", "env", "bash"},
		{"grp", "-c", "env bash"}, {"grp", "--exec=env"}} {
		if _, err := in.App.Operator.AddRule(context.Background(), "alice", c[0], dir, c[1:]...); !errors.Is(err, govern.ErrAsksEveryTime) {
			t.Errorf("a rule for %v: %v", c, err)
		}
	}
}
