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
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/ids"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
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
	m.mu.Unlock()
	s, err := m.start(ctx, route(call), commandID(call), in)
	m.mu.Lock()
	m.starting--
	if err == nil {
		if m.stopped {
			err = primitive.Failed("stopping", "machine.session_start: Hearth is stopping")
		} else {
			m.sessions[s.id] = s
		}
	}
	m.mu.Unlock()
	if err != nil {
		if s != nil {
			m.finish(context.WithoutCancel(ctx), s, ReasonExit)
		}
		return nil, err
	}
	info := s.info(m.o.IdleTimeout, m.o.BufferBytes)
	return &info, nil
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
		return nil, primitive.Failed("start_failed", "machine.session_start: %v", err)
	}
	now := time.Now()
	args := in.Args
	if args == nil {
		args = []string{}
	}
	s := &Session{id: ids.New("ses"), route: rt, command: in.Command, args: args, cwd: in.Cwd, pid: term.PID(), started: now,
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

// SendResult is what session_send reports.
type SendResult struct {
	SessionID string `json:"session_id"`
	Sent      int    `json:"sent_bytes"`
	// Offset is the output offset when the input was sent: read from it
	// to see the answer.
	Offset int64 `json:"offset"`
}

// maxText bounds one send's text, in bytes.
const maxText = 64 << 10

// sendWait bounds how long a send waits for the program to take its
// input (a program that reads nothing fills the terminal's input buffer).
const sendWait = 5 * time.Second

// Send types text and then the named keys into a session.
func (m *Manager) Send(ctx context.Context, call *primitive.Call, id, text string, keys []string) (*SendResult, error) {
	s, err := m.lookup(call, "session_send", id)
	if err != nil {
		return nil, err
	}
	if len(text) > maxText {
		return nil, primitive.Failed("invalid_input", "machine.session_send: field \"text\": %d bytes, more than the %d one send takes", len(text), maxText)
	}
	data, err := encodeInput(text, keys)
	if err != nil {
		return nil, primitive.Failed("invalid_input", "machine.session_send: %v", err)
	}
	if len(data) == 0 {
		return nil, primitive.Failed("invalid_input", "machine.session_send: fields \"text\" and \"keys\": give at least one")
	}
	select {
	case <-s.exited:
		return nil, primitive.Failed("exited", "machine.session_send: session %s: its program exited with code %d; read its last output, then close it", id, s.exitCode)
	default:
	}
	s.mu.Lock()
	if s.writing {
		s.mu.Unlock()
		return nil, primitive.Failed("input_blocked", "machine.session_send: session %s: the program has not taken the previous input yet (it reads none); read its output, send Ctrl-C or close it", id)
	}
	s.writing = true
	s.mu.Unlock()
	offset := s.out.read(0, 0).end
	done := make(chan error, 1)
	go func() {
		_, err := s.term.Write(data)
		s.mu.Lock()
		s.writing = false
		s.mu.Unlock()
		done <- err
	}()
	timer := time.NewTimer(sendWait)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		return nil, primitive.Failed("input_blocked", "machine.session_send: session %s: the program took no input for %s; the rest is sent as it reads", id, sendWait)
	case <-ctx.Done():
		return nil, primitive.Failed("cancelled", "machine.session_send: %v", ctx.Err())
	}
	if err != nil {
		return nil, primitive.Failed("send_failed", "machine.session_send: session %s: %v", id, err)
	}
	return &SendResult{SessionID: id, Sent: len(data), Offset: offset}, nil
}

// ReadInput is session_read's input.
type ReadInput struct {
	SessionID string `json:"session_id"`
	Offset    *int64 `json:"offset"`
	WaitMS    int64  `json:"wait_ms"`
	Until     string `json:"until"`
}

