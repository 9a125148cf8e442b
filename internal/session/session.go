// Package session runs interactive console programs for the model (a REPL,
// a shell, ssh): each on a pseudo-terminal of its own (a pty on Unix,
// ConPTY on Windows), its input typed as text and named keys, its output
// kept in a bounded ring read from an offset with a bounded wait, and its
// transcript kept as an artifact when it closes.
//
// Sessions are bounded: at most MaxSessions at once, each closed after
// IdleTimeout without a send or read, each program's whole process tree
// killed on close, on the e-stop (CloseAll) and when Hearth exits (Stop;
// the tree also dies with a Hearth that crashes, see internal/proc).
// They are not durable: a session open when Hearth stopped is recorded
// closed, in the ledger, at the next start.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/store"
)

// Ledger entry kinds a session writes beside the call's own intent and
// outcome.
const (
	KindStarted = "session_started"
	KindClosed  = "session_closed"
)

// Reasons a session closes, as the ledger and the result name them.
const (
	ReasonClosed    = "closed"           // machine.session_close
	ReasonIdle      = "idle_timeout"     // no send or read for IdleTimeout
	ReasonEStop     = "estop"            // the e-stop latched
	ReasonExit      = "hearth_exit"      // Hearth stopped
	ReasonRestarted = "hearth_restarted" // open when the previous Hearth stopped
	ReasonStartFail = "start_failed"     // started, but could not be recorded open
)

// MaxWait is the longest a read may wait for output.
const MaxWait = 30 * time.Second

// settingPrefix keys the record of an open session in the settings table,
// which the next start reads to record it closed.
const settingPrefix = "session_open:"

// Options are a Manager's dependencies and bounds; each is required.
type Options struct {
	DB        *store.DB
	Ledger    *ledger.Ledger
	Artifacts *artifacts.Store
	Log       *slog.Logger
	// MaxSessions bounds the sessions open at once (max_sessions).
	MaxSessions int
	// BufferBytes is each session's output ring (session_buffer_bytes).
	BufferBytes int
	// TranscriptBytes bounds the transcript kept as an artifact
	// (session_transcript_bytes): its first TranscriptBytes bytes.
	TranscriptBytes int
	// IdleTimeout closes a session without a send or read for this long
	// (session_idle_timeout_ms).
	IdleTimeout time.Duration
	// MaxReadBytes bounds the output one read returns (max_output_bytes).
	MaxReadBytes int
}

