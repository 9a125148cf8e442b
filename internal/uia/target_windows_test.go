package uia

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestTargetNamesTheApp: ui.action's target names the program of the
// process it is scoped to, and marks a console as one.
func TestTargetNamesTheApp(t *testing.T) {
	s := &Service{}
	tg, err := s.target(context.Background(), "", []byte(`{"process_id":`+strconv.Itoa(os.Getpid())+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(tg.App, ".exe") || tg.App != strings.ToLower(tg.App) || tg.Console {
		t.Fatalf("own process: %+v", tg)
	}
	cmd := exec.Command("cmd.exe", "/c", "ping -n 30 127.0.0.1 >NUL")
	if err := cmd.Start(); err != nil {
		t.Skipf("no cmd.exe here: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	tg, err = s.target(context.Background(), "", []byte(`{"process_id":`+strconv.Itoa(cmd.Process.Pid)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if tg.App != "cmd.exe" || !tg.Console {
		t.Fatalf("cmd.exe: %+v", tg)
	}
	if tg, _ := s.target(context.Background(), "", []byte(`{}`)); tg.App != "" {
		t.Fatalf("a desktop-wide call names an app: %+v", tg)
	}
}
