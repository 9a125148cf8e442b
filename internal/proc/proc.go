// Package proc runs child processes boundedly and kills whole process trees.
//
// Everything Hearth executes on behalf of a client goes through Run: the
// program is started directly from an argv (never through a shell, so no
// client string is ever parsed as shell syntax), its output is captured up
// to a hard cap without ever blocking the child, and a timeout or a
// cancelled context kills the child together with everything it spawned.
// On Windows the child runs in a Job Object created with kill-on-close,
// and nothing it starts can outlive Run. On Unix the child leads its own
// process group; a timeout kills that group plus any descendant that left
// it (found by walking the process table), and a normal exit kills what
// is left of the group. A Unix process that left the group (setsid) and
// is no longer a descendant when the kill comes is beyond reach; it cannot
// hold Run hostage either, because the pipes are force-closed after
// PipeGrace.
//
// On Linux the direct child also gets a parent-death signal (SIGKILL), so
// it does not outlive a Hearth that was killed outright; see startCmd in
// spawn_linux.go for how that is kept from firing early and what it does
// not cover.
//
// The package makes no policy decisions: which programs may run and which
// processes may be killed is decided by the caller.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// DefaultMaxCapture is the per-stream capture cap used when Spec.MaxCapture
// is zero. A zero Spec must still be bounded: an unbounded default would let
// one chatty child exhaust Hearth's memory.
const DefaultMaxCapture = 1 << 20

// PipeGrace is how long Run waits for the child's output pipes to reach EOF
// after the child has exited or been killed. The pipes stay open as long as
// any process holds their write ends; a process that escaped the tree kill
// (a Unix daemon that called setsid) may hold them forever, so after this
// grace Run closes its ends and returns with what it has.
const PipeGrace = 2 * time.Second

// ErrNotFound reports that no process has the given pid.
var ErrNotFound = errors.New("no such process")

// errTimeout is the context cause Run sets for Spec.Timeout, so that an
// expired timeout can be told apart from a cancelled parent context.
var errTimeout = errors.New("process timeout")

// Spec describes one child process.
type Spec struct {
	// Command is the program. A name without a path separator is looked up
	// in PATH (exec.LookPath semantics: Hearth's own PATH, not Env's, and
	// never the current directory); a relative path with a separator is
	// relative to Dir. It is never run through a shell.
	Command string
	// Args is the argv after the program. On Windows the Go runtime quotes
	// each element (syscall.EscapeArg) so the child's argv parser sees
	// exactly these strings; Hearth never builds a command line itself.
	Args []string
	// Dir is the working directory; "" inherits Hearth's.
	Dir string
	// Env holds entries added to or overriding os.Environ(). Keys compare
	// case-insensitively on Windows, as the OS does, so "path" replaces
	// "Path" rather than producing two conflicting entries.
	Env map[string]string
	// Timeout bounds the run; 0 (or negative) means no timeout, though the
	// context passed to Run still applies.
	Timeout time.Duration
	// MaxCapture is the hard cap of bytes kept per stream. Bytes beyond it
	// are counted and discarded; the child is never blocked. 0 means
	// DefaultMaxCapture; a negative value keeps nothing and only counts.
	MaxCapture int64
	// Stdin, when non-nil, is written to the child's standard input, which
	// is then closed. When nil the child reads from the null device, so a
	// program that prompts sees EOF instead of waiting forever.
	Stdin []byte
}

// Result describes how a child process ended.
type Result struct {
	// Path is the program actually executed, after PATH lookup.
	Path string
	PID  int
	// ExitCode is the child's exit status, or -1 when it was killed (by Run
	// or by a signal) rather than exiting on its own.
	ExitCode int

	Stdout, Stderr []byte
	// StdoutBytes and StderrBytes count everything the child wrote,
	// including what was discarded beyond MaxCapture.
	StdoutBytes, StderrBytes         int64
	StdoutTruncated, StderrTruncated bool

	// TimedOut reports that Spec.Timeout expired and the tree was killed.
	TimedOut bool
	// Cancelled reports that the caller's context ended and the tree was
	// killed.
	Cancelled bool
	Duration  time.Duration
}

// InputError is a Spec that Run refuses before starting anything (an
// environment entry or an argument that cannot be passed safely), its
// Reason in Hearth's own words, fit to show as it is.
type InputError struct{ Reason string }

func (e *InputError) Error() string { return e.Reason }

