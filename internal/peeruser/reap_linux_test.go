package peeruser

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A double-forked grandchild that exits is reaped by the subreaper within
// a second, while the exit codes of the commands this process runs and
// waits for itself stay right (run under -race).
func TestAdoptedOrphansAreReapedOwnChildrenKeepTheirStatus(t *testing.T) {
	if err := AdoptOrphans(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			code := i % 7
			err := exec.Command("sh", "-c", "exit "+strconv.Itoa(code)).Run()
			var ee *exec.ExitError
			switch {
			case code == 0 && err != nil:
				t.Errorf("exit 0: %v", err)
			case code != 0 && (!errors.As(err, &ee) || ee.ExitCode() != code):
				t.Errorf("exit %d: %v", code, err)
			}
		})
		if i%10 == 0 {
			// The grandchild outlives its parent, so it is adopted here.
			if err := exec.Command("sh", "-c", "sleep 0.2 & exit 0").Run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond) // the last grandchild exits
	deadline := time.Now().Add(time.Second)
	for {
		z := zombiesOf(os.Getpid())
		if len(z) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("zombies under this process a second after they exited: %v", z)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombiesOf lists the zombie children of pid, read from /proc.
func zombiesOf(pid int) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		fields := bytes.Fields(b[i+2:])
		if len(fields) < 2 || string(fields[0]) != "Z" || string(fields[1]) != strconv.Itoa(pid) {
			continue
		}
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		out = append(out, n)
	}
	return out
}
