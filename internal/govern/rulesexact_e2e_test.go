//go:build !windows

package govern_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// A rule the operator makes from a card covers the call the card showed.
// These are the ways a model that controls the calls went past that: an
// argument added after the card's that names a program to run or a file
// to write, and the same program started as an interactive session.

// TestSearchAndSortRulesCoverNoProgramToRun: under "always allow rg
// TODO" and "always allow sort notes.txt" in a project, rg's --pre (a
// program run on every file searched) and sort's --compress-program (a
// program the data is piped to) ask: with "sh" as that program, a text
// file the model wrote without a card would run as a script.
func TestSearchAndSortRulesCoverNoProgramToRun(t *testing.T) {
	in, home := askHome(t)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(home, "ran")
	cl := hearthtest.Connect(t, in.URL, "review-rg-sort")
	// A text file, as ordinary as any: sort spills it to its compress
	// program in chunks, rg hands it to its preprocessor whole.
	script := "touch " + marker + " # TODO\n" + strings.Repeat(": TODO\n", 3000)
	if r := cl.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(proj, "notes.txt"), "data": script}); r.State() != "completed" {
		t.Fatalf("ordinary write: %s", r.Raw)
	}
	exec1 := func(args ...string) map[string]any {
		return map[string]any{"operation": "exec", "command": args[0], "args": args[1:], "cwd": proj}
	}
	for _, c := range []struct {
		rule   []string
		attack []string
	}{
		{[]string{"rg", "TODO"}, []string{"rg", "TODO", "--pre", "sh"}},
		{[]string{"sort", "notes.txt"}, []string{"sort", "notes.txt", "-S", "1k", "--compress-program=sh", "-o", os.DevNull}},
	} {
		if _, err := exec.LookPath(c.rule[0]); err != nil {
			t.Logf("no %s here", c.rule[0])
			continue
		}
		os.Remove(marker)
		r := cl.Call("machine", exec1(c.rule...))
		if r.State() != "pending" {
			t.Fatalf("%v before any rule: %s", c.rule, r.Raw)
		}
		if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", &govern.Rule{Program: c.rule[0], Args: c.rule[1:], CwdRoot: proj}); err != nil {
			t.Fatal(err)
		}
		r = cl.Call("machine", exec1(c.attack...))
		if r.State() != "pending" {
			t.Errorf("%v ran under the rule for %v with no permit: %s", c.attack, c.rule, r.State())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%v ran the model's notes.txt as a script", c.attack)
		}
	}
}

// TestWritingProgramRuleCoversOnlyTheCardsCall: under "always allow sort
// notes.txt" and "always allow cp app.desktop app.bak", an argument the
// card did not show that names another output (sort's -o, a folder as
// cp's last argument) asks: otherwise the model writes a shell start-up
// file or an autostart entry, which fs.write would have asked for.
func TestWritingProgramRuleCoversOnlyTheCardsCall(t *testing.T) {
	in, home := askHome(t)
	proj := filepath.Join(home, "proj")
	autostart := filepath.Join(home, ".config", "autostart")
	for _, d := range []string{proj, autostart} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cl := hearthtest.Connect(t, in.URL, "review-rule-writes")
	entry := "[Desktop Entry]\nType=Application\nName=x\nExec=sh -c 'touch " + filepath.Join(home, "ran") + "'\n"
	if r := cl.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(proj, "notes.txt"), "data": entry}); r.State() != "completed" {
		t.Fatalf("ordinary write of notes.txt: %s", r.Raw)
	}
	// A launcher is not a document (its write asks): it is there
	// already.
	if err := os.WriteFile(filepath.Join(proj, "app.desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rule, attack []string
		planted      string
	}{
		{[]string{"sort", "notes.txt"}, []string{"sort", "notes.txt", "-o", filepath.Join(home, ".bash_aliases")}, filepath.Join(home, ".bash_aliases")},
		{[]string{"cp", "app.desktop", "app.bak"}, []string{"cp", "app.desktop", "app.bak", autostart}, filepath.Join(autostart, "app.desktop")},
	} {
		call := func(args []string) map[string]any {
			return map[string]any{"operation": "exec", "command": args[0], "args": args[1:], "cwd": proj}
		}
		r := cl.Call("machine", call(c.rule))
		if r.State() != "pending" {
			t.Fatalf("%v before any rule: %s", c.rule, r.Raw)
		}
		if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", &govern.Rule{Program: c.rule[0], Args: c.rule[1:], CwdRoot: proj}); err != nil {
			t.Fatal(err)
		}
		if r := cl.Call("machine", call(c.attack)); r.State() != "pending" {
			t.Errorf("%v ran under the rule for %v with no permit: %s", c.attack, c.rule, r.State())
		}
		if _, err := os.Stat(c.planted); err == nil {
			t.Errorf("%v wrote %s, a persistence place, with no permit", c.attack, c.planted)
		}
	}
}

// TestSessionStartAsksUnderARule: no rule covers machine.session_start.
// What is typed into a session needs no permit, and an interactive
// program reaches a shell: under "always allow git log", git log started
// on a pseudo-terminal pipes to less, and "!command" typed into less
// runs the command. The session asks for a permit.
func TestSessionStartAsksUnderARule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	in, home := askHome(t)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	msg := "A long history\n\n" + strings.Repeat("a line of the message\n", 200)
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit", "-q", "--allow-empty", "-m", msg}} {
		if out, err := exec.Command("git", append([]string{"-C", proj}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	cl := hearthtest.Connect(t, in.URL, "review-session-pager")
	r := cl.Call("machine", map[string]any{"operation": "exec", "command": "git", "args": []string{"log"}, "cwd": proj})
	if r.State() != "pending" {
		t.Fatalf("git log before any rule: %s", r.Raw)
	}
	if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", &govern.Rule{Program: "git", Args: []string{"log"}, CwdRoot: proj}); err != nil {
		t.Fatal(err)
	}
	r = cl.Call("machine", map[string]any{"operation": "session_start", "command": "git", "args": []string{"log"}, "cwd": proj})
	if r.State() == "pending" {
		if r.Get("permit_id") == nil {
			t.Fatalf("pending with no permit: %s", r.Raw)
		}
		return
	}
	if r.State() != "completed" {
		t.Fatalf("git log as a session: %s", r.Raw)
	}
	t.Errorf("git log started as an interactive session under the rule for git log, with no permit")
	// What that lets the model do: less, git's pager on a terminal, runs
	// "!command" in a shell.
	res, _ := r.Get("result").(map[string]any)
	sid, _ := res["session_id"].(string)
	// less may first say the terminal is not fully functional; RETURN
	// goes on, and !command runs the command either way.
	cl.Call("machine", map[string]any{"operation": "session_read", "session_id": sid, "wait_ms": 5000, "until": "RETURN"})
	marker := filepath.Join(home, "ran")
	cl.Call("machine", map[string]any{"operation": "session_send", "session_id": sid, "text": "!touch " + marker, "keys": []string{"Enter"}})
	cl.Call("machine", map[string]any{"operation": "session_read", "session_id": sid, "wait_ms": 3000, "until": "done"})
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("typing !touch into git log's pager ran a command with no permit")
	}
	cl.Call("machine", map[string]any{"operation": "session_close", "session_id": sid})
}