// Run starts s and waits for it to end. It returns an error only when the
// child could not be started (the error names the command) — which
// includes ctx ending, or Timeout expiring, before the start completed
// (the error then wraps ctx.Err()); a non-zero exit, a timeout or a
// cancellation of a started child are reported in Result.
//
// When the child exits, anything it left running in its process group (Unix)
// or Job Object (Windows) is killed, so a run is bounded in space as well as
// in time.
func Run(ctx context.Context, s Spec) (Result, error) {
	if s.Command == "" {
		return Result{}, errors.New("start process: empty command")
	}
	env, err := mergeEnv(os.Environ(), s.Env, runtime.GOOS == "windows")
	if err != nil {
		return Result{}, fmt.Errorf("start %q: %w", s.Command, err)
	}

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if s.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, s.Timeout, errTimeout)
	}
	defer cancel()

	limit := s.MaxCapture
	if limit == 0 {
		limit = DefaultMaxCapture
	}
	stdout, stderr := &capture{limit: limit}, &capture{limit: limit}

	g, err := newGroup()
	if err != nil {
		return Result{}, fmt.Errorf("start %q: %w", s.Command, err)
	}

	cmd := exec.CommandContext(runCtx, s.Command, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = env
	if s.Stdin != nil {
		cmd.Stdin = bytes.NewReader(s.Stdin)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = g.sysProcAttr()
	// killed records that Cancel really killed something, which is what
	// TimedOut and Cancelled report; a context that ends just after the
	// child exited on its own is not a kill.
	var killed atomic.Bool
	cmd.Cancel = func() error {
		err := g.kill(cmd.Process)
		if err == nil {
			killed.Store(true)
		}
		return err
	}
	// WaitDelay bounds both the wait for the child to die after Cancel and
	// the wait for its pipes to drain after it exited: without it a
	// grandchild that inherited stdout would keep Wait blocked forever.
	cmd.WaitDelay = PipeGrace

	start := time.Now()
	if err := startCmd(runCtx, cmd); err != nil {
		g.close()
		if errors.Is(context.Cause(runCtx), errTimeout) && errors.Is(err, context.DeadlineExceeded) {
			return Result{}, fmt.Errorf("start %q: timeout of %v ended before the process could start: %w", s.Command, s.Timeout, err)
		}
		return Result{}, fmt.Errorf("start %q: %w", s.Command, err)
	}
	if err := g.started(cmd); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		g.close()
		return Result{}, fmt.Errorf("start %q: %w", s.Command, err)
	}
	// Wait's error is redundant with ProcessState (exit status), killed
	// (Cancel) and the pipe grace, none of which is a failure to start.
	_ = cmd.Wait()
	g.close()
	res := Result{
		Path:     cmd.Path,
		PID:      cmd.Process.Pid,
		ExitCode: exitCode(cmd.ProcessState, killed.Load()),
		Duration: time.Since(start),
	}
	res.Stdout, res.StdoutBytes, res.StdoutTruncated = stdout.result()
	res.Stderr, res.StderrBytes, res.StderrTruncated = stderr.result()
	if killed.Load() {
		if errors.Is(context.Cause(runCtx), errTimeout) {
			res.TimedOut = true
		} else {
			res.Cancelled = true
		}
	}
	return res, nil
}

// capture is an io.Writer that keeps the first limit bytes and counts the
// rest. It never blocks and never fails, so the goroutine copying the
// child's pipe always keeps reading and the child never stalls on a full
// pipe, whatever it writes.
type capture struct {
	mu    sync.Mutex
	limit int64
	buf   []byte
	total int64
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	room := c.limit - int64(len(c.buf))
	if room <= 0 {
		return len(p), nil
	}
	keep := p
	if int64(len(keep)) > room {
		keep = keep[:room]
	}
	if need := len(c.buf) + len(keep); need > cap(c.buf) {
		// Grow by doubling but never past the limit, so the cap bounds
		// memory and not only the length reported.
		n := int64(max(need, 2*cap(c.buf), 512))
		n = min(n, c.limit)
		grown := make([]byte, len(c.buf), n)
		copy(grown, c.buf)
		c.buf = grown
	}
	c.buf = append(c.buf, keep...)
	return len(p), nil
}

func (c *capture) result() (kept []byte, total int64, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf), c.total, c.total > int64(len(c.buf))
}

var _ io.Writer = (*capture)(nil)

