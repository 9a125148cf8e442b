package tunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/secrets"
)

// maxErrorLine bounds Status.LastError.
const maxErrorLine = 300

// supervise runs the child again and again until ctx ends, the key goes
// away, the pinned tunnel-client changes, or a crash loop. Backoff doubles
// from backoffMin to backoffMax and starts over after a child that ran
// healthyAfter; loopFailures exits within loopWindow end the supervision
// in crash_loop. Each start takes the settings in effect then (a new pin
// included) and hashes the pinned file again; a file that is gone or
// changed ends the supervision in client_changed, without retrying. A
// file that cannot be opened or read just then (a backup tool or an
// antivirus holding it) is tried again after the same backoff, the error
// shown as LastError; as no child ran, it does not count towards the
// crash loop.
func (s *Supervisor) supervise(ctx context.Context, r *run, logf *rotatingLog) {
	v := &supervision{s: s, ctx: ctx, r: r, logf: logf, delay: s.t.backoffMin}
	defer v.finish()
	for v.next() {
	}
}

// supervision is one run of supervise: what its loop carries from one
// child to the next, and the one place (record) where a change of the
// tunnel's state is written.
type supervision struct {
	s    *Supervisor
	ctx  context.Context
	r    *run
	logf *rotatingLog
	// delay is the next backoff; failures the exits within loopWindow;
	// restarts the children started again so far.
	delay    time.Duration
	failures []time.Time
	restarts int
}

// change is one change of the tunnel's state while no child runs (or as
// one starts), which record writes once, three ways: the Status, a line
// of the tunnel log, and an entry of Hearth's log.
type change struct {
	state  State
	reason string
	// pid is the child's (0: none runs).
	pid int
	// lastErr, when set, becomes Status.LastError.
	lastErr string
	// note is the tunnel log's line; event, when set, Hearth's log
	// message at level, with attrs.
	note  string
	level slog.Level
	event string
	attrs []any
}

// record writes c: the Status (if r is still the current supervision),
// the tunnel log, Hearth's log.
func (v *supervision) record(c change) {
	v.s.update(v.r, func(st *Status) {
		st.State, st.Reason, st.PID = c.state, c.reason, c.pid
		if c.lastErr != "" {
			st.LastError = truncate(c.lastErr, maxErrorLine)
		}
	})
	if c.note != "" {
		v.s.note(v.logf, c.note)
	}
	if c.event != "" {
		v.s.log.Log(context.Background(), c.level, c.event, c.attrs...)
	}
}

// finish ends the supervision: stopped when ctx ended, the Supervisor
// free for another, the log closed, then done.
func (v *supervision) finish() {
	if v.ctx.Err() != nil {
		v.record(change{state: StateStopped, reason: "stopped", note: "stopped"})
	}
	v.s.mu.Lock()
	if v.s.run == v.r {
		v.s.run = nil
	}
	v.s.mu.Unlock()
	v.logf.Close()
	close(v.r.done)
}

// wait sleeps the backoff (a Restart cuts it short) and doubles it; false
// when ctx ended.
func (v *supervision) wait() bool {
	timer := time.NewTimer(v.delay)
	defer timer.Stop()
	select {
	case <-v.ctx.Done():
		return false
	case <-v.r.restart:
		v.delay = v.s.t.backoffMin
	case <-timer.C:
		v.delay = min(2*v.delay, v.s.t.backoffMax)
	}
	return true
}

// retry records c and waits the backoff; false when ctx ended meanwhile.
func (v *supervision) retry(c change) bool {
	v.record(c)
	return v.wait()
}

// end records c, after which the supervision ends.
func (v *supervision) end(c change) bool {
	v.record(c)
	return false
}

