package jobs_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/jobs"
)

func TestCancelRunningJobKillsTree(t *testing.T) {
	e := newEnv(t, envOpts{})
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ids := e.submit(route,
		sh(`sleep 60 & echo $! > "$0"; wait`, pidFile),
		with(sh("true"), "dependencies", []any{0}),
	)
	e.waitState(route, ids[0], jobs.StateRunning)
	var grandchild int
	deadline := time.Now().Add(10 * time.Second)
	for grandchild == 0 {
		b, _ := os.ReadFile(pidFile)
		grandchild, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if time.Now().After(deadline) {
			t.Fatal("child never wrote its pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	out := e.call(route, map[string]any{"operation": "cancel", "id": ids[0]})
	if get(out, "result.cancelled") != true || get(out, "result.job.state") != "cancelled" {
		t.Fatalf("cancel: %v", out)
	}
	t.Logf("cancel of a running job answered in %v", time.Since(start))
	if err := syscall.Kill(grandchild, 0); err == nil {
		// A zombie not yet reaped by init still answers kill(0); check state.
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(grandchild), "stat"))
		if !strings.Contains(string(b), ") Z") {
			t.Fatalf("grandchild %d survived the cancel: %s", grandchild, b)
		}
	}
	if dep := e.wait(route, ids[1]); dep.State != jobs.StateBlocked {
		t.Fatalf("dependent of a cancelled job: %s", dep.State)
	}
}
