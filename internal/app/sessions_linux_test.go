package app_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// sessionClient drives machine.session_* through the real MCP client.
type sessionClient struct {
	t *testing.T
	c *hearthtest.Client
}

func (s sessionClient) call(args map[string]any) *hearthtest.Result {
	s.t.Helper()
	return s.c.Call("machine", args)
}

// completed calls and requires a completed answer.
func (s sessionClient) completed(args map[string]any) *hearthtest.Result {
	s.t.Helper()
	r := s.call(args)
	if r.State() != "completed" {
		s.t.Fatalf("%v: %s", args, r.Raw)
	}
	return r
}

// readUntil reads the session's output from offset until want appears.
func (s sessionClient) readUntil(id string, offset float64, want string) string {
	s.t.Helper()
	r := s.completed(map[string]any{"operation": "session_read", "session_id": id, "offset": offset, "wait_ms": 20000, "until": want})
	text := r.Str("result.text")
	if !strings.Contains(text, want) {
		s.t.Fatalf("read until %q: %s", want, r.Raw)
	}
	return text
}

// TestSessionStartNeedsAPermitInAskMode: starting a session is an exec, so
// under ask it parks for the operator's permit like machine.exec; once the
// start is approved, its keystrokes need no permit of their own.
func TestSessionStartNeedsAPermitInAskMode(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "sessions-ask")}
	r := s.call(map[string]any{"operation": "session_start", "command": "python3", "args": []string{"-q", "-i"}})
	permit, _ := r.Get("permit_id").(string)
	if r.State() != "pending" || permit == "" {
		t.Fatalf("session_start under ask must wait for a permit: %s", r.Raw)
	}
	if in.App.Sessions.Count() != 0 {
		t.Fatal("a session started before its permit was approved")
	}
	if err := in.App.Operator.Approve(t.Context(), permit, "alice", nil); err != nil {
		t.Fatal(err)
	}
	arr := s.c.WaitArrival(r.Str("future_id"), r)
	id, _ := hearthtest.Get(arr, "envelope.result.session_id").(string)
	if hearthtest.Get(arr, "envelope.state") != "completed" || !strings.HasPrefix(id, "ses_") {
		t.Fatalf("the approved start: %v", arr)
	}
	s.readUntil(id, 0, ">>> ")
	sent := s.completed(map[string]any{"operation": "session_send", "session_id": id, "text": "print(6*7)", "keys": []string{"Enter"}})
	s.readUntil(id, sent.Num("result.offset"), "42")
	if ps, err := in.App.Operator.Permits(t.Context(), "pending"); err != nil || len(ps) != 0 {
		t.Fatalf("keystrokes asked for permits: %+v %v", ps, err)
	}
	l := s.completed(map[string]any{"operation": "session_list"})
	if l.Get("result.sessions.0.session_id") != id {
		t.Fatalf("list: %s", l.Raw)
	}
	c := s.completed(map[string]any{"operation": "session_close", "session_id": id})
	if c.Get("result.killed") != true || c.Str("result.transcript.id") == "" {
		t.Fatalf("close: %s", c.Raw)
	}
	// An unknown key is refused by the schema, naming the field.
	bad := s.call(map[string]any{"operation": "session_send", "session_id": id, "keys": []string{"Hyper"}})
	if bad.State() == "completed" || !strings.Contains(string(bad.Raw), "keys") {
		t.Fatalf("an unknown key: %s", bad.Raw)
	}
}

