package fsops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/startup"
)

// startupEngine is askEngine with a startup index of the test root as
// the home, looked at again only every refresh.
func startupEngine(t *testing.T, refresh time.Duration) testEnv {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the Linux start-up sources")
	}
	env := askEngine(t)
	x, err := startup.New(startup.Options{Env: func(k string) string {
		switch k {
		case "HOME":
			return env.root
		case "PATH":
			return "/usr/bin:/bin"
		}
		return ""
	}, Real: RealPrefix, Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	env.e.Startup = x
	return env
}

// TestOrdinaryWriteRefusedWhereTheStartupIndexNamesTheFile: a write
// admitted as ordinary (a workspace covered it) to a script an autostart
// entry runs is refused when the file is opened, nothing written, and
// the refusal says which entry runs it; a script nothing runs is written.
func TestOrdinaryWriteRefusedWhereTheStartupIndexNamesTheFile(t *testing.T) {
	env := startupEngine(t, 0)
	desk := env.path(".config", "autostart", "boot.desktop")
	if err := os.MkdirAll(filepath.Dir(desk), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(desk, []byte("[Desktop Entry]\nName=Morning boot\nExec=python3 ~/proj/boot.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(env.path("proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	boot := env.path("proj", "boot.py")
	_, err := env.e.Write(admittedInWorkspace(boot), "r:c", WriteInput{Path: boot, Data: "print('hi')\n"})
	var no *NotOrdinaryError
	if !errors.As(err, &no) || !strings.Contains(no.Place, "Morning boot") {
		t.Fatalf("a write of a script an autostart entry runs, admitted as ordinary: %v, want a refusal naming the entry", err)
	}
	if msg := mapErr("write", err).Error(); !strings.Contains(msg, "Morning boot") || strings.Contains(msg, "a link changed") {
		t.Errorf("the refusal says %q, want it to name the entry that runs the file", msg)
	}
	if _, serr := os.Stat(boot); serr == nil {
		t.Fatal("the refused write left the file")
	}
	other := env.path("proj", "other.py")
	if _, err := env.e.Write(admittedInWorkspace(other), "r:c", WriteInput{Path: other, Data: "print('hi')\n"}); err != nil {
		t.Fatalf("a script nothing runs: %v", err)
	}
}

// TestAChangeTheEngineMakesCountsAtOnce: after the engine writes a
// start-up file (an approved .bashrc change), the index names what it
// runs at the next check, not a refresh later.
func TestAChangeTheEngineMakesCountsAtOnce(t *testing.T) {
	env := startupEngine(t, time.Hour)
	late := env.path("proj", "late.py")
	if _, ok := env.e.Startup.Match(late); ok {
		t.Fatal("named before .bashrc runs it")
	}
	rc := env.path(".bashrc")
	if _, err := env.e.Write(context.Background(), "r:c", WriteInput{Path: rc, Data: "python3 ~/proj/late.py\n"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := env.e.Startup.Match(late); !ok {
		t.Fatal("the script .bashrc now runs is not named at the next check after Hearth wrote .bashrc")
	}
}

// TestAFileOperationCountsAtOnce: a start-up entry moved into place by a
// file operation (one item, or several at once) is named at the next
// check.
func TestAFileOperationCountsAtOnce(t *testing.T) {
	env := startupEngine(t, time.Hour)
	auto := env.path(".config", "autostart")
	if err := os.MkdirAll(auto, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"one", "two", "three"} {
		if err := os.WriteFile(env.path(n+".desktop"), []byte("[Desktop Entry]\nName="+n+"\nExec=python3 ~/proj/"+n+".py\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := env.e.Startup.Match(env.path("proj", n+".py")); ok {
			t.Fatalf("%s named before its entry is in place", n)
		}
	}
	if _, err := env.e.FileOp(context.Background(), "r:c", ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("one.desktop"), To: filepath.Join(auto, "one.desktop")}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := env.e.Startup.Match(env.path("proj", "one.py")); !ok {
		t.Fatal("a start-up entry moved into place is not named at the next check")
	}
	if _, err := env.e.FileOp(context.Background(), "r:c", ActionCopy, FileOpInput{Items: []FileOpItem{
		{From: env.path("two.desktop"), To: filepath.Join(auto, "two.desktop")},
		{From: env.path("three.desktop"), To: filepath.Join(auto, "three.desktop")}}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"two", "three"} {
		if _, ok := env.e.Startup.Match(env.path("proj", n+".py")); !ok {
			t.Fatalf("start-up entry %s copied into place with another is not named at the next check", n)
		}
	}
}