// Manager holds the open sessions.
type Manager struct {
	o Options

	mu       sync.Mutex
	sessions map[string]*Session
	starting int  // starts under way, counted against MaxSessions
	stopped  bool // Stop ran: nothing starts any more
	// closings counts CloseAll's runs and closedFor is the latest one's
	// reason: a start under way when CloseAll ran closes its session
	// rather than adding it, so the e-stop leaves no program running.
	closings  uint64
	closedFor string

	// seams are what tests may set (fortest.go); zero in the program.
	seams seams

	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// New returns a Manager; a missing dependency or a bound below 1 is an
// error naming it.
func New(o Options) (*Manager, error) {
	switch {
	case o.DB == nil || o.Ledger == nil || o.Artifacts == nil:
		return nil, errors.New("build the session manager: a database, a ledger and an artifact store are required")
	case o.MaxSessions < 1 || o.BufferBytes < 1 || o.TranscriptBytes < 1 || o.IdleTimeout <= 0 || o.MaxReadBytes < 1:
		return nil, fmt.Errorf("build the session manager: bounds must be positive (max %d, buffer %d, transcript %d, idle %s, read %d)",
			o.MaxSessions, o.BufferBytes, o.TranscriptBytes, o.IdleTimeout, o.MaxReadBytes)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{o: o, sessions: map[string]*Session{}}, nil
}

// Session is one running (or exited, not yet closed) program.
type Session struct {
	id, route, command string
	args               []string
	cwd                string
	pid                int
	started            time.Time

	term terminal
	out  *ring

	// exited is closed once the program has exited and its output ended;
	// exitCode is valid then.
	exited   chan struct{}
	exitCode int

	mu         sync.Mutex
	lastActive time.Time
	cursor     int64 // where the previous read ended
	transcript []byte
	cut        bool // the transcript reached TranscriptBytes
	writing    bool // a send is still writing into the terminal
	closeOnce  sync.Once
	closed     *Closed
}

// StartInput is machine.session_start's input.
type StartInput struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
}

// Info describes an open session.
type Info struct {
	SessionID  string   `json:"session_id"`
	Command    string   `json:"command"`
	Args       []string `json:"args"`
	Cwd        string   `json:"cwd,omitempty"`
	PID        int      `json:"pid"`
	StartedAt  string   `json:"started_at"`
	IdleMS     int64    `json:"idle_ms"`
	Output     int64    `json:"output_bytes"`
	Exited     bool     `json:"exited"`
	ExitCode   *int     `json:"exit_code,omitempty"`
	IdleLimit  int64    `json:"idle_timeout_ms"`
	BufferSize int      `json:"buffer_bytes"`
}

func (s *Session) info(idle time.Duration, buffer int) Info {
	s.mu.Lock()
	last := s.lastActive
	s.mu.Unlock()
	in := Info{SessionID: s.id, Command: s.command, Args: s.args, Cwd: s.cwd, PID: s.pid,
		StartedAt: s.started.UTC().Format(time.RFC3339), IdleMS: time.Since(last).Milliseconds(),
		Output: s.out.read(0, 0).end, IdleLimit: idle.Milliseconds(), BufferSize: buffer}
	select {
	case <-s.exited:
		code := s.exitCode
		in.Exited, in.ExitCode = true, &code
	default:
	}
	return in
}

// StartSession starts a session for call's conversation.
func (m *Manager) StartSession(ctx context.Context, call *primitive.Call, in StartInput) (*Info, error) {
	if err := checkStart(in); err != nil {
		return nil, err
	}
	if err := available(); err != nil {
		return nil, unavailableErr(err)
	}
	m.mu.Lock()
	switch {
	case m.stopped:
		m.mu.Unlock()
		return nil, primitive.Failed("stopping", "machine.session_start: Hearth is stopping")
	case len(m.sessions)+m.starting >= m.o.MaxSessions:
		n := len(m.sessions) + m.starting
		m.mu.Unlock()
		return nil, primitive.Failed("too_many_sessions", "machine.session_start: %d sessions are open, the most max_sessions allows; close one with machine.session_close first", n)
	}
	m.starting++
	closings := m.closings
	m.mu.Unlock()
	s, err := m.start(ctx, route(call), commandID(call), in)
	if err == nil && m.seams.started != nil {
		m.seams.started(s)
	}
	reason := ReasonStartFail
	m.mu.Lock()
	m.starting--
	if err == nil {
		switch {
		case m.stopped:
			err, reason = primitive.Failed("stopping", "machine.session_start: Hearth is stopping"), ReasonExit
		case m.closings != closings:
			// CloseAll ran while the program started: it would not have
			// seen this session, so the session is closed here.
			err, reason = closedWhileStarting(m.closedFor), m.closedFor
		default:
			m.sessions[s.id] = s
		}
	}
	m.mu.Unlock()
	if err != nil {
		if s != nil {
			m.finish(context.WithoutCancel(ctx), s, reason)
		}
		return nil, err
	}
	info := s.info(m.o.IdleTimeout, m.o.BufferBytes)
	return &info, nil
}

// closedWhileStarting is session_start's answer when CloseAll ran for
// reason while its program started: cancelled, in the words the
// dispatcher gives a call the e-stop stopped.
func closedWhileStarting(reason string) error {
	why := reason
	if reason == ReasonEStop {
		why = "emergency stop"
	}
	return &primitive.Error{State: primitive.StateCancelled, Code: "cancelled",
		Message: fmt.Sprintf("machine.session_start was stopped (%s) before it finished; its program was killed", why)}
}

// unavailableErr is session_start's answer on a host without a usable
// pseudo-terminal: blocked, as ui automation's is where it cannot run.
func unavailableErr(err error) error {
	return primitive.Blocked("unavailable", "machine.session_start: %v", err).WithDetails(map[string]any{"reason": err.Error()})
}

func route(call *primitive.Call) string {
	if call == nil {
		return ""
	}
	return call.Route
}

func commandID(call *primitive.Call) string {
	if call == nil {
		return ""
	}
	return call.CommandID
}

// checkStart refuses input no program could start with, naming the field.
func checkStart(in StartInput) error {
	bad := func(field, why string) error {
		return primitive.Failed("invalid_input", "machine.session_start: field %q: %s", field, why)
	}
	if strings.TrimSpace(in.Command) == "" {
		return bad("command", "must not be empty")
	}
	const nul = "contains a NUL character (\\u0000), which no program, argument, directory or environment variable can carry"
	if strings.ContainsRune(in.Command, 0) {
		return bad("command", nul)
	}
	for i, a := range in.Args {
		if strings.ContainsRune(a, 0) {
			return bad(fmt.Sprintf("args[%d]", i), nul)
		}
	}
	for k, v := range in.Env {
		if strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return bad("env", nul)
		}
	}
	if in.Cwd != "" {
		st, err := os.Stat(in.Cwd)
		if err != nil || !st.IsDir() {
			return primitive.Failed("bad_cwd", "machine.session_start: field \"cwd\": %q is not an existing directory", in.Cwd)
		}
	}
	return nil
}

