// Package machine provides the machine tool's primitives: host_info, exec,
// batch, process_list, process_kill. Commands run with argv semantics,
// never through a shell; output is bounded inline and spilled to artifacts
// beyond max_output_bytes; a timeout kills the whole process tree.
package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
)

// Machine holds the machine tool's dependencies.
type Machine struct {
	Artifacts *artifacts.Store
	// MaxOutputBytes bounds each stream returned inline.
	MaxOutputBytes int
	// MaxCaptureBytes hard-caps what is kept of each stream.
	MaxCaptureBytes int64
	DefaultTimeout  time.Duration
	MaxTimeout      time.Duration
	// Status reports the governance state and capabilities for host_info.
	Status  func() map[string]any
	Version string
	Started time.Time

	slots chan struct{}
}

// New returns a Machine allowing maxConcurrent commands at once.
func New(maxConcurrent int) *Machine {
	return &Machine{slots: make(chan struct{}, maxConcurrent), Started: time.Now()}
}

// execFields is the exec input shape, shared by batch items.
func execFields() []primitive.Field {
	return []primitive.Field{
		{Name: "command", Type: primitive.TString, Required: true, Desc: "Program to run (path or name on PATH). Never a shell string: use args for arguments."},
		{Name: "args", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "Arguments, one per element; passed without shell interpretation."},
		{Name: "cwd", Type: primitive.TString, Desc: "Working directory (absolute)."},
		{Name: "env", Type: primitive.TObject, Values: primitive.TString, Desc: "Extra environment variables (string values)."},
		{Name: "timeout_ms", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "Kill the process tree after this many ms (default exec_timeout_ms)."},
	}
}

// ExecInput is one command.
type ExecInput struct {
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Cwd       string            `json:"cwd"`
	Env       map[string]string `json:"env"`
	TimeoutMS int64             `json:"timeout_ms"`
}

// WorkingDir is the folder a program started with cwd runs in, as an
// absolute path: cwd made absolute, or, when the call names none,
// Hearth's own working folder (a program started without one inherits
// it). Governance matches allow-rules against it and the permit card
// shows it, so an "Always allow" made from a card whose call named no
// folder covers the folder the card showed, not every folder. "" when it
// cannot be known.
func WorkingDir(cwd string) string {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		if cwd == "" || !filepath.IsAbs(cwd) {
			return ""
		}
		return cwd
	}
	return abs
}

// Specs returns the machine tool's primitives.
func (m *Machine) Specs() []*primitive.Spec {
	return []*primitive.Spec{
		{Tool: "machine", Operation: "host_info", Risk: primitive.RiskRead,
			Summary: "host, OS, user, limits, policy mode, e-stop state, wake (armed or not) and unavailable capabilities; like every answer it carries waiting arrivals.",
			Run:     primitive.Typed(func(ctx context.Context, _ *primitive.Call, _ struct{}) (any, error) { return m.hostInfo(), nil })},
		{Tool: "machine", Operation: "exec", Risk: primitive.RiskExec, Fields: execFields(),
			Summary: "run one program; returns exit_code, stdout/stderr (or preview + artifact when large), timed_out.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in ExecInput) (any, error) {
				return m.Exec(ctx, call, in)
			})},
		{Tool: "machine", Operation: "batch", Risk: primitive.RiskExec,
			Fields: []primitive.Field{{Name: "commands", Type: primitive.TArray, Required: true, Min: primitive.Bound(1), Max: primitive.Bound(16),
				Desc: "Up to 16 commands {command, args?, cwd?, env?, timeout_ms?}, run concurrently.", Items: &primitive.Field{Type: primitive.TObject, Fields: execFields()}}},
			Summary: "run up to 16 commands concurrently; results in input order; partial (failed when all did) names each command that failed to start, exited non-zero or timed out.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				Commands []ExecInput `json:"commands"`
			}) (any, error) {
				return m.batch(ctx, call, in.Commands)
			})},
		{Tool: "machine", Operation: "process_list", Risk: primitive.RiskRead,
			Summary: "running processes (pid, ppid, name, exe).",
			Run:     primitive.Typed(func(ctx context.Context, _ *primitive.Call, _ struct{}) (any, error) { return m.processList() })},
		{Tool: "machine", Operation: "process_kill", Risk: primitive.RiskKill,
			Fields: []primitive.Field{
				{Name: "pid", Type: primitive.TInteger, Required: true, Min: primitive.Bound(1), Desc: "Process id to kill (never Hearth's own)."},
				{Name: "signal", Type: primitive.TString, Enum: []string{"TERM", "KILL"}, Desc: "TERM asks, KILL forces (default). On Windows both terminate."},
			},
			Summary: "kill a process; refuses Hearth's own pid.",
			Precheck: func(raw json.RawMessage) error {
				var in struct {
					PID int `json:"pid"`
				}
				if json.Unmarshal(raw, &in) == nil && in.PID == os.Getpid() {
					return primitive.Blocked("self", "machine.process_kill: pid %d is Hearth itself; %v", in.PID, ErrSelf)
				}
				return nil
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in struct {
				PID    int    `json:"pid"`
				Signal string `json:"signal"`
			}) (any, error) {
				return m.processKill(in.PID, in.Signal)
			})},
	}
}