// next prepares and runs one child and decides what follows: true to go
// on with another (after any backoff), false to end the supervision.
func (v *supervision) next() bool {
	s := v.s
	cfg := s.Config()
	// A profile made for another tunnel ID or address is made again first
	// (before the client is opened: init opens it too). A pinned file that
	// changed is left to openClient below.
	if ran, err := s.ensureProfile(v.ctx, cfg); err != nil && !errors.Is(err, ErrClientChanged) && !errors.Is(err, ErrNotPinned) {
		if v.ctx.Err() != nil {
			return false
		}
		return v.retry(change{state: StateBackoff, lastErr: err.Error(),
			reason: fmt.Sprintf("the connection could not be prepared (see the last error); trying again in %s", v.delay),
			note:   fmt.Sprintf("not starting tunnel-client: %s; trying again in %s", err, v.delay),
			level:  slog.LevelWarn, event: "tunnel: make the profile; trying again", attrs: []any{"err", err, "in", v.delay}})
	} else if ran && err == nil {
		s.note(v.logf, "profile made again for tunnel "+cfg.TunnelID+" and "+s.MCPURL())
	}
	cl, err := s.openClient(cfg)
	if errors.Is(err, ErrClientUnreadable) {
		return v.retry(change{state: StateBackoff, lastErr: err.Error(),
			reason: fmt.Sprintf("the pinned tunnel-client could not be read (see the last error); trying again in %s", v.delay),
			note:   fmt.Sprintf("not starting tunnel-client now: %s; trying again in %s", err, v.delay),
			level:  slog.LevelWarn, event: "tunnel: pinned tunnel-client unreadable; trying again", attrs: []any{"err", err, "in", v.delay}})
	}
	if err != nil {
		state := StateNotConfigured
		if errors.Is(err, ErrClientChanged) {
			state = StateClientChanged
		}
		return v.end(change{state: state, reason: err.Error(), note: "not starting tunnel-client: " + err.Error(),
			level: slog.LevelError, event: "tunnel: not starting tunnel-client", attrs: []any{"err", err}})
	}
	key, gen, err := s.readKeyGen()
	if err != nil {
		reason := "no tunnel runtime key yet (enter it on the Setup page)"
		if !errors.Is(err, secrets.ErrNotFound) {
			reason = "the tunnel runtime key cannot be read from the secrets store"
			s.log.Warn("tunnel: read key", "err", err)
		}
		cl.Close()
		return v.end(change{state: StateNotConfigured, reason: reason, note: "not starting tunnel-client: " + reason})
	}
	started := time.Now()
	res := v.runOnce(cfg, cl, key, gen)
	if v.ctx.Err() != nil {
		return false
	}
	if res.keyRefused && s.keyGeneration() != gen {
		// A new key was saved while the refused one's child ended: start
		// with the new key at once.
		res.restart = true
	}
	if res.restart {
		s.note(v.logf, "restarting tunnel-client on request")
		v.delay = s.t.backoffMin
		return true
	}
	if res.keyRefused {
		// The same key would be refused again: no restart loop.
		return v.end(change{state: StateKeyRefused, reason: ReasonKeyRefused, lastErr: res.desc,
			note:  "tunnel-client " + res.desc + "; OpenAI refused the key, not restarting until a new key is saved",
			level: slog.LevelError, event: "tunnel: the control plane refused the runtime key; not restarting", attrs: []any{"exit", res.desc}})
	}
	now := time.Now()
	if now.Sub(started) >= s.t.healthyAfter {
		v.delay = s.t.backoffMin
	}
	v.failures = append(recent(v.failures, now, s.t.loopWindow), now)
	s.update(v.r, func(st *Status) {
		if st.LastError == "" || !res.sawError {
			st.LastError = res.desc
		}
	})
	if len(v.failures) >= s.t.loopFailures {
		reason := fmt.Sprintf("tunnel-client exited %d times within %s; not restarting it until it is started again (see the tunnel log)",
			len(v.failures), s.t.loopWindow)
		return v.end(change{state: StateCrashLoop, reason: reason, note: "crash loop: " + reason,
			level: slog.LevelError, event: "tunnel: crash loop; not restarting", attrs: []any{"exits", len(v.failures), "window", s.t.loopWindow, "last", res.desc}})
	}
	if !v.retry(change{state: StateBackoff, reason: fmt.Sprintf("tunnel-client %s; restarting in %s", res.summary, v.delay),
		note:  fmt.Sprintf("tunnel-client %s; restarting in %s", res.desc, v.delay),
		level: slog.LevelWarn, event: "tunnel: tunnel-client exited; restarting", attrs: []any{"exit", res.desc, "in", v.delay}}) {
		return false
	}
	v.restarts++
	restarts := v.restarts
	s.update(v.r, func(st *Status) { st.Restarts = restarts })
	return true
}

// recent returns the times within window before now.
func recent(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	out := ts[:0]
	for _, t := range ts {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	return out
}

// readKeyGen reads the key and its generation (keyGen) together: what a
// child started with it says about its key is stale once keyGen moves on.
func (s *Supervisor) readKeyGen() (string, uint64, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	key, err := s.readKey()
	return key, s.keyGeneration(), err
}

// keyGeneration is keyGen.
func (s *Supervisor) keyGeneration() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyGen
}

