// Package selftestreport is the selftest's report: one result per check, the
// counts, and how the report is written and read back. It has no
// dependencies on the rest of Hearth, so the control panel's Status page
// can read the last report without importing the selftest itself.
//
// A report holds no user data: every text in it passes through a Scrubber
// first, which replaces the machine's paths (the temporary directory, the
// program, the user's home and data directory) and the user's name with
// placeholders, so what a tester sends holds relative paths only.
package selftestreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// FileName is the report's name in the data directory, where the panel
// finds the last one.
const FileName = "selftest-report.json"

// Status is one check's outcome.
type Status string

// Statuses, as printed and as written in the report.
const (
	OK      Status = "ok"
	Fail    Status = "FAIL"
	Skipped Status = "skipped"
)

// Result is one check's line.
type Result struct {
	// Name is the check's stable name, e.g. "uia.snapshot".
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Detail says what was seen (ok), what happened (FAIL) or why the check
	// did not run (skipped).
	Detail string `json:"detail"`
	MS     int64  `json:"ms"`
}

// Counts are how many checks ended each way.
type Counts struct {
	OK      int `json:"ok"`
	Fail    int `json:"fail"`
	Skipped int `json:"skipped"`
}

// Report is one selftest run.
type Report struct {
	// RunID names the run's fixtures: its window title, credential, task
	// and shortcut all carry it.
	RunID         string    `json:"run_id"`
	HearthVersion string    `json:"hearth_version"`
	GoVersion     string    `json:"go_version"`
	OS            string    `json:"os"`
	Arch          string    `json:"arch"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	// Fixtures are the names the run gave its disposable fixtures.
	Fixtures Fixtures `json:"fixtures"`
	Counts   Counts   `json:"counts"`
	Checks   []Result `json:"checks"`
}

// Fixtures are the names of what a run creates and removes.
type Fixtures struct {
	WindowTitle string `json:"window_title"`
	Credential  string `json:"credential"`
	Task        string `json:"task"`
	Shortcut    string `json:"shortcut"`
}

// Add appends r and counts it.
func (rep *Report) Add(r Result) {
	rep.Checks = append(rep.Checks, r)
	switch r.Status {
	case OK:
		rep.Counts.OK++
	case Fail:
		rep.Counts.Fail++
	default:
		rep.Counts.Skipped++
	}
}

// Failed reports whether any check failed.
func (rep *Report) Failed() bool { return rep.Counts.Fail > 0 }

// Line is a result as the selftest prints it: the status, the name and
// the detail.
func Line(r Result) string {
	return fmt.Sprintf("%-7s %-26s %s", r.Status, r.Name, r.Detail)
}

// Encode is the report as indented JSON.
func Encode(rep *Report) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // read by people: keep <temp> and → as they are
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return nil, fmt.Errorf("encode the selftest report: %w", err)
	}
	return b.Bytes(), nil
}

// Write writes rep to path through a temporary file beside it, so that a
// reader (the panel) sees the old report or the new one, never half.
func Write(path string, rep *Report) error {
	data, err := Encode(rep)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write the selftest report: %w", err)
	}
	if err := atomicfile.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return fmt.Errorf("write the selftest report %s: %w", filepath.Base(path), err)
	}
	return nil
}

// MaxSize bounds a report read back: far above what a run writes.
const MaxSize = 1 << 20

// Read reads a report written by Write.
func Read(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, MaxSize+1)); err != nil {
		return nil, fmt.Errorf("read the selftest report: %w", err)
	}
	if b.Len() > MaxSize {
		return nil, fmt.Errorf("read the selftest report: more than %d bytes", MaxSize)
	}
	var rep Report
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("read the selftest report: %w", err)
	}
	return &rep, nil
}

// Summary is what the Status page shows of the last report.
type Summary struct {
	FinishedAt time.Time
	Version    string
	Counts     Counts
}

// LastSummary reads the last report in dataDir. found is false when there
// is none; a report that cannot be read is an error.
func LastSummary(dataDir string) (s Summary, found bool, err error) {
	rep, err := Read(filepath.Join(dataDir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return Summary{}, false, nil
	}
	if err != nil {
		return Summary{}, false, err
	}
	return Summary{FinishedAt: rep.FinishedAt, Version: rep.HearthVersion, Counts: rep.Counts}, true, nil
}

// Scrubber replaces machine-specific text with placeholders.
type Scrubber struct {
	paths []sub
	words []sub
}

type sub struct{ from, to string }

// NewScrubber replaces each key of paths (a path on this machine) with its
// value (a placeholder such as "<temp>"), longest first so that a path
// inside another gets its own placeholder, and each key of words (a user
// or computer name) where it stands as a whole word. Empty or trivial
// entries are ignored.
func NewScrubber(paths map[string]string, words map[string]string) *Scrubber {
	s := &Scrubber{}
	for p, to := range paths {
		p = filepath.Clean(p)
		if p == "" || p == "." || p == string(filepath.Separator) || len(p) < 3 {
			continue
		}
		s.paths = append(s.paths, sub{p, to})
		if esc, err := json.Marshal(p); err == nil { // as it appears inside JSON text
			if e := strings.Trim(string(esc), `"`); e != p {
				s.paths = append(s.paths, sub{e, to})
			}
		}
		if fwd := filepath.ToSlash(p); fwd != p {
			s.paths = append(s.paths, sub{fwd, to})
		}
	}
	for w, to := range words {
		if len(w) >= 3 {
			s.words = append(s.words, sub{w, to})
		}
	}
	longest := func(a, b sub) int { return len(b.from) - len(a.from) }
	slices.SortStableFunc(s.paths, longest)
	slices.SortStableFunc(s.words, longest)
	return s
}

// Scrub returns text with every known path and word replaced, matching
// case-insensitively (Windows paths and names compare that way). Paths go
// first, and a placeholder is never scrubbed again: a user called "root"
// does not turn "<fs-root>" into "<fs-<username>>".
func (s *Scrubber) Scrub(text string) string {
	const mark = "\x00"
	var held []string
	for _, r := range s.paths {
		text = replaceFold(text, r.from, func() string {
			held = append(held, r.to)
			return mark + strconv.Itoa(len(held)-1) + mark
		}, false)
	}
	for _, r := range s.words {
		text = replaceFold(text, r.from, func() string { return r.to }, true)
	}
	for i, h := range held {
		text = strings.ReplaceAll(text, mark+strconv.Itoa(i)+mark, h)
	}
	return text
}

// replaceFold replaces every case-insensitive occurrence of old in s with
// with(); whole only where old is neither preceded nor followed by a
// letter or digit (and not inside a placeholder's brackets).
func replaceFold(s, old string, with func() string, whole bool) string {
	if old == "" {
		return s
	}
	lower, lold := strings.ToLower(s), strings.ToLower(old)
	if len(lower) != len(s) || len(lold) != len(old) {
		// Case folding changed byte lengths (rare non-ASCII): exact match.
		lower, lold = s, old
	}
	var b strings.Builder
	for {
		i := strings.Index(lower, lold)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		if whole && (i > 0 && wordByte(s[i-1]) || end < len(s) && wordByte(s[end])) {
			b.WriteString(s[:end])
			s, lower = s[end:], lower[end:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(with())
		s, lower = s[end:], lower[end:]
	}
}

// wordByte reports whether c continues a word (or a placeholder).
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '<' || c == '>' || c >= 0x80
}