func (m *Machine) acquire(ctx context.Context) error {
	select {
	case m.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ExecResult is what exec reports.
type ExecResult struct {
	Command    string   `json:"command"`
	Args       []string `json:"args"`
	PID        int      `json:"pid"`
	ExitCode   int      `json:"exit_code"`
	TimedOut   bool     `json:"timed_out"`
	Cancelled  bool     `json:"cancelled,omitempty"`
	DurationMS int64    `json:"duration_ms"`
	Stdout     *Stream  `json:"stdout"`
	Stderr     *Stream  `json:"stderr"`
}

// Stream is one output stream: the text when it fits max_output_bytes,
// else a preview plus the artifact holding the capture.
type Stream struct {
	Text      string          `json:"text,omitempty"`
	Preview   string          `json:"preview,omitempty"`
	Bytes     int64           `json:"bytes"`
	Encoding  string          `json:"encoding"`
	Artifact  *artifacts.Meta `json:"artifact,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
}

// checkText refuses a NUL in what is handed to the operating system: no
// program name, argument, directory or environment entry can carry one,
// and the OS would answer only "invalid argument".
func checkText(in ExecInput) error {
	bad := func(field string) error {
		return primitive.Failed("invalid_input", "machine.exec: field %q: contains a NUL character (\\u0000), which no program, argument, directory or environment variable can carry", field)
	}
	if strings.ContainsRune(in.Command, 0) {
		return bad("command")
	}
	for i, a := range in.Args {
		if strings.ContainsRune(a, 0) {
			return bad(fmt.Sprintf("args[%d]", i))
		}
	}
	if strings.ContainsRune(in.Cwd, 0) {
		return bad("cwd")
	}
	for k, v := range in.Env {
		if strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return bad("env." + strings.ReplaceAll(k, "\x00", `\u0000`))
		}
	}
	return nil
}

// Exec runs one command.
func (m *Machine) Exec(ctx context.Context, call *primitive.Call, in ExecInput) (*ExecResult, error) {
	if err := checkText(in); err != nil {
		return nil, err
	}
	timeout := m.DefaultTimeout
	if in.TimeoutMS > 0 {
		timeout = time.Duration(in.TimeoutMS) * time.Millisecond
	}
	// Compared in milliseconds first: a huge timeout_ms would overflow
	// the Duration.
	if in.TimeoutMS > m.MaxTimeout.Milliseconds() || timeout > m.MaxTimeout {
		return nil, primitive.Failed("invalid_input", "machine.exec: field \"timeout_ms\": %d exceeds max_exec_timeout_ms (%d)", in.TimeoutMS, m.MaxTimeout.Milliseconds())
	}
	if strings.TrimSpace(in.Command) == "" {
		return nil, primitive.Failed("invalid_input", "machine.exec: field \"command\": must not be empty")
	}
	if in.Cwd != "" {
		st, err := os.Stat(in.Cwd)
		if err != nil || !st.IsDir() {
			return nil, primitive.Failed("bad_cwd", "machine.exec: field \"cwd\": %q is not an existing directory", in.Cwd)
		}
	}
	if err := m.acquire(ctx); err != nil {
		return nil, primitive.Failed("cancelled", "waiting for an exec slot: %v", err)
	}
	defer func() { <-m.slots }()
	res, err := proc.Run(ctx, proc.Spec{Command: in.Command, Args: in.Args, Dir: in.Cwd, Env: in.Env, Timeout: timeout, MaxCapture: m.MaxCaptureBytes})
	if err != nil {
		return nil, startError(in.Command, err)
	}
	out := &ExecResult{Command: in.Command, Args: in.Args, PID: res.PID, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Cancelled: res.Cancelled, DurationMS: res.Duration.Milliseconds()}
	if out.Args == nil {
		out.Args = []string{}
	}
	route := ""
	if call != nil {
		route = call.Route
	}
	if out.Stdout, err = m.stream(ctx, route, "stdout", res.Stdout, res.StdoutBytes, res.StdoutTruncated); err != nil {
		return nil, err
	}
	if out.Stderr, err = m.stream(ctx, route, "stderr", res.Stderr, res.StderrBytes, res.StderrTruncated); err != nil {
		return nil, err
	}
	return out, nil
}

func (m *Machine) stream(ctx context.Context, route, name string, data []byte, total int64, truncated bool) (*Stream, error) {
	text, enc := proc.Decode(data)
	s := &Stream{Bytes: total, Encoding: enc, Truncated: truncated}
	if len(data) <= m.MaxOutputBytes && !truncated {
		s.Text = text
		return s, nil
	}
	meta, err := m.Artifacts.Put(context.WithoutCancel(ctx), route, name+".txt", "text/plain; charset=utf-8", "machine.exec", []byte(text), truncated)
	if err != nil {
		return nil, primitive.Failed("spill_failed", "store %s artifact: %v", name, err)
	}
	s.Artifact = &meta
	s.Preview = cutUTF8(text, m.MaxOutputBytes)
	return s, nil
}

// cutUTF8 returns at most n bytes of s without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// BatchItem is one batch result. Code and Error say why an item that
// could not run failed; an item that ran and exited non-zero (or timed
// out) has its result, and Failed is set for it too.
type BatchItem struct {
	Index  int         `json:"index"`
	State  string      `json:"state"`
	Failed bool        `json:"failed,omitempty"`
	Result *ExecResult `json:"result,omitempty"`
	Code   string      `json:"code,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// failure is why a batch item counts as failed ("" when it succeeded): it
// could not run, it timed out or was cancelled, or it exited non-zero.
func (it *BatchItem) failure() string {
	switch {
	case it.Result == nil:
		return it.Error
	case it.Result.TimedOut:
		return "timed out"
	case it.Result.Cancelled:
		return "cancelled"
	case it.Result.ExitCode != 0:
		return fmt.Sprintf("exit code %d", it.Result.ExitCode)
	}
	return ""
}

// batch runs every command and answers completed when all succeeded;
// otherwise partial (some failed) or failed (all did), naming each failed
// command and why, with every item's result beside the error.
func (m *Machine) batch(ctx context.Context, call *primitive.Call, cmds []ExecInput) (any, error) {
	items := make([]BatchItem, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() {
			r, err := m.Exec(ctx, call, c)
			items[i] = BatchItem{Index: i, State: primitive.StateCompleted, Result: r}
			if err != nil {
				pe := primitive.AsError(err)
				items[i] = BatchItem{Index: i, State: pe.State, Code: pe.Code, Error: pe.Message}
			}
		})
	}
	wg.Wait()
	var failed []int
	var why []string
	for i := range items {
		if f := items[i].failure(); f != "" {
			items[i].Failed = true
			failed = append(failed, i)
			why = append(why, fmt.Sprintf("commands[%d] (%s): %s", i, cmds[i].Command, f))
		}
	}
	res := map[string]any{"results": items, "failed": len(failed), "failed_indexes": failed}
	if failed == nil {
		res["failed_indexes"] = []int{}
		return res, nil
	}
	if len(failed) == len(items) {
		return nil, primitive.Failed("all_failed", "machine.batch: all %d commands failed: %s", len(items), strings.Join(why, "; ")).
			WithDetails(map[string]any{"failed_indexes": failed}).WithResult(res)
	}
	return nil, primitive.Partial("some_failed", "machine.batch: %d of %d commands failed: %s", len(failed), len(items), strings.Join(why, "; ")).
		WithDetails(map[string]any{"failed_indexes": failed}).WithResult(res)
}

const maxProcesses = 4000

// Process is one process_list entry.
type Process struct {
	PID  int    `json:"pid"`
	PPID int    `json:"ppid"`
	Name string `json:"name"`
	Exe  string `json:"exe,omitempty"`
	User string `json:"user,omitempty"`
}

func (m *Machine) processList() (any, error) {
	ps, err := proc.List()
	if err != nil {
		return nil, primitive.Failed("list_failed", "list processes: %v", err)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	truncated := len(ps) > maxProcesses
	if truncated {
		ps = ps[:maxProcesses]
	}
	out := make([]Process, len(ps))
	for i, p := range ps {
		out[i] = Process{PID: p.PID, PPID: p.PPID, Name: p.Name, Exe: p.Exe, User: p.User}
	}
	return map[string]any{"processes": out, "count": len(out), "truncated": truncated, "self_pid": os.Getpid()}, nil
}

// ErrSelf refuses killing Hearth itself.
var ErrSelf = errors.New("refusing to kill Hearth's own process")

func (m *Machine) processKill(pid int, signal string) (any, error) {
	if pid == os.Getpid() {
		return nil, primitive.Blocked("self", "machine.process_kill: pid %d is Hearth itself; %v", pid, ErrSelf)
	}
	if signal == "" {
		signal = "KILL"
	}
	if err := killProcess(pid, signal); err != nil {
		return nil, killError(pid, err)
	}
	return map[string]any{"pid": pid, "signal": signal, "killed": true}, nil
}

// currentUser is looked up once: it reads the user database, and
// host_info is the call a model makes most.
var currentUser = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
})

func (m *Machine) hostInfo() map[string]any {
	host, _ := os.Hostname()
	uname := currentUser()
	info := map[string]any{
		"hostname": host,
		"os":       runtime.GOOS,
		"arch":     runtime.GOARCH,
		"user":     uname,
		"pid":      os.Getpid(),
		"cpus":     runtime.NumCPU(),
		"hearth":   m.Version,
		"go":       runtime.Version(),
		"time":     time.Now().UTC().Format(time.RFC3339),
		"uptime_s": int64(time.Since(m.Started).Seconds()),
		"path_sep": string(os.PathSeparator),
		"limits": map[string]any{
			"max_output_bytes":    m.MaxOutputBytes,
			"max_artifact_bytes":  m.MaxCaptureBytes,
			"exec_timeout_ms":     m.DefaultTimeout.Milliseconds(),
			"max_exec_timeout_ms": m.MaxTimeout.Milliseconds(),
			"max_concurrent_exec": cap(m.slots),
		},
	}
	if m.Status != nil {
		for k, v := range m.Status() {
			info[k] = v
		}
	}
	return info
}

func killProcess(pid int, signal string) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if signal == "TERM" && runtime.GOOS != "windows" {
		return p.Signal(sigterm)
	}
	if err := p.Kill(); err != nil {
		return fmt.Errorf("%w", err)
	}
	return nil
}