func (s *Supervisor) readKey() (string, error) {
	if s.secrets == nil {
		return "", secrets.ErrNotFound
	}
	b, err := s.secrets.Get(KeyName)
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", secrets.ErrNotFound
	}
	return string(b), nil
}

// note writes one of Hearth's own lines into the tunnel log.
func (s *Supervisor) note(logf *rotatingLog, msg string) {
	if err := logf.WriteLine(stamp(time.Now()) + " hearth: " + msg); err != nil && !errors.Is(err, os.ErrClosed) {
		s.log.Warn("tunnel: write log", "err", err)
	}
}

// runResult is how one child run ended.
type runResult struct {
	// desc says how it ended, for the log and LastError ("exited with
	// status 3 after 1.2s"); summary is the same without child-provided
	// detail, for Status.Reason.
	desc, summary string
	// sawError: the child printed an error line this run.
	sawError bool
	// restart: it was stopped by Restart, not by itself.
	restart bool
	// keyRefused: the child said the control plane refused the key.
	keyRefused bool
}

// runOnce starts one child from the verified cl (closing it once the child
// started) and waits for it, watching its readiness meanwhile. gen is the
// key's generation (readKeyGen).
func (v *supervision) runOnce(cfg config.Tunnel, cl *client, key string, gen uint64) runResult {
	s, ctx, r, logf := v.s, v.ctx, v.r, v.logf
	closeClient := sync.OnceFunc(func() { cl.Close() })
	defer closeClient()
	urlFile := s.healthURLFile()
	// A URL left by an earlier child would point the readiness probe at a
	// port nobody (or someone else) listens on.
	if err := os.Remove(urlFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("tunnel: remove old health URL file", "err", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	env, err := proc.Environ(map[string]string{EnvKey: key})
	if err != nil {
		return v.startFailed("prepare tunnel-client environment", err, key)
	}
	tree, err := proc.NewTree()
	if err != nil {
		return v.startFailed("start tunnel-client", err, key)
	}
	defer tree.Close()

	args := []string{"run", "--profile", cfg.Profile,
		// An ephemeral port: the profile's default (127.0.0.1:8080) is
		// often taken, and the URL file tells Hearth the real one.
		"--health.listen-addr", "127.0.0.1:0",
		"--health.url-file", urlFile}
	cmd := cl.command(runCtx, args...)
	cmd.Env = env
	cmd.Dir = s.dataDir
	cmd.SysProcAttr = tree.SysProcAttr()
	// The read end is the child's stdin; Hearth never writes, and the
	// child sees EOF when Hearth closes it or dies.
	if _, err := cmd.StdinPipe(); err != nil {
		return v.startFailed("start tunnel-client", err, key)
	}

	out := &childOutput{v: v, gen: gen}
	stdout := &lineWriter{key: key, emit: func(line string) { out.line("stdout", line) }}
	stderr := &lineWriter{key: key, emit: func(line string) { out.line("stderr", line) }}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error {
		err := tree.Interrupt()
		if err == nil || errors.Is(err, os.ErrProcessDone) {
			return err
		}
		s.note(logf, fmt.Sprintf("graceful stop failed (%v); killing tunnel-client", err))
		return tree.Kill()
	}
	// After the graceful signal the child has stopGrace to exit before
	// exec kills it (and the tree's exit sweep takes what it left).
	cmd.WaitDelay = s.t.stopGrace

	if s.seams.beforeExec != nil {
		s.seams.beforeExec()
	}
	// tree.Start, not cmd.Start: on Linux the child also gets a
	// parent-death signal, so a Hearth killed outright takes it along.
	err = tree.StartContext(runCtx, cmd)
	closeClient()
	if err != nil {
		return v.startFailed("start tunnel-client", err, key)
	}
	started := time.Now()
	pid := cmd.Process.Pid
	v.record(change{state: StateStarting, reason: "waiting for tunnel-client to report ready", pid: pid,
		note:  fmt.Sprintf("started %s (pid %d, sha256 %s) %s", cl.Name, pid, cfg.ClientSHA256, strings.Join(args, " ")),
		level: slog.LevelInfo, event: "tunnel: tunnel-client started", attrs: []any{"pid", pid}})

	restarted := make(chan bool, 1)
	healthDone := make(chan struct{})
	go func() {
		defer close(healthDone)
		s.watchHealth(runCtx, r, urlFile, key, gen, started, out.refused)
	}()
	go func() {
		select {
		case <-r.restart:
			restarted <- true
			cancel()
		case <-runCtx.Done():
			restarted <- false
		}
	}()

	waitErr := cmd.Wait()
	ran := time.Since(started).Round(100 * time.Millisecond)
	cancel()
	<-healthDone
	restart := <-restarted
	stdout.Flush()
	stderr.Flush()

	res := out.result(cmd.ProcessState, waitErr, ran, restart)
	if ctx.Err() == nil && !restart {
		s.note(logf, "tunnel-client "+res.desc)
	} else {
		s.note(logf, fmt.Sprintf("tunnel-client (pid %d) stopped after %s", pid, ran))
	}
	return res
}

// startFailed records that a child could not be started (what failed,
// and err, with the key redacted): LastError, the tunnel log, Hearth's
// log. The state is left to the supervision's next change.
func (v *supervision) startFailed(what string, err error, key string) runResult {
	msg := redact(fmt.Sprintf("%s: %v", what, err), key)
	v.s.note(v.logf, msg)
	v.s.log.Error("tunnel: "+what, "err", redact(err.Error(), key))
	v.s.update(v.r, func(st *Status) { st.LastError = truncate(msg, maxErrorLine) })
	return runResult{desc: msg, summary: "could not be started", sawError: true}
}

// childOutput follows one child's output lines: each goes to the tunnel
// log; an error line becomes LastError (while the child's key is still
// the current one), and what the run's end needs is kept.
type childOutput struct {
	v   *supervision
	gen uint64 // the key's generation the child started with

	mu         sync.Mutex
	lastStderr string
	sawError   bool
	// refusedAt is when the child last said the control plane refused the
	// key (zero: never this run).
	refusedAt time.Time
}

// line takes one line the child wrote to stream (stdout or stderr).
func (o *childOutput) line(stream, line string) {
	s := o.v.s
	if err := o.v.logf.WriteLine(stamp(time.Now()) + " " + stream + ": " + line); err != nil {
		s.log.Warn("tunnel: write log", "err", err)
	}
	if strings.TrimSpace(line) == "" {
		return
	}
	o.mu.Lock()
	if stream == "stderr" {
		o.lastStderr = line
	}
	isErr := errorLine(line)
	if isErr {
		o.sawError = true
	}
	if keyRefusedLine(line) {
		o.refusedAt = time.Now()
	}
	o.mu.Unlock()
	if isErr {
		s.update(o.v.r, func(st *Status) {
			if s.keyGen == o.gen {
				st.LastError = truncate(line, maxErrorLine)
			}
		})
	}
}

// result says how the child's run ended, from its process state (nil
// when it could not be waited for), the error of Wait, how long it ran
// and whether a Restart stopped it.
func (o *childOutput) result(state *os.ProcessState, waitErr error, ran time.Duration, restart bool) runResult {
	res := runResult{restart: restart}
	switch {
	case state == nil:
		res.summary = "ended"
		res.desc = fmt.Sprintf("ended: %v", waitErr)
	case state.Exited():
		res.summary = fmt.Sprintf("exited with status %d", state.ExitCode())
		res.desc = fmt.Sprintf("exited with status %d after %s", state.ExitCode(), ran)
	default:
		res.summary = "was killed"
		res.desc = fmt.Sprintf("ended (%s) after %s", state, ran)
	}
	o.mu.Lock()
	res.sawError = o.sawError
	res.keyRefused = !o.refusedAt.IsZero()
	if !o.sawError && o.lastStderr != "" && (state == nil || state.ExitCode() != 0) {
		res.desc += ": " + truncate(o.lastStderr, maxErrorLine)
	}
	o.mu.Unlock()
	return res
}

// refused is refusedAt.
func (o *childOutput) refused() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refusedAt
}

// errorLine reports whether a line of tunnel-client output looks like an
// error report.
func errorLine(line string) bool {
	l := strings.ToLower(line)
	// A line that names a milder level is not an error, whatever its
	// message says (a warning that OAuth discovery "failed").
	for _, w := range []string{"level=warn", `"level":"warn`, "level=info", `"level":"info"`, "level=debug", `"level":"debug"`} {
		if strings.Contains(l, w) {
			return false
		}
	}
	for _, w := range []string{"level=error", `"level":"error"`, "error:", "fatal", "panic:", "failed"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
