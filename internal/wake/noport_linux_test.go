package wake

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoTCPDebuggingPort proves the window speaks CDP over the pipe only:
// it is started without --remote-debugging-port, none of its processes
// listens on a TCP socket, and no DevToolsActivePort file is written. A
// browser started with a debugging port is the control: the same check
// finds its socket.
func TestNoTCPDebuggingPort(t *testing.T) {
	r := newRig(t, t.TempDir(), false, fastSettings(), NewFakeChatGPT(t))
	r.open()
	pid := BrowserPidForTest(r.svc)
	if pid == 0 {
		t.Fatal("no browser pid")
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), "remote-debugging-port") || !strings.Contains(string(cmdline), "--remote-debugging-pipe") {
		t.Fatalf("browser arguments: %q", strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	// The browser is up and answering over the pipe: give it a tab.
	r.tab("about:blank")
	if socks := listeningSockets(t, pid); len(socks) != 0 {
		t.Fatalf("the browser's processes listen on TCP sockets %v", socks)
	}
	if _, err := os.Stat(filepath.Join(ProfileDirForTest(r.svc), "DevToolsActivePort")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("DevToolsActivePort exists (%v)", err)
	}

	// Control: the same check sees a debugging port when there is one.
	args := append([]string{"--remote-debugging-port=0", "--user-data-dir=" + t.TempDir()}, HeadlessArgs...)
	cmd := exec.Command(TestBrowser, append(args, "about:blank")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	waitFor(t, "the control browser's debugging port", func() bool { return len(listeningSockets(t, cmd.Process.Pid)) > 0 })
}

// listeningSockets returns the inodes of TCP sockets in LISTEN state held
// by pid or any of its descendants.
func listeningSockets(t *testing.T, pid int) []string {
	t.Helper()
	listening := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" {
				listening[fields[9]] = true
			}
		}
		fh.Close()
	}
	var out []string
	for _, p := range descendants(pid) {
		dir := "/proc/" + strconv.Itoa(p) + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			link, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			inode := strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")
			if listening[inode] {
				out = append(out, inode)
			}
		}
	}
	return out
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			parent[p] = pp
		}
	}
	out := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if containsInt(out, pp) && !containsInt(out, p) {
				out = append(out, p)
				changed = true
			}
		}
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
