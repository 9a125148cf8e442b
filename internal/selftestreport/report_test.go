package selftestreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteReadRoundTrip: a report written is read back whole; the
// counts follow the results; no temporary file is left; a second write
// replaces the first.
func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rep := &Report{RunID: "0a1b2c3d", HearthVersion: "v1", FinishedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	rep.Add(Result{Name: "a", Status: OK, Detail: "fine"})
	rep.Add(Result{Name: "b", Status: Fail, Detail: "broke"})
	rep.Add(Result{Name: "c", Status: Skipped, Detail: "no UIA"})
	if rep.Counts != (Counts{OK: 1, Fail: 1, Skipped: 1}) || !rep.Failed() {
		t.Fatalf("counts %+v failed=%v", rep.Counts, rep.Failed())
	}
	path := filepath.Join(dir, FileName)
	for range 2 {
		if err := Write(path, rep); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != rep.RunID || len(got.Checks) != 3 || got.Checks[1].Status != Fail || got.Counts != rep.Counts {
		t.Fatalf("read back %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files left: %v", entries)
	}
	s, found, err := LastSummary(dir)
	if err != nil || !found || s.Counts != rep.Counts || !s.FinishedAt.Equal(rep.FinishedAt) || s.Version != "v1" {
		t.Fatalf("summary %+v %v %v", s, found, err)
	}
	if _, found, err := LastSummary(t.TempDir()); found || err != nil {
		t.Fatalf("no report: found=%v err=%v", found, err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LastSummary(dir); err == nil {
		t.Fatal("a damaged report must be an error")
	}
	if err := os.WriteFile(path, []byte(`{"x":"`+strings.Repeat("a", MaxSize)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("an oversized report: %v", err)
	}
}

// TestScrubber: paths are replaced case-insensitively, in their
// JSON-escaped and forward-slash spellings too, the longest first; words
// such as the user name are replaced; short or trivial entries are not.
func TestScrubber(t *testing.T) {
	s := NewScrubber(map[string]string{
		`C:\Users\Ada\AppData\Local\Temp`:                     "<temp>",
		`C:\Users\Ada\AppData\Local\Temp\hearth-selftest-1-2`: "<selftest-temp>",
		`C:\Users\Ada`: "<home>",
		"/":            "<root>",
		"":             "<empty>",
	}, map[string]string{"Ada": "<user>", "x": "<short>"})
	for in, want := range map[string]string{
		`open C:\Users\Ada\AppData\Local\Temp\hearth-selftest-1-2\files\a.txt`: `open <selftest-temp>\files\a.txt`,
		`c:\users\ada\appdata\local\temp\other`:                                `<temp>\other`,
		`{"path":"C:\\Users\\Ada\\Documents"}`:                                 `{"path":"<home>\\Documents"}`,
		`C:/Users/Ada/x`:                                                       `<home>/x`,
		`user Ada on box x`:                                                    `user <user> on box x`,
		`Adam and Ada_1 are not Ada`:                                           `Adam and Ada_1 are not <user>`,
		`/usr/bin`:                                                             `/usr/bin`,
	} {
		if filepath.Separator != '\\' && strings.Contains(in, `C:/`) {
			continue // filepath.ToSlash changes nothing off Windows
		}
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestScrubberKeepsPlaceholders: a user name that occurs in a placeholder
// (Wine's user is "root", the fs root's placeholder is <fs-root>) leaves
// the placeholder alone.
func TestScrubberKeepsPlaceholders(t *testing.T) {
	s := NewScrubber(map[string]string{"/tmp/x/files": "<fs-root>"}, map[string]string{"root": "<username>"})
	if got := s.Scrub("open /tmp/x/files/a as root"); got != "open <fs-root>/a as <username>" {
		t.Fatalf("%q", got)
	}
}

func TestLine(t *testing.T) {
	l := Line(Result{Name: "uia.invoke", Status: Skipped, Detail: "no CUIAutomation"})
	if !strings.HasPrefix(l, "skipped uia.invoke") || !strings.HasSuffix(l, "no CUIAutomation") {
		t.Fatalf("%q", l)
	}
}
