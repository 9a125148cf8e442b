package tunnel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// These tests run the Windows containment for real (under Wine in CI:
// scripts/test-windows ./internal/tunnel/). There is no go command there
// to build testdata/faketunnel, so the test binary itself plays a minimal
// tunnel-client (selfFake).

var procIsProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// selfClient makes the test binary the tunnel-client of this test.
func selfClient(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(selfFakeEnv, "1")
	return exe
}

// inJob reports whether pid runs inside some Job Object.
func inJob(t *testing.T, pid int) bool {
	t.Helper()
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		t.Fatalf("open process %d: %v", pid, err)
	}
	defer windows.CloseHandle(h)
	var result int32
	if r, _, err := procIsProcessInJob.Call(uintptr(h), 0, uintptr(unsafe.Pointer(&result))); r == 0 {
		t.Fatalf("IsProcessInJob: %v", err)
	}
	return result != 0
}

func TestWindowsReadyInJobAndStop(t *testing.T) {
	key := testKey(t)
	s, _, logs := newSupervisor(t, selfClient(t), testTunnelID, key)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 60*time.Second, stateIs(StateReady))
	if !inJob(t, st.PID) {
		t.Error("tunnel-client does not run in a Job Object")
	}
	started := time.Now()
	s.Stop()
	stopped := time.Since(started)
	waitDead(t, st.PID, "tunnel-client")
	log := readLog(s)
	if !strings.Contains(log, "key_set=true") {
		t.Errorf("the child did not get the key in its environment:\n%s", log)
	}
	switch {
	case strings.Contains(log, "self fake: graceful stop"):
		t.Logf("graceful stop through CTRL_BREAK_EVENT took %s", stopped)
	case strings.Contains(log, "graceful stop failed"):
		// Wine's console support may not deliver the event to a process
		// attached to another console; the kill after it still stops the
		// child, which is what this test must prove.
		t.Logf("CTRL_BREAK_EVENT could not be delivered here; killed instead:\n%s", log)
	default:
		t.Logf("the child was killed after the grace period (%s)", stopped)
	}
	scanForKey(t, s.dataDir, key)
	if strings.Contains(logs.String(), key) {
		t.Error("Hearth's own log holds the key")
	}
}

func TestWindowsStopKillsHangingTree(t *testing.T) {
	childPID := filepath.Join(t.TempDir(), "child.pid")
	client := selfClient(t)
	t.Setenv("FAKE_TUNNEL_HANG_ON_STOP", "1")
	t.Setenv("FAKE_TUNNEL_CHILD_PID", childPID)
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	s.t.stopGrace = time.Second
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 60*time.Second, stateIs(StateReady))
	b, err := os.ReadFile(childPID)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(grandchild) || !inJob(t, grandchild) {
		t.Fatal("the grandchild is not running inside the job")
	}
	s.Stop()
	waitDead(t, st.PID, "tunnel-client")
	waitDead(t, grandchild, "tunnel-client's child")
}

