//go:build !windows

package govern_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// treeScript starts a background sleep, writes its pid and then the
// shell's own pid to the file given as $1, and waits: a process tree of
// two whose members a test can check.
const treeScript = `sleep 30 & echo $! > "$1"; echo $$ >> "$1"; wait`

// treePids waits (bounded) until treeScript has written both pids.
func treePids(t *testing.T, pidfile string) []int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidfile)
		if f := strings.Fields(string(b)); len(f) == 2 && strings.HasSuffix(string(b), "\n") {
			pids := make([]int, 2)
			for i, s := range f {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("pidfile %q: %v", b, err)
				}
				pids[i] = n
			}
			return pids
		}
	}
	t.Fatal("the process tree never wrote its pids")
	return nil
}

// processAlive reports whether pid exists and is not a zombie: a killed
// grandchild is reparented and may stay a zombie where the reaper (PID 1
// in a container) never reaps it; it is dead all the same.
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no procfs here: kill(pid, 0) succeeded
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// assertTreeDies fails unless every pid is gone within ten seconds.
func assertTreeDies(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d of the tree still runs after the e-stop", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
