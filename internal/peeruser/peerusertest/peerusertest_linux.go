package peerusertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Nobody is the account the foreign client runs as (uid and gid 65534).
const Nobody = 65534

// Answer is what the client got back: the HTTP status and body, or the
// error that stopped the request.
type Answer struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error,omitempty"`
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary builds testdata/peerclient once per test process into a
// directory every account may enter, and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command here: cannot build the peer client")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hearth-peerclient-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "peerclient")
		out, err := exec.Command("go", "build", "-o", buildPath, "github.com/hearth-dev/hearth/internal/peeruser/testdata/peerclient").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build peerclient: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Other returns the credential of another account (Nobody), or skips the
// test, saying why, when this process cannot start a process as it.
func Other(t testing.TB) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("starting a client as uid %d needs root (CAP_SETUID); this test runs as uid %d", Nobody, os.Geteuid())
	}
	return &syscall.Credential{Uid: Nobody, Gid: Nobody, NoSetGroups: true}
}

func command(t testing.TB, cred *syscall.Credential, args ...string) *exec.Cmd {
	cmd := exec.Command(Binary(t), args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

// Request sends one HTTP request from a client process running as cred
// (nil: this process's own account). Headers are "Name=value".
func Request(t testing.TB, cred *syscall.Credential, method, url, body string, headers ...string) Answer {
	t.Helper()
	args := append([]string{"request", method, url, body}, headers...)
	out, err := command(t, cred, args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("peer client %v: %v %s", cred, err, stderr)
	}
	var a Answer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("peer client answer %q: %v", out, err)
	}
	return a
}

// Hold connects to addr from a client process running as cred and keeps
// the connection open until the returned function is called; it returns
// the client's own address (as the client sees it).
func Hold(t testing.TB, cred *syscall.Credential, addr string) (clientAddr string, release func()) {
	t.Helper()
	return HoldN(t, cred, addr, 1)
}

// HoldN is Hold for n connections (their client ends live in the child's
// file table, not the caller's); it returns the last one's address.
func HoldN(t testing.TB, cred *syscall.Credential, addr string, n int) (clientAddr string, release func()) {
	t.Helper()
	cmd := command(t, cred, "hold", addr, strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the peer client: %v", err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			io.Copy(io.Discard, stdout)
			cmd.Wait()
		})
	}
	t.Cleanup(release)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		release()
		t.Fatalf("peer client hold %s: %v %s", addr, err, stderr.String())
	}
	return strings.TrimSpace(line), release
}