// mergeEnv returns base with extra added, an extra entry replacing any base
// entry with the same key. With fold (Windows) keys compare
// case-insensitively, because Windows resolves variables that way and a
// child handed both "Path" and "PATH" sees only one of them, unpredictably.
func mergeEnv(base []string, extra map[string]string, fold bool) ([]string, error) {
	if len(extra) == 0 {
		return nil, nil // nil Env makes exec inherit os.Environ() as is
	}
	norm := func(k string) string {
		if fold {
			return strings.ToUpper(k)
		}
		return k
	}
	keys := make([]string, 0, len(extra))
	override := make(map[string]bool, len(extra))
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, &InputError{Reason: fmt.Sprintf("invalid environment variable name %q", k)}
		}
		if strings.ContainsRune(v, 0) {
			return nil, &InputError{Reason: fmt.Sprintf("environment variable %s: value contains NUL", k)}
		}
		if override[norm(k)] {
			return nil, &InputError{Reason: fmt.Sprintf("environment variable %s given twice (names are case-insensitive here)", k)}
		}
		override[norm(k)] = true
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(base)+len(keys))
	for _, kv := range base {
		if k, ok := envKey(kv); ok && override[norm(k)] {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out, nil
}

// envKey returns the name part of a "NAME=value" entry. Windows keeps
// per-drive directories as "=C:=C:\dir", so a leading '=' belongs to the
// name.
func envKey(kv string) (string, bool) {
	if kv == "" {
		return "", false
	}
	i := strings.IndexByte(kv[1:], '=')
	if i < 0 {
		return "", false
	}
	return kv[:i+1], true
}

// Decode turns captured output into text and names the encoding it
// assumed. Valid UTF-8 (after stripping a BOM) is returned as is. Text
// with a UTF-16LE BOM, as some Windows tools write, is decoded as UTF-16.
// Output that is valid UTF-8 except for an incomplete sequence at the very
// end — what a MaxCapture cut in the middle of a character produces — stays
// UTF-8, the fragment replaced by U+FFFD, provided there is evidence for
// UTF-8 beyond one lone lead byte: "caf\xe9" is far more likely Latin-1 or
// cp1252 "café" than a cut UTF-8 character. Anything else falls back to the
// system's legacy code page on Windows and to Latin-1 elsewhere, which
// cannot fail and is reported as "latin-1" so nobody mistakes the guess
// for knowledge.
func Decode(b []byte) (text string, encoding string) {
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		return decodeUTF16LE(b[2:]), "utf-16le"
	}
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	if utf8.Valid(b) {
		return string(b), "utf-8"
	}
	if head, ok := cutPartialRune(b); ok && utf8.Valid(head) && (len(b)-len(head) > 1 || hasMultiByte(head)) {
		return string(head) + "\uFFFD", "utf-8"
	}
	return decodeLegacy(b)
}

// cutPartialRune returns b without a trailing incomplete UTF-8 sequence,
// and whether there was one.
func cutPartialRune(b []byte) ([]byte, bool) {
	for n := 1; n < utf8.UTFMax && n <= len(b); n++ {
		c := b[len(b)-n]
		if utf8.RuneStart(c) {
			if c >= 0xC0 && !utf8.FullRune(b[len(b)-n:]) {
				return b[:len(b)-n], true
			}
			return b, false
		}
	}
	return b, false
}

func hasMultiByte(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func decodeUTF16LE(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	s := string(utf16.Decode(u))
	if len(b)%2 == 1 {
		s += "\uFFFD"
	}
	return s
}

// latin1 maps each byte to the code point of the same value; every byte
// sequence is valid Latin-1, which makes it the fallback that cannot fail.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// batchArgProblem reports why args cannot be passed safely to a Windows
// batch file. CreateProcess runs a .bat/.cmd through cmd.exe, which
// re-parses the command line with its own rules: the quoting Go applies
// for ordinary programs does not protect %, ^, &, |, <, >, ! or an embedded
// quote there, so such an argument could run another command
// ("BatBadBut"). Rather than pretend to escape for cmd.exe, Run refuses.
func batchArgProblem(args []string) error {
	for i, a := range args {
		if j := strings.IndexAny(a, "%!^&|<>()\"\r\n\x00"); j >= 0 {
			return &InputError{Reason: fmt.Sprintf("argument %d (%q) contains %q, which cmd.exe would interpret; batch files are run by cmd.exe, so pass such arguments to a real executable instead", i+1, a, a[j])}
		}
	}
	return nil
}

// Info describes one running process.
type Info struct {
	PID, PPID int
	// Name is the program's name as the OS lists it (e.g. "git.exe").
	Name string
	// Exe is the full path of the program image, or "" when the OS does not
	// disclose it to this user.
	Exe string
	// User owns the process ("DOMAIN\user" on Windows, a user name or, if
	// it has none, the numeric uid elsewhere); "" when not disclosed.
	User string
}