// ReadResult is what session_read reports.
type ReadResult struct {
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
	// Offset is where Text starts; NextOffset where the next read goes on.
	Offset     int64 `json:"offset"`
	NextOffset int64 `json:"next_offset"`
	// Lost counts output before Offset that the ring no longer holds.
	Lost     int64  `json:"lost_bytes,omitempty"`
	LostNote string `json:"lost,omitempty"`
	More     bool   `json:"more"`
	Matched  *bool  `json:"matched,omitempty"`
	Exited   bool   `json:"exited"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

// Read reads a session's output from an offset (by default where the
// previous read ended), waiting up to wait_ms for output (or for until
// to appear in it).
func (m *Manager) Read(ctx context.Context, call *primitive.Call, in ReadInput) (*ReadResult, error) {
	s, err := m.lookup(call, "session_read", in.SessionID)
	if err != nil {
		return nil, err
	}
	wait := time.Duration(in.WaitMS) * time.Millisecond
	if in.WaitMS < 0 || wait > MaxWait {
		return nil, primitive.Failed("invalid_input", "machine.session_read: field \"wait_ms\": %d is not within [0, %d]", in.WaitMS, MaxWait.Milliseconds())
	}
	s.mu.Lock()
	off := s.cursor
	s.mu.Unlock()
	if in.Offset != nil {
		if *in.Offset < 0 {
			return nil, primitive.Failed("invalid_input", "machine.session_read: field \"offset\": %d is negative", *in.Offset)
		}
		off = *in.Offset
	}
	ready := func(c chunk) bool {
		if in.Until != "" {
			return strings.Contains(clean(c.data), in.Until)
		}
		return len(c.data) > 0
	}
	c := s.out.wait(ctx, off, m.o.MaxReadBytes, wait, ready)
	data := c.data
	if !c.ended {
		data = wholeRunes(data)
	}
	res := &ReadResult{SessionID: s.id, Text: clean(data), Offset: c.start, NextOffset: c.start + int64(len(data)), Lost: c.lost}
	res.More = res.NextOffset < c.end
	if c.lost > 0 {
		res.LostNote = fmt.Sprintf("%d bytes of output before offset %d are gone: a session keeps only its newest %d bytes (session_buffer_bytes); the transcript artifact keeps the start", c.lost, c.start, m.o.BufferBytes)
	}
	if in.Until != "" {
		matched := strings.Contains(res.Text, in.Until)
		res.Matched = &matched
	}
	select {
	case <-s.exited:
		code := s.exitCode
		res.Exited, res.ExitCode = true, &code
	default:
	}
	s.mu.Lock()
	s.cursor = res.NextOffset
	s.mu.Unlock()
	return res, nil
}

// wholeRunes cuts an incomplete UTF-8 sequence off the end of b, so the
// next read starts at its first byte.
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// Closed is what closing a session reports.
type Closed struct {
	SessionID  string          `json:"session_id"`
	Reason     string          `json:"reason"`
	ExitCode   int             `json:"exit_code"`
	Killed     bool            `json:"killed"`
	Transcript *artifacts.Meta `json:"transcript,omitempty"`
	// TranscriptError says why the transcript could not be kept.
	TranscriptError string `json:"transcript_error,omitempty"`
}

// Close closes call's session: its process tree is killed if it still
// runs, and its transcript kept as an artifact.
func (m *Manager) Close(ctx context.Context, call *primitive.Call, id string) (*Closed, error) {
	s, err := m.lookup(call, "session_close", id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
	return m.finish(context.WithoutCancel(ctx), s, ReasonClosed), nil
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

// killWait bounds how long closing waits for a killed program to be gone.
const killWait = 10 * time.Second

// finish kills s's tree if its program still runs, keeps its transcript
// and records it closed; it runs once per session (a later call returns
// the first one's result).
func (m *Manager) finish(ctx context.Context, s *Session, reason string) *Closed {
	s.closeOnce.Do(func() {
		c := &Closed{SessionID: s.id, Reason: reason}
		select {
		case <-s.exited:
		default:
			c.Killed = true
			if err := s.term.Kill(); err != nil {
				m.o.Log.Error("kill a session's process tree", "session", s.id, "pid", s.pid, "err", err)
			}
		}
		select {
		case <-s.exited:
			c.ExitCode = s.exitCode
		case <-time.After(killWait):
			m.o.Log.Error("a killed session's program did not go", "session", s.id, "pid", s.pid)
			c.ExitCode = -1
		}
		if err := s.term.Close(); err != nil {
			m.o.Log.Warn("release a session's terminal", "session", s.id, "err", err)
		}
		s.mu.Lock()
		text, cut := clean(s.transcript), s.cut
		s.mu.Unlock()
		meta, err := m.o.Artifacts.Put(ctx, s.route, "session-"+s.id+".txt", "text/plain; charset=utf-8", "machine.session", []byte(text), cut)
		if err != nil {
			m.o.Log.Error("keep a session's transcript", "session", s.id, "err", err)
			c.TranscriptError = "the transcript could not be stored"
		} else {
			c.Transcript = &meta
		}
		entry := map[string]any{"session_id": s.id, "reason": reason, "exit_code": c.ExitCode, "killed": c.Killed, "route": s.route}
		if c.Transcript != nil {
			entry["transcript"] = c.Transcript.ID
		}
		if _, err := m.o.Ledger.Append(ctx, KindClosed, entry); err != nil {
			m.o.Log.Error("journal a session's close", "session", s.id, "err", err)
		}
		if _, err := m.o.DB.W.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, settingPrefix+s.id); err != nil {
			m.o.Log.Error("record a session closed", "session", s.id, "err", err)
		}
		s.closed = c
	})
	return s.closed
}

// CloseAll closes every open session for reason (the e-stop, Hearth's
// exit), killing their process trees at once, and returns how many it
// closed.
func (m *Manager) CloseAll(ctx context.Context, reason string) int {
	m.mu.Lock()
	all := make([]*Session, 0, len(m.sessions))
	for id, s := range m.sessions {
		all = append(all, s)
		delete(m.sessions, id)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() { m.finish(context.WithoutCancel(ctx), s, reason) })
	}
	wg.Wait()
	return len(all)
}

// Start records closed the sessions a previous Hearth left open (their
// programs died with it) and starts closing idle sessions.
func (m *Manager) Start(ctx context.Context) error {
	if err := m.recover(ctx); err != nil {
		return err
	}
	ctx, m.stopLoop = context.WithCancel(context.WithoutCancel(ctx))
	m.loopDone = make(chan struct{})
	go m.idleLoop(ctx)
	return nil
}

// Stop stops the idle loop, refuses new sessions and closes every open
// one (Hearth's exit).
func (m *Manager) Stop() {
	if m.stopLoop != nil {
		m.stopLoop()
		<-m.loopDone
	}
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	if n := m.CloseAll(context.Background(), ReasonExit); n > 0 {
		m.o.Log.Info("closed interactive sessions on exit", "sessions", n)
	}
}

func (m *Manager) recover(ctx context.Context) error {
	rows, err := m.o.DB.R.QueryContext(ctx, `SELECT key, value FROM settings WHERE key >= ? AND key < ?`, settingPrefix, settingPrefix+"\xff")
	if err != nil {
		return fmt.Errorf("read the sessions left open: %w", err)
	}
	type left struct{ key, value string }
	var stale []left
	for rows.Next() {
		var l left
		if err := rows.Scan(&l.key, &l.value); err != nil {
			rows.Close()
			return fmt.Errorf("read the sessions left open: %w", err)
		}
		stale = append(stale, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the sessions left open: %w", err)
	}
	for _, l := range stale {
		var rec map[string]any
		_ = json.Unmarshal([]byte(l.value), &rec)
		entry := map[string]any{"session_id": strings.TrimPrefix(l.key, settingPrefix), "reason": ReasonRestarted,
			"note": "open when the previous Hearth stopped; its program was killed with it"}
		if r, ok := rec["route"].(string); ok {
			entry["route"] = r
		}
		err := m.o.DB.InTx(ctx, func(tx *sql.Tx) error {
			if _, err := m.o.Ledger.AppendTx(ctx, tx, KindClosed, entry); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, l.key)
			return err
		})
		if err != nil {
			return fmt.Errorf("record session %s closed: %w", entry["session_id"], err)
		}
	}
	return nil
}

// idleLoop closes sessions idle for IdleTimeout.
func (m *Manager) idleLoop(ctx context.Context) {
	defer close(m.loopDone)
	every := min(max(m.o.IdleTimeout/10, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		var idle []*Session
		for id, s := range m.sessions {
			s.mu.Lock()
			if time.Since(s.lastActive) >= m.o.IdleTimeout {
				idle = append(idle, s)
				delete(m.sessions, id)
			}
			s.mu.Unlock()
		}
		m.mu.Unlock()
		for _, s := range idle {
			m.finish(context.WithoutCancel(ctx), s, ReasonIdle)
		}
	}
}
