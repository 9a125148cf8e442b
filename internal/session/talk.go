package session

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/primitive"
)

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
