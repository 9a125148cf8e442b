package tunnel

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Redacted replaces every occurrence of the runtime key in text Hearth
// keeps or shows: log lines, error lines, setup command output.
const Redacted = "[REDACTED]"

// redact returns s with every occurrence of key replaced by Redacted.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, Redacted)
}

// rotatingLog is a size-bounded log: when writing a line would take the
// file past max bytes, name is renamed to name.1 (name.1 to name.2, and so
// on) and a new file is started; at most keep files exist, so the log
// never holds more than keep×max bytes. Every Write is one whole line.
type rotatingLog struct {
	mu   sync.Mutex
	path string
	max  int64
	keep int
	f    *os.File
	size int64
}

func openRotatingLog(path string, max int64, keep int) (*rotatingLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	l := &rotatingLog{path: path, max: max, keep: max1(keep)}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func max1(n int) int { return max(n, 1) }

func (l *rotatingLog) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open tunnel log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open tunnel log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// WriteLine appends one line (a newline is added), rotating first when
// the line would not fit. A line longer than max is written whole into a
// fresh file; lines are bounded by the lineWriter before they get here.
func (l *rotatingLog) WriteLine(line string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return os.ErrClosed
	}
	n := int64(len(line) + 1)
	if l.size > 0 && l.size+n > l.max {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	w, err := l.f.WriteString(line + "\n")
	l.size += int64(w)
	return err
}

// rotate shifts name.(k-1) to name.k down to name to name.1, dropping the
// oldest, and reopens name empty. Windows cannot rename an open file over
// another, so the current file is closed first.
func (l *rotatingLog) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("rotate tunnel log: %w", err)
	}
	l.f = nil
	if l.keep == 1 {
		if err := os.Remove(l.path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("rotate tunnel log: %w", err)
		}
		return l.open()
	}
	_ = os.Remove(fmt.Sprintf("%s.%d", l.path, l.keep-1))
	for i := l.keep - 2; i >= 1; i-- {
		from := fmt.Sprintf("%s.%d", l.path, i)
		if err := os.Rename(from, fmt.Sprintf("%s.%d", l.path, i+1)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("rotate tunnel log: %w", err)
		}
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("rotate tunnel log: %w", err)
	}
	return l.open()
}

func (l *rotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// maxLine bounds one captured line; the rest of a longer line is dropped.
const maxLine = 8 << 10

// lineWriter is the io.Writer a child's stdout or stderr is copied into:
// it splits the stream into lines and hands each, redacted, to emit. It
// never fails and never blocks on the child's behalf beyond emit.
//
// A key split across two writes is still found, because only whole lines
// are redacted. A line longer than maxLine is cut, but only once the buffer
// holds len(key) bytes past the cut: any key that starts before the cut is
// then complete in the buffer and redacted before cutting; what follows
// the cut is dropped up to the next newline without being looked at.
type lineWriter struct {
	mu       sync.Mutex
	key      string
	emit     func(line string)
	buf      []byte
	dropping bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i]
		w.buf = w.buf[i+1:]
		if w.dropping {
			w.dropping = false
			continue
		}
		w.line(string(line), len(line) > maxLine)
	}
	switch {
	case w.dropping:
		w.buf = w.buf[:0]
	case len(w.buf) >= maxLine+len(w.key):
		w.line(string(w.buf), true)
		w.buf = w.buf[:0]
		w.dropping = true
	}
	if cap(w.buf) > 4*maxLine && len(w.buf) == 0 {
		w.buf = nil
	}
	return len(p), nil
}

// Flush emits a final line that had no newline.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 && !w.dropping {
		w.line(string(w.buf), len(w.buf) > maxLine)
	}
	w.buf, w.dropping = nil, false
}

func (w *lineWriter) line(s string, cut bool) {
	s = strings.TrimRight(s, "\r")
	if cut {
		s = cutRedacted(s, w.key, maxLine) + " …[line truncated]"
	} else {
		s = redact(s, w.key)
	}
	w.emit(strings.ToValidUTF8(s, "\uFFFD"))
}

// cutRedacted returns s cut to its first limit bytes, with every
// occurrence of key that begins before the cut replaced by Redacted. Cutting
// the redacted text instead would be wrong: each replacement shortens the
// text, pulling the unredacted beginning of a key that was not complete in
// s back before the cut. s must hold at least limit+len(key)-1 bytes, so
// any key beginning before the cut is complete in it.
func cutRedacted(s, key string, limit int) string {
	if len(s) <= limit {
		return redact(s, key)
	}
	var out strings.Builder
	i := 0
	for i < limit {
		j := -1
		if key != "" {
			j = strings.Index(s[i:], key)
		}
		if j < 0 || i+j >= limit {
			out.WriteString(s[i:limit])
			break
		}
		out.WriteString(s[i : i+j])
		out.WriteString(Redacted)
		i += j + len(key)
	}
	return strings.ToValidUTF8(out.String(), "")
}

// logTime is the timestamp layout of the tunnel log.
const logTime = "2006-01-02T15:04:05.000Z07:00"

func stamp(t time.Time) string { return t.UTC().Format(logTime) }