// start starts the program, records the session open and starts pumping
// its output. A session returned with an error is running and must be
// finished.
func (m *Manager) start(ctx context.Context, rt, cmdID string, in StartInput) (*Session, error) {
	term, err := startTerminal(ctx, startSpec{Command: in.Command, Args: in.Args, Dir: in.Cwd, Env: in.Env, Cols: 120, Rows: 30})
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return nil, unavailableErr(err)
		}
		code, words := proc.StartProblem(in.Command, err)
		e := primitive.Failed(code, "machine.session_start: %s", words)
		if code == "invalid_input" {
			return nil, e
		}
		return nil, e.WithDetails(map[string]any{"system_error": err.Error()})
	}
	now := time.Now()
	args := in.Args
	if args == nil {
		args = []string{}
	}
	s := &Session{id: primitive.NewID("ses"), route: rt, command: in.Command, args: args, cwd: in.Cwd, pid: term.PID(), started: now,
		term: term, out: newRing(m.o.BufferBytes), exited: make(chan struct{}), lastActive: now}
	go m.pump(s)
	rec, _ := json.Marshal(map[string]any{"session_id": s.id, "route": rt, "command": in.Command, "pid": s.pid, "started_at": now.UnixMilli()})
	wctx := context.WithoutCancel(ctx)
	if _, err := m.o.DB.W.ExecContext(wctx, `INSERT INTO settings(key, value) VALUES (?, ?)`, settingPrefix+s.id, string(rec)); err != nil {
		return s, fmt.Errorf("record session %s open: %w", s.id, err)
	}
	if _, err := m.o.Ledger.Append(wctx, KindStarted, map[string]any{"session_id": s.id, "command_id": cmdID, "route": rt,
		"command": in.Command, "pid": s.pid}); err != nil {
		return s, fmt.Errorf("journal session %s: %w", s.id, err)
	}
	return s, nil
}

// pump copies the program's output into the ring and the transcript
// until it ends, then waits for the program and records its exit.
func (m *Manager) pump(s *Session) {
	// The program is waited for beside the reading: on Windows its output
	// ends only once the pseudo-console is closed after it exits.
	waited := make(chan struct{})
	go func() {
		s.exitCode = s.term.Wait()
		close(waited)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.term.Read(buf)
		if n > 0 {
			s.out.write(buf[:n])
			s.mu.Lock()
			if room := m.o.TranscriptBytes - len(s.transcript); room > 0 {
				s.transcript = append(s.transcript, buf[:min(n, room)]...)
				s.cut = s.cut || n > room
			} else {
				s.cut = true
			}
			s.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	<-waited
	close(s.exited)
	s.out.close()
}

// lookup finds call's session id, refusing another conversation's.
func (m *Manager) lookup(call *primitive.Call, op, id string) (*Session, error) {
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s == nil || s.route != route(call) {
		return nil, primitive.Failed("not_found", "machine.%s: field \"session_id\": no open session %q in this conversation (machine.session_list lists them)", op, id)
	}
	s.mu.Lock()
	s.lastActive = time.Now()
	s.mu.Unlock()
	return s, nil
}

// List lists call's conversation's open sessions.
func (m *Manager) List(call *primitive.Call) []Info {
	m.mu.Lock()
	var mine []*Session
	for _, s := range m.sessions {
		if s.route == route(call) {
			mine = append(mine, s)
		}
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(mine))
	for _, s := range mine {
		out = append(out, s.info(m.o.IdleTimeout, m.o.BufferBytes))
	}
	return out
}

// Available reports why sessions cannot start on this host (nil when they
// can): a Windows without a usable ConPTY.
func (m *Manager) Available() error { return available() }

// Limits are the bounds host_info reports.
func (m *Manager) Limits() map[string]any {
	return map[string]any{"max_sessions": m.o.MaxSessions, "session_idle_timeout_ms": m.o.IdleTimeout.Milliseconds(),
		"session_buffer_bytes": m.o.BufferBytes, "session_transcript_bytes": m.o.TranscriptBytes, "session_max_wait_ms": MaxWait.Milliseconds()}
}

// Count is how many sessions are open, in every conversation.
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}
