package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/periodic"
	"github.com/hearth-dev/hearth/internal/primitive"
)

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
// closed. A start under way closes its session itself when it finishes,
// for the same reason, and is not counted.
func (m *Manager) CloseAll(ctx context.Context, reason string) int {
	m.mu.Lock()
	m.closings++
	m.closedFor = reason
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
	periodic.Run(ctx, every, false, m.closeIdle)
}

// closeIdle closes the sessions idle for IdleTimeout.
func (m *Manager) closeIdle(ctx context.Context) {
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
