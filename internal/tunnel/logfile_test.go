package tunnel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRotatingLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "tunnel.log")
	l, err := openRotatingLog(path, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := l.WriteLine(fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 40))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tunnel.log", "tunnel.log.1", "tunnel.log.2"} {
		st, err := os.Stat(filepath.Join(filepath.Dir(path), name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1000 || st.Size() == 0 {
			t.Errorf("%s has %d bytes, want 1..1000", name, st.Size())
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("a fourth file exists: %v", err)
	}
	cur, _ := os.ReadFile(path)
	if !strings.Contains(string(cur), "line 099") {
		t.Error("the newest line is not in tunnel.log")
	}
	old, _ := os.ReadFile(path + ".2")
	if strings.Contains(string(old), "line 000 ") {
		t.Error("the oldest lines were kept beyond three files")
	}
	// Reopening appends to what is there.
	l, err = openRotatingLog(path, 2000, 3)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	l.WriteLine("after reopen")
	l.Close()
	if cur, _ := os.ReadFile(path); string(cur) != string(before)+"after reopen\n" {
		t.Errorf("reopening did not append: %q", cur)
	}
}

// TestLogRotationEndToEnd: a chatty tunnel-client fills at most keep×max
// bytes of log.
func TestLogRotationEndToEnd(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_SPAM", "3000")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	s.t.logMax, s.t.logKeep = 16<<10, 3
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	s.Stop()
	total := int64(0)
	entries, err := os.ReadDir(filepath.Dir(s.LogPath()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > s.t.logMax {
			t.Errorf("%s has %d bytes, more than %d", e.Name(), info.Size(), s.t.logMax)
		}
		total += info.Size()
	}
	if len(entries) != 3 {
		t.Errorf("%d log files, want 3", len(entries))
	}
	if total > 3*s.t.logMax {
		t.Errorf("logs hold %d bytes, more than 3×%d", total, s.t.logMax)
	}
	if !strings.Contains(readLog(s), "spam 002999") {
		t.Error("the last line written is not in the log")
	}
}

func TestLineWriter(t *testing.T) {
	const key = "sk-live-abcdefghijklmnop"
	var got []string
	w := &lineWriter{key: key, emit: func(l string) { got = append(got, l) }}
	// The key split across writes, CRLF, and a final line without newline.
	for _, p := range []string{"first sk-live-abcd", "efghijklmnop end\r\n", "sec", "ond\n", "tail " + key} {
		w.Write([]byte(p))
	}
	w.Flush()
	want := []string{"first " + Redacted + " end", "second", "tail " + Redacted}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}

	// A key straddling the cut of an over-long line is not leaked, in part
	// or whole, and what follows the cut is dropped up to the newline.
	for _, pad := range []int{maxLine - 10, maxLine - 3, maxLine - len(key), maxLine + 1} {
		got = nil
		w := &lineWriter{key: key, emit: func(l string) { got = append(got, l) }}
		// Earlier keys shorten the redacted text; they must not pull a
		// later, incomplete key back before the cut.
		head := strings.Repeat(key, 4) + strings.Repeat("a", pad-4*len(key))
		w.Write([]byte(head + key + strings.Repeat("b", 3*maxLine) + key + "\nnext\n"))
		w.Flush()
		if len(got) != 2 || got[1] != "next" {
			t.Fatalf("pad %d: lines %d, last %q", pad, len(got), got[len(got)-1])
		}
		if strings.Contains(got[0], "sk-live") || strings.Contains(got[0], "b") {
			t.Errorf("pad %d: cut line leaks the key or keeps what followed the cut", pad)
		}
		if !strings.HasSuffix(got[0], "[line truncated]") || len(got[0]) > maxLine+64 {
			t.Errorf("pad %d: cut line of %d bytes, suffix %q", pad, len(got[0]), got[0][len(got[0])-20:])
		}
	}

	// A long line arriving in small pieces is cut once.
	got = nil
	w = &lineWriter{key: key, emit: func(l string) { got = append(got, l) }}
	for range 4 * maxLine / 100 {
		w.Write([]byte(strings.Repeat("z", 100)))
	}
	w.Write([]byte("\nok\n"))
	if len(got) != 2 || got[1] != "ok" || !strings.HasSuffix(got[0], "[line truncated]") {
		t.Errorf("pieces: %d lines", len(got))
	}
}

func TestRedact(t *testing.T) {
	if got := redact("a KEY b KEY", "KEY"); got != "a "+Redacted+" b "+Redacted {
		t.Errorf("redact = %q", got)
	}
	if got := redact("nothing", ""); got != "nothing" {
		t.Errorf("empty key changed the text: %q", got)
	}
}
