package proc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv switches the test binary into a helper child. The tests run
// the test binary itself as the child so that they need no shell and run
// unchanged on Windows (and under Wine).
const helperEnv = "HEARTH_PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helper is the child side of the tests; args are pure data.
func helper(mode string, args []string) int {
	switch mode {
	case "args":
		if err := json.NewEncoder(os.Stdout).Encode(args); err != nil {
			return 2
		}
	case "env":
		fmt.Print(os.Getenv(args[0]))
	case "cwd":
		wd, err := os.Getwd()
		if err != nil {
			return 2
		}
		fmt.Print(wd)
	case "exit":
		n, _ := strconv.Atoi(args[0])
		return n
	case "spew": // spew OUT ERR: write OUT bytes to stdout, ERR to stderr
		out, _ := strconv.Atoi(args[0])
		errn, _ := strconv.Atoi(args[1])
		if spew(os.Stdout, 'o', out) != nil || spew(os.Stderr, 'e', errn) != nil {
			return 2
		}
	case "stdin":
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			return 2
		}
	case "sleep":
		time.Sleep(time.Hour)
	case "pidsleep": // pidsleep PIDFILE: record our pid, then sleep
		if writePID(args[0], os.Getpid()) != nil {
			return 2
		}
		time.Sleep(time.Hour)
	case "run-pidsleep": // run-pidsleep PIDFILE: Run a pidsleep child (as Hearth would) and wait for it
		if _, err := Run(context.Background(), helperSpec("pidsleep", args[0])); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	case "spawn": // spawn PIDFILE [exit]: start a sleeping grandchild that shares our stdout, record its pid, sleep or exit
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), helperEnv+"=sleep")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			return 2
		}
		if writePID(args[0], c.Process.Pid) != nil {
			return 2
		}
		fmt.Println("spawned")
		if len(args) > 1 && args[1] == "exit" {
			return 0
		}
		time.Sleep(time.Hour)
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	return 0
}

// writePID writes pid to file atomically, so a reader never sees it half
// written.
func writePID(file string, pid int) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

