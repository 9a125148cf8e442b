package tunnel

import (
	"context"
	"errors"
	"fmt"
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
	defer close(r.done)
	defer logf.Close()
	defer func() {
		if ctx.Err() != nil {
			s.setState(r, StateStopped, "stopped")
			s.note(logf, "stopped")
		}
		s.mu.Lock()
		if s.run == r {
			s.run = nil
		}
		s.mu.Unlock()
	}()

	delay := s.t.backoffMin
	var failures []time.Time
	restarts := 0
	// wait sleeps delay (a Restart cuts it short) and doubles it; false
	// when ctx ended.
	wait := func() bool {
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-r.restart:
			delay = s.t.backoffMin
		case <-timer.C:
			delay = min(2*delay, s.t.backoffMax)
		}
		return true
	}
	for {
		cfg := s.Config()
		// A profile made for another tunnel ID or address is made again
		// first (before the client is opened: init opens it too). A
		// pinned file that changed is left to openClient below.
		if ran, err := s.ensureProfile(ctx, cfg); err != nil && !errors.Is(err, ErrClientChanged) && !errors.Is(err, ErrNotPinned) {
			if ctx.Err() != nil {
				return
			}
			msg := err.Error()
			s.update(r, func(st *Status) {
				st.State, st.PID, st.LastError = StateBackoff, 0, truncate(msg, maxErrorLine)
				st.Reason = fmt.Sprintf("the connection could not be prepared (see the last error); trying again in %s", delay)
			})
			s.note(logf, fmt.Sprintf("not starting tunnel-client: %s; trying again in %s", msg, delay))
			s.log.Warn("tunnel: make the profile; trying again", "err", err, "in", delay)
			if !wait() {
				return
			}
			continue
		} else if ran && err == nil {
			s.note(logf, "profile made again for tunnel "+cfg.TunnelID+" and "+s.MCPURL())
		}
		cl, err := s.openClient(cfg)
		if errors.Is(err, ErrClientUnreadable) {
			msg := err.Error()
			s.update(r, func(st *Status) {
				st.State, st.PID, st.LastError = StateBackoff, 0, truncate(msg, maxErrorLine)
				st.Reason = fmt.Sprintf("the pinned tunnel-client could not be read (see the last error); trying again in %s", delay)
			})
			s.note(logf, fmt.Sprintf("not starting tunnel-client now: %s; trying again in %s", msg, delay))
			s.log.Warn("tunnel: pinned tunnel-client unreadable; trying again", "err", err, "in", delay)
			if !wait() {
				return
			}
			continue
		}
		if err != nil {
			state, reason := StateNotConfigured, err.Error()
			if errors.Is(err, ErrClientChanged) {
				state = StateClientChanged
			}
			s.setState(r, state, reason)
			s.note(logf, "not starting tunnel-client: "+reason)
			s.log.Error("tunnel: not starting tunnel-client", "err", err)
			return
		}
		key, gen, err := s.readKeyGen()
		if err != nil {
			reason := "no tunnel runtime key yet (enter it on the Setup page)"
			if !errors.Is(err, secrets.ErrNotFound) {
				reason = "the tunnel runtime key cannot be read from the secrets store"
				s.log.Warn("tunnel: read key", "err", err)
			}
			cl.Close()
			s.setState(r, StateNotConfigured, reason)
			s.note(logf, "not starting tunnel-client: "+reason)
			return
		}
		started := time.Now()
		res := s.runOnce(ctx, r, cfg, cl, key, gen, logf)
		if ctx.Err() != nil {
			return
		}
		if res.keyRefused && s.keyGeneration() != gen {
			// A new key was saved while the refused one's child ended:
			// start with the new key at once.
			res.restart = true
		}
		if res.restart {
			s.note(logf, "restarting tunnel-client on request")
			delay = s.t.backoffMin
			continue
		}
		if res.keyRefused {
			// The same key would be refused again: no restart loop.
			s.update(r, func(st *Status) {
				st.State, st.Reason, st.PID = StateKeyRefused, ReasonKeyRefused, 0
				st.LastError = truncate(res.desc, maxErrorLine)
			})
			s.note(logf, "tunnel-client "+res.desc+"; OpenAI refused the key, not restarting until a new key is saved")
			s.log.Error("tunnel: the control plane refused the runtime key; not restarting", "exit", res.desc)
			return
		}
		now := time.Now()
		if now.Sub(started) >= s.t.healthyAfter {
			delay = s.t.backoffMin
		}
		failures = append(recent(failures, now, s.t.loopWindow), now)
		s.update(r, func(st *Status) {
			if st.LastError == "" || !res.sawError {
				st.LastError = res.desc
			}
		})
		if len(failures) >= s.t.loopFailures {
			reason := fmt.Sprintf("tunnel-client exited %d times within %s; not restarting it until it is started again (see the tunnel log)",
				len(failures), s.t.loopWindow)
			s.setState(r, StateCrashLoop, reason)
			s.note(logf, "crash loop: "+reason)
			s.log.Error("tunnel: crash loop; not restarting", "exits", len(failures), "window", s.t.loopWindow, "last", res.desc)
			return
		}
		s.setState(r, StateBackoff, fmt.Sprintf("tunnel-client %s; restarting in %s", res.summary, delay))
		s.note(logf, fmt.Sprintf("tunnel-client %s; restarting in %s", res.desc, delay))
		s.log.Warn("tunnel: tunnel-client exited; restarting", "exit", res.desc, "in", delay)
		if !wait() {
			return
		}
		restarts++
		s.update(r, func(st *Status) { st.Restarts = restarts })
	}
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
func (s *Supervisor) runOnce(ctx context.Context, r *run, cfg config.Tunnel, cl *client, key string, gen uint64, logf *rotatingLog) runResult {
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

	fail := func(what string, err error) runResult {
		msg := redact(fmt.Sprintf("%s: %v", what, err), key)
		s.note(logf, msg)
		s.log.Error("tunnel: "+what, "err", redact(err.Error(), key))
		s.update(r, func(st *Status) { st.LastError = truncate(msg, maxErrorLine) })
		return runResult{desc: msg, summary: "could not be started", sawError: true}
	}
	env, err := proc.Environ(map[string]string{EnvKey: key})
	if err != nil {
		return fail("prepare tunnel-client environment", err)
	}
	tree, err := proc.NewTree()
	if err != nil {
		return fail("start tunnel-client", err)
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
		return fail("start tunnel-client", err)
	}

	var mu sync.Mutex
	var lastStderr string
	sawError := false
	// refusedAt is when the child last said the control plane refused the
	// key (zero: never this run).
	var refusedAt time.Time
	refused := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return refusedAt
	}
	emit := func(stream string) func(string) {
		return func(line string) {
			if err := logf.WriteLine(stamp(time.Now()) + " " + stream + ": " + line); err != nil {
				s.log.Warn("tunnel: write log", "err", err)
			}
			if strings.TrimSpace(line) == "" {
				return
			}
			mu.Lock()
			if stream == "stderr" {
				lastStderr = line
			}
			isErr := errorLine(line)
			if isErr {
				sawError = true
			}
			if keyRefusedLine(line) {
				refusedAt = time.Now()
			}
			mu.Unlock()
			if isErr {
				s.update(r, func(st *Status) {
					if s.keyGen == gen {
						st.LastError = truncate(line, maxErrorLine)
					}
				})
			}
		}
	}
	stdout := &lineWriter{key: key, emit: emit("stdout")}
	stderr := &lineWriter{key: key, emit: emit("stderr")}
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
		return fail("start tunnel-client", err)
	}
	started := time.Now()
	pid := cmd.Process.Pid
	s.update(r, func(st *Status) {
		st.State, st.Reason, st.PID = StateStarting, "waiting for tunnel-client to report ready", pid
	})
	s.note(logf, fmt.Sprintf("started %s (pid %d, sha256 %s) %s", cl.Name, pid, cfg.ClientSHA256, strings.Join(args, " ")))
	s.log.Info("tunnel: tunnel-client started", "pid", pid)

	restarted := make(chan bool, 1)
	healthDone := make(chan struct{})
	go func() {
		defer close(healthDone)
		s.watchHealth(runCtx, r, urlFile, key, gen, started, refused)
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

	res := runResult{restart: restart}
	state := cmd.ProcessState
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
	mu.Lock()
	res.sawError = sawError
	res.keyRefused = !refusedAt.IsZero()
	if !sawError && lastStderr != "" && (state == nil || state.ExitCode() != 0) {
		res.desc += ": " + truncate(lastStderr, maxErrorLine)
	}
	mu.Unlock()
	if ctx.Err() == nil && !restart {
		s.note(logf, "tunnel-client "+res.desc)
	} else {
		s.note(logf, fmt.Sprintf("tunnel-client (pid %d) stopped after %s", pid, ran))
	}
	return res
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