// TestWindowsDiesWithHearth: the self fake ignores stdin, so only the Job
// Object's kill-on-close can end it when its Hearth is killed outright.
func TestWindowsDiesWithHearth(t *testing.T) {
	client := selfClient(t)
	helper, pid := startHelper(t, client)
	if !alive(pid) || !inJob(t, pid) {
		t.Fatal("tunnel-client is not running inside a job")
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	waitDead(t, pid, "tunnel-client of a killed Hearth")
}

// TestWindowsPinnedClientHeldUntilStarted: between the hash of the pinned
// file and the start of the child, Hearth's handle keeps anyone from
// renaming another file over it or writing into it, and CreateProcess
// still runs it.
func TestWindowsPinnedClientHeldUntilStarted(t *testing.T) {
	self := selfClient(t)
	client := copyClient(t, self, "")
	planted := copyClient(t, self, "planted")
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	var renameErr, writeErr error
	s.seams.beforeExec = func() {
		renameErr = os.Rename(planted, client)
		f, err := os.OpenFile(client, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		writeErr = err
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 60*time.Second, stateIs(StateReady))
	if renameErr == nil || writeErr == nil {
		t.Errorf("the pinned file could be swapped while Hearth held it: rename %v, write %v", renameErr, writeErr)
	}
	if err := s.VerifyClient(); err != nil {
		t.Errorf("the pinned file changed: %v", err)
	}
}

// TestWindowsPlantedClientRefused: a file with another hash renamed over
// the pinned one is not started.
func TestWindowsPlantedClientRefused(t *testing.T) {
	self := selfClient(t)
	client := copyClient(t, self, "")
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	plant(t, self, client, "planted")
	if err := s.Start(context.Background()); !errors.Is(err, ErrClientChanged) {
		t.Fatalf("Start of a planted client: %v", err)
	}
	if st := s.Status(); st.State != StateClientChanged || st.PID != 0 || s.Running() {
		t.Errorf("status = %+v", st)
	}
}

// holdUnshared opens path without sharing it, as a backup tool or an
// antivirus scan may; the returned function releases it.
func holdUnshared(t *testing.T, path string) func() {
	t.Helper()
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	release := sync.OnceFunc(func() { windows.CloseHandle(h) })
	t.Cleanup(release)
	return release
}

// TestWindowsSharingViolationRetries: another program holding the pinned
// file open without sharing it is a sharing violation, not a change: the
// start waits in backoff with the error shown, and tunnel-client starts
// once the file is released.
func TestWindowsSharingViolationRetries(t *testing.T) {
	client := copyClient(t, selfClient(t), "")
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	release := holdUnshared(t, client)
	if err := s.VerifyClient(); !errors.Is(err, ErrClientUnreadable) || !errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
		t.Fatalf("VerifyClient of a held file: %v", err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start while the file is held: %v", err)
	}
	st := waitFor(t, s, "backoff on the held file", 60*time.Second, func(st Status) bool {
		return st.State == StateBackoff && strings.Contains(st.LastError, client)
	})
	if !s.Running() || st.PID != 0 {
		t.Errorf("while held: %+v, running %v", st, s.Running())
	}
	release()
	waitFor(t, s, "ready once released", 60*time.Second, stateIs(StateReady))
}

// processImage is the full path of pid's executable.
func processImage(t *testing.T, pid int) string {
	t.Helper()
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		t.Fatalf("open process %d: %v", pid, err)
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		t.Fatalf("image of process %d: %v", pid, err)
	}
	return windows.UTF16ToString(buf[:n])
}

// TestWindowsExecPathIsFinal: what Hearth starts is the final path of
// its open, hashed handle, without the \\?\ prefix, naming the same file.
func TestWindowsExecPathIsFinal(t *testing.T) {
	client := copyClient(t, selfClient(t), "")
	f, err := openExclusive(client)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := execPath(f, client)
	if err != nil || strings.HasPrefix(p, `\\?\`) || !samePath(p, client) {
		t.Fatalf("execPath = %q, %v; want the plain final path of %s", p, err, client)
	}
	for in, want := range map[string]string{
		`\\?\C:\Tools\tunnel-client.exe`:         `C:\Tools\tunnel-client.exe`,
		`\\?\UNC\server\share\tunnel-client.exe`: `\\server\share\tunnel-client.exe`,
		`C:\Tools\tunnel-client.exe`:             `C:\Tools\tunnel-client.exe`,
		`\\?\C:\` + strings.Repeat("a", 300):     `\\?\C:\` + strings.Repeat("a", 300),
	} {
		if got := plainPath(in); got != want {
			t.Errorf("plainPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWindowsRunsFinalPath: Hearth starts the final path of its open,
// hashed handle, not the pinned path again: a directory link in the
// pinned path re-pointed between the hash and the start does not change
// what runs. (Wine 8 creates directory links it cannot resolve; the test
// skips there.)
func TestWindowsRunsFinalPath(t *testing.T) {
	self := selfClient(t)
	realDir, otherDir := t.TempDir(), t.TempDir()
	real := filepath.Join(realDir, ClientName())
	if b, err := os.ReadFile(self); err != nil || os.WriteFile(real, b, 0o700) != nil {
		t.Fatal("copy the client", err)
	}
	plant(t, self, filepath.Join(otherDir, ClientName()), "planted")

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(realDir, link); err != nil {
		t.Skipf("no directory links here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(link, ClientName())); err != nil {
		t.Skipf("directory links do not resolve here (Wine): %v", err)
	}
	s, _, _ := newSupervisor(t, filepath.Join(link, ClientName()), testTunnelID, testKey(t))
	var repointed error
	s.seams.beforeExec = func() {
		if repointed = os.Remove(link); repointed == nil {
			repointed = os.Symlink(otherDir, link)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 60*time.Second, stateIs(StateReady))
	if repointed != nil {
		t.Skipf("the link could not be re-pointed here: %v", repointed)
	}
	if image := processImage(t, st.PID); !samePath(image, real) {
		t.Errorf("tunnel-client runs from %s, not the hashed %s", image, real)
	}
}