// TestSessionStartAsksUnderARuleAndReadOnlyRefusesIt: an allow-rule for
// the program covers its exec, never a session of it (what is typed into
// a session needs no permit): session_start asks; the read-only mode
// refuses it.
func TestSessionStartAsksUnderARuleAndReadOnlyRefusesIt(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "sessions-rule")}
	if _, err := in.App.Operator.AddRule(t.Context(), "alice", "cat", ""); err != nil {
		t.Fatal(err)
	}
	if r := s.call(map[string]any{"operation": "exec", "command": "cat"}); r.State() != "completed" {
		t.Fatalf("cat under the rule for cat: %s", r.Raw)
	}
	if r := s.call(map[string]any{"operation": "session_start", "command": "cat"}); r.State() != "pending" {
		t.Fatalf("session_start of cat under the rule for cat must ask: %s", r.Raw)
	}
	if err := in.App.Operator.SetPolicy(t.Context(), "alice", config.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	ro := s.call(map[string]any{"operation": "session_start", "command": "cat"})
	if ro.Code() != "blocked/read_only" {
		t.Fatalf("session_start under read-only: %s", ro.Raw)
	}
}

// TestEStopKillsSessionTrees: machine.estop closes every session and
// kills its program's whole tree; a send afterwards is refused.
func TestEStopKillsSessionTrees(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "sessions-estop")}
	r := s.completed(map[string]any{"operation": "session_start", "command": "sh"})
	id, shell := r.Str("result.session_id"), int(r.Num("result.pid"))
	sleep := startSleep(s, id)
	e := s.call(map[string]any{"operation": "estop", "reason": "test"})
	if e.State() != "completed" {
		t.Fatalf("estop: %s", e.Raw)
	}
	waitGone(t, shell, sleep)
	if in.App.Sessions.Count() != 0 {
		t.Fatal("a session is still open after the e-stop")
	}
	sent := s.call(map[string]any{"operation": "session_send", "session_id": id, "text": "echo x", "keys": []string{"Enter"}})
	if sent.Code() != "blocked/estop" {
		t.Fatalf("a send after the e-stop: %s", sent.Raw)
	}
}

// TestHearthExitKillsSessionTrees: stopping Hearth kills every session's
// tree, and the ledger records why.
func TestHearthExitKillsSessionTrees(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "sessions-exit")}
	r := s.completed(map[string]any{"operation": "session_start", "command": "sh"})
	id, shell := r.Str("result.session_id"), int(r.Num("result.pid"))
	sleep := startSleep(s, id)
	in.Stop()
	waitGone(t, shell, sleep)
}

// startSleep starts a background sleep in the session's shell and returns
// its pid.
func startSleep(s sessionClient, id string) int {
	s.t.Helper()
	sent := s.completed(map[string]any{"operation": "session_send", "session_id": id, "text": `sleep 1000 & echo PI""D:$!:`, "keys": []string{"Enter"}})
	re := regexp.MustCompile(`PID:(\d+):`)
	off := sent.Num("result.offset")
	text := ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		r := s.completed(map[string]any{"operation": "session_read", "session_id": id, "offset": off, "wait_ms": 1000})
		text, off = text+r.Str("result.text"), r.Num("result.next_offset")
		if m := re.FindStringSubmatch(text); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
	}
	s.t.Fatalf("no pid in %q", text)
	return 0
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// running reports whether pid runs and is not a zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// TestOperatorEStopKillsSessionTrees: the operator's e-stop (panel, tray)
// kills sessions as the model's does.
func TestOperatorEStopKillsSessionTrees(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "sessions-operator-estop")}
	r := s.completed(map[string]any{"operation": "session_start", "command": "sh"})
	sleep := startSleep(s, r.Str("result.session_id"))
	if err := in.App.Operator.EStop(t.Context(), "alice", "test"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, int(r.Num("result.pid")), sleep)
}

// TestHostInfoDisclosesSessions: host_info says whether sessions can run
// here, how many are open and their bounds (the config's).
func TestHostInfoDisclosesSessions(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); c.MaxSessions = 3 })
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "sessions-host-info")}
	s.completed(map[string]any{"operation": "session_start", "command": "sh"})
	r := s.completed(map[string]any{"operation": "host_info"})
	if r.Get("result.sessions.available") != true || r.Num("result.sessions.open") != 1 || r.Num("result.sessions.limits.max_sessions") != 3 {
		t.Fatalf("host_info sessions: %v", r.Get("result.sessions"))
	}
}
