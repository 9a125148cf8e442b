package selftest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// sessionProgram is the console program the session check talks to, and
// the line it types, whose answer (42) is not in the line itself (the
// terminal echoes what is typed).
func sessionProgram() (command string, args []string, line string) {
	if runtime.GOOS == "windows" {
		return "cmd.exe", []string{"/q"}, "set /a 6*7"
	}
	return "sh", []string{}, "echo $((6*7))"
}

// checkSession starts an interactive session on this PC through MCP, as a
// model would: under policy ask the start waits for a permit, which the
// selftest approves as its operator; then it types a line, reads the
// answer, closes the session (its process tree killed) and finds its
// transcript kept. Where this Windows has no usable pseudo-console (ConPTY;
// Wine), the start answers blocked/unavailable and the check is skipped
// with Hearth's reason.
func (r *run) checkSession(ctx context.Context) (string, error) {
	h := r.hearth
	command, args, line := sessionProgram()
	res, err := h.call(ctx, "machine", map[string]any{"operation": "session_start", "command": command, "args": args, "cwd": r.root})
	if err != nil {
		return "", err
	}
	if res.Code() == "blocked/unavailable" {
		return "", skip("Hearth reports interactive sessions unavailable here: %s", res.Str("error.message"))
	}
	permit := res.Str("permit_id")
	if res.State() != "pending" || permit == "" {
		return "", fmt.Errorf("machine.session_start under policy ask must wait for a permit: %s", res.Brief())
	}
	if err := h.app.Operator.Approve(context.WithoutCancel(ctx), permit, Operator, nil); err != nil {
		return "", fmt.Errorf("approve permit %s as %s: %w", permit, Operator, err)
	}
	env, err := h.await(ctx, res.Str("future_id"), 60*time.Second)
	if err != nil {
		return "", err
	}
	id, _ := jsonx.GetPath(env, "result.session_id").(string)
	if jsonx.GetPath(env, "state") != "completed" || id == "" {
		return "", fmt.Errorf("the approved session_start: %v", env)
	}
	closed := false
	closeSession := func() (*result, error) {
		closed = true
		return h.callSettled(context.WithoutCancel(ctx), "machine", map[string]any{"operation": "session_close", "session_id": id})
	}
	defer func() {
		if !closed {
			_, _ = closeSession()
		}
	}()
	sent, err := h.callSettled(ctx, "machine", map[string]any{"operation": "session_send", "session_id": id, "text": line, "keys": []string{"Enter"}})
	if err != nil {
		return "", err
	}
	if sent.State() != "completed" {
		return "", fmt.Errorf("session_send: %s", sent.Brief())
	}
	read, err := h.callSettled(ctx, "machine", map[string]any{"operation": "session_read", "session_id": id,
		"offset": sent.Num("result.offset"), "wait_ms": 20000, "until": "42"})
	if err != nil {
		return "", err
	}
	if text := read.Str("result.text"); read.State() != "completed" || !strings.Contains(text, "42") {
		return "", fmt.Errorf("typed %q into %s and read no 42 within 20 s: %s", line, command, read.Brief())
	}
	c, err := closeSession()
	if err != nil {
		return "", err
	}
	if c.State() != "completed" || c.Str("result.transcript.id") == "" {
		return "", fmt.Errorf("session_close: %s", c.Brief())
	}
	if n := h.app.Sessions.Count(); n != 0 {
		return "", errors.New("a session is still open after session_close")
	}
	pid, _ := jsonx.GetPath(env, "result.pid").(float64)
	return fmt.Sprintf("%s on a pseudo-terminal: permit approved, typed %q, read 42, closed (pid %d's tree killed), transcript %s",
		command, line, int(pid), c.Str("result.transcript.id")), nil
}