func spew(w io.Writer, c byte, n int) error {
	chunk := bytes.Repeat([]byte{c}, 32<<10)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// helperSpec runs the test binary as the helper in mode. GORACE keeps a
// race-enabled helper from sleeping a second before a successful exit.
func helperSpec(mode string, args ...string) Spec {
	return Spec{Command: os.Args[0], Args: args, Env: map[string]string{helperEnv: mode, "GORACE": "atexit_sleep_ms=0"}}
}

func run(t *testing.T, s Spec) Result {
	t.Helper()
	res, err := Run(t.Context(), s)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestArgvRoundTrip(t *testing.T) {
	args := []string{
		"", " ", "plain", "two words", `"quoted"`, `a"b"c`, `it's`, `\`, `back\slash`,
		`trailing\`, `trailing\\`, `\"`, `\\"`, `"`, "tab\there", "line1\nline2",
		"ünïcödé 日本語 🎉", "%PATH%", "$HOME", "&|<>^!;", "*?[a]", `C:\Program Files\x y\`,
		"-test.v", "--", "",
	}
	res := run(t, helperSpec("args", args...))
	if res.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	var got []string
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("decode child argv %q: %v", res.Stdout, err)
	}
	if !slices.Equal(got, args) {
		t.Errorf("argv did not round-trip\n got %q\nwant %q", got, args)
	}
}

func TestExitCode(t *testing.T) {
	res := run(t, helperSpec("exit", "3"))
	if res.ExitCode != 3 || res.TimedOut || res.Cancelled {
		t.Errorf("got exit %d timedOut %v cancelled %v, want exit 3", res.ExitCode, res.TimedOut, res.Cancelled)
	}
	if res.PID <= 0 || res.Path == "" {
		t.Errorf("PID %d Path %q: want both set", res.PID, res.Path)
	}
}

func TestMissingProgram(t *testing.T) {
	const name = "hearth-no-such-program-7f3a"
	_, err := Run(t.Context(), Spec{Command: name})
	if err == nil {
		t.Fatal("Run of a missing program succeeded")
	}
	if !strings.Contains(err.Error(), name) {
		t.Errorf("error %q does not name the command", err)
	}
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("error %q is not exec.ErrNotFound", err)
	}
}

func TestEmptyCommand(t *testing.T) {
	if _, err := Run(t.Context(), Spec{}); err == nil {
		t.Error("Run with no command succeeded")
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("HEARTH_PROC_TEST_OVERRIDE", "old")
	for _, tc := range []struct{ name, value string }{
		{"HEARTH_PROC_TEST_NEW", "välue with spaces=and equals"},
		{"HEARTH_PROC_TEST_OVERRIDE", "new"},
	} {
		s := helperSpec("env", tc.name)
		s.Env[tc.name] = tc.value
		if res := run(t, s); string(res.Stdout) != tc.value {
			t.Errorf("child saw %s=%q, want %q", tc.name, res.Stdout, tc.value)
		}
	}
}

func TestEnvRejectsBadNames(t *testing.T) {
	for _, k := range []string{"", "A=B", "NUL\x00"} {
		s := helperSpec("exit", "0")
		s.Env[k] = "x"
		if _, err := Run(t.Context(), s); err == nil {
			t.Errorf("Run accepted environment name %q", k)
		}
	}
}

func TestMergeEnv(t *testing.T) {
	base := []string{"Path=/a", "HOME=/h", "=C:=C:\\x", "lower=1"}
	got, err := mergeEnv(base, map[string]string{"PATH": "/b", "X": "y"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"HOME=/h", "=C:=C:\\x", "lower=1", "PATH=/b", "X=y"}; !slices.Equal(got, want) {
		t.Errorf("folded: got %q, want %q", got, want)
	}
	got, err = mergeEnv(base, map[string]string{"PATH": "/b", "lower": "2"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Path=/a", "HOME=/h", "=C:=C:\\x", "PATH=/b", "lower=2"}; !slices.Equal(got, want) {
		t.Errorf("case-sensitive: got %q, want %q", got, want)
	}
	if _, err := mergeEnv(base, map[string]string{"path": "1", "PATH": "2"}, true); err == nil {
		t.Error("folded merge accepted two spellings of one name")
	}
	if got, _ := mergeEnv(base, nil, true); got != nil {
		t.Errorf("no overrides: got %q, want nil (inherit)", got)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	s := helperSpec("cwd")
	s.Dir = dir
	res := run(t, s)
	got, err := os.Stat(string(res.Stdout))
	if err != nil {
		t.Fatalf("child cwd %q: %v", res.Stdout, err)
	}
	want, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(got, want) {
		t.Errorf("child cwd %q, want %q", res.Stdout, dir)
	}
}

func TestStdin(t *testing.T) {
	in := []byte("line one\nzwei ✓\n\x00binary\xff")
	s := helperSpec("stdin")
	s.Stdin = in
	if res := run(t, s); !bytes.Equal(res.Stdout, in) {
		t.Errorf("stdin echoed as %q, want %q", res.Stdout, in)
	}
	// Without Stdin the child reads EOF at once instead of waiting.
	s.Stdin = nil
	s.Timeout = 30 * time.Second
	if res := run(t, s); res.TimedOut || len(res.Stdout) != 0 {
		t.Errorf("nil Stdin: timedOut %v stdout %q", res.TimedOut, res.Stdout)
	}
}

func TestCaptureTruncates(t *testing.T) {
	s := helperSpec("spew", "300000", "70000")
	s.MaxCapture = 1000
	res := run(t, s)
	if len(res.Stdout) != 1000 || res.StdoutBytes != 300000 || !res.StdoutTruncated {
		t.Errorf("stdout: kept %d of %d, truncated %v; want 1000 of 300000, true", len(res.Stdout), res.StdoutBytes, res.StdoutTruncated)
	}
	if len(res.Stderr) != 1000 || res.StderrBytes != 70000 || !res.StderrTruncated {
		t.Errorf("stderr: kept %d of %d, truncated %v; want 1000 of 70000, true", len(res.Stderr), res.StderrBytes, res.StderrTruncated)
	}
	if !bytes.Equal(res.Stdout, bytes.Repeat([]byte("o"), 1000)) || !bytes.Equal(res.Stderr, bytes.Repeat([]byte("e"), 1000)) {
		t.Error("kept bytes are not the first bytes written")
	}
	if res.ExitCode != 0 {
		t.Errorf("exit %d: a child writing past the cap must not be disturbed", res.ExitCode)
	}
}

func TestCaptureExactAndDiscard(t *testing.T) {
	s := helperSpec("spew", "5000", "0")
	s.MaxCapture = 5000
	res := run(t, s)
	if len(res.Stdout) != 5000 || res.StdoutTruncated || res.StderrTruncated || res.StderrBytes != 0 {
		t.Errorf("cap equal to output: kept %d, truncated %v/%v", len(res.Stdout), res.StdoutTruncated, res.StderrTruncated)
	}
	s.MaxCapture = -1
	res = run(t, s)
	if len(res.Stdout) != 0 || res.StdoutBytes != 5000 || !res.StdoutTruncated {
		t.Errorf("negative cap: kept %d of %d, truncated %v; want 0 of 5000, true", len(res.Stdout), res.StdoutBytes, res.StdoutTruncated)
	}
}

// TestCaptureNeverBlocks: far more output than any pipe buffer, with a tiny
// cap, must flow to the end without stalling the child.
func TestCaptureNeverBlocks(t *testing.T) {
	s := helperSpec("spew", strconv.Itoa(16<<20), strconv.Itoa(16<<20))
	s.MaxCapture = 1024
	s.Timeout = time.Minute
	res := run(t, s)
	if res.TimedOut || res.ExitCode != 0 || res.StdoutBytes != 16<<20 || res.StderrBytes != 16<<20 {
		t.Errorf("timedOut %v exit %d totals %d/%d", res.TimedOut, res.ExitCode, res.StdoutBytes, res.StderrBytes)
	}
}

func TestTimeout(t *testing.T) {
	s := helperSpec("sleep")
	s.Timeout = 300 * time.Millisecond
	res := run(t, s)
	if !res.TimedOut || res.Cancelled || res.ExitCode != -1 {
		t.Errorf("timedOut %v cancelled %v exit %d; want true false -1", res.TimedOut, res.Cancelled, res.ExitCode)
	}
	if res.Duration > 10*time.Second {
		t.Errorf("Run took %v after a 300ms timeout", res.Duration)
	}
}

// TestTimeoutKillsTree: the child starts a grandchild that inherits its
// stdout; the timeout must kill both, and Run must not wait for the pipe
// the grandchild held.
func TestTimeoutKillsTree(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
	s := helperSpec("spawn", pidfile)
	s.Timeout = 3 * time.Second
	res := run(t, s)
	if !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("timedOut %v exit %d; want true -1", res.TimedOut, res.ExitCode)
	}
	if got := res.Duration - s.Timeout; got >= PipeGrace {
		t.Errorf("Run returned %v after the timeout: it waited for the grandchild's pipe", got)
	}
	if string(res.Stdout) != "spawned\n" {
		t.Errorf("stdout %q, want the child's line", res.Stdout)
	}
	assertGone(t, readPID(t, pidfile))
}

// TestCancelKillsTree: cancelling the context kills the tree the same way.
func TestCancelKillsTree(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(pidfile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := Run(ctx, helperSpec("spawn", pidfile))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("cancelled %v timedOut %v exit %d; want true false -1", res.Cancelled, res.TimedOut, res.ExitCode)
	}
	assertGone(t, readPID(t, pidfile))
}

// TestLeftoversKilledAfterExit: a child that exits leaving a grandchild
// behind, holding stdout, ends the run at once and takes the grandchild
// with it.
func TestLeftoversKilledAfterExit(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
	res := run(t, helperSpec("spawn", pidfile, "exit"))
	if res.ExitCode != 0 || res.TimedOut || string(res.Stdout) != "spawned\n" {
		t.Fatalf("exit %d timedOut %v stdout %q", res.ExitCode, res.TimedOut, res.Stdout)
	}
	if res.Duration >= PipeGrace {
		t.Errorf("Run took %v: it waited for the leftover's pipe", res.Duration)
	}
	assertGone(t, readPID(t, pidfile))
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Run(ctx, helperSpec("sleep")); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a dead context: err %v, want context.Canceled", err)
	}
}

func TestList(t *testing.T) {
	procs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(procs, func(p Info) bool { return p.PID == os.Getpid() })
	if i < 0 {
		t.Fatalf("List (%d processes) lacks our pid %d", len(procs), os.Getpid())
	}
	self := procs[i]
	if self.PPID != os.Getppid() {
		t.Errorf("our PPID %d, want %d", self.PPID, os.Getppid())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if self.Name == "" || !strings.EqualFold(filepath.Base(self.Exe), filepath.Base(exe)) {
		t.Errorf("our entry %+v: want a name and the image %s", self, exe)
	}
	if self.User == "" {
		t.Errorf("our entry %+v has no user", self)
	}
}

// TestKillTree: Kill with tree reaches a grandchild; without tree it does
// not.
func TestKillTree(t *testing.T) {
	for _, tree := range []bool{true, false} {
		t.Run(fmt.Sprintf("tree=%v", tree), func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
			child := exec.Command(os.Args[0], pidfile)
			child.Env = append(os.Environ(), helperEnv+"=spawn")
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			gpid := waitPID(t, pidfile)
			t.Cleanup(func() { _ = Kill(gpid, false) })
			if err := Kill(child.Process.Pid, tree); err != nil {
				t.Fatalf("Kill(%d, %v): %v", child.Process.Pid, tree, err)
			}
			if err := child.Wait(); err == nil {
				t.Error("killed child exited successfully")
			}
			if tree {
				assertGone(t, gpid)
			} else if !alive(gpid) {
				t.Errorf("Kill without tree also killed grandchild %d", gpid)
			}
		})
	}
}

func TestKillInvalidPID(t *testing.T) {
	for _, pid := range []int{0, -1} {
		if err := Kill(pid, true); err == nil {
			t.Errorf("Kill(%d) succeeded", pid)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in, text, enc string
	}{
		{"", "", "utf-8"},
		{"héllo ✓", "héllo ✓", "utf-8"},
		{"\xEF\xBB\xBFwith bom", "with bom", "utf-8"},
		{"\xFF\xFEh\x00\xe9\x00", "hé", "utf-16le"},
		{"cut \xE2\x9C", "cut \uFFFD", "utf-8"},           // a cap cut ✓ in half
		{"é then cut \xE2", "é then cut \uFFFD", "utf-8"}, // UTF-8 already seen
	} {
		text, enc := Decode([]byte(tc.in))
		if text != tc.text || enc != tc.enc {
			t.Errorf("Decode(%q) = %q, %q; want %q, %q", tc.in, text, enc, tc.text, tc.enc)
		}
	}
	// Not UTF-8: whatever the fallback, the text must be valid and the
	// encoding must not claim UTF-8.
	for _, in := range []string{"caf\xE9", "caf\xE9!", "\x80\x81\x82"} {
		text, enc := Decode([]byte(in))
		if enc == "utf-8" || !utf8Valid(text) || text == "" {
			t.Errorf("Decode(%q) = %q, %q", in, text, enc)
		}
	}
}

func TestBatchArgProblem(t *testing.T) {
	if err := batchArgProblem([]string{"install", "--save-dev", "left-pad", `C:\x y`, ""}); err != nil {
		t.Errorf("safe arguments refused: %v", err)
	}
	for _, a := range []string{"a&calc", `"`, "%PATH%", "x|y", "a^b", "!v!", "(", "a\nb"} {
		if err := batchArgProblem([]string{"ok", a}); err == nil || !strings.Contains(err.Error(), "argument 2") {
			t.Errorf("argument %q: err %v, want a refusal naming argument 2", a, err)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the child never recorded its grandchild: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

func waitPID(t *testing.T, file string) int {
	t.Helper()
	// The child may still be writing the file when it appears (on Windows
	// a read then fails with a sharing violation, or sees it empty): wait
	// until it holds a whole pid.
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(file)
		if err == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				return pid
			}
			last = fmt.Sprintf("pid file holds %q", b)
		} else {
			last = err.Error()
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the child never recorded its grandchild: %s", last)
	return 0
}

// assertGone waits briefly for pid to disappear: a killed process is
// removed asynchronously.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = Kill(pid, false)
			t.Fatalf("process %d survived the tree kill", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
