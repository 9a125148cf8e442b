package session

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRingKeepsTheNewestBytesAndSaysWhatWasLost(t *testing.T) {
	r := newRing(8)
	r.write([]byte("abcdef"))
	r.write([]byte("ghij")) // 10 written, 8 kept: "cdefghij"
	c := r.read(0, 100)
	if string(c.data) != "cdefghij" || c.start != 2 || c.lost != 2 || c.end != 10 {
		t.Fatalf("read(0) = %q start %d lost %d end %d", c.data, c.start, c.lost, c.end)
	}
	if c := r.read(7, 2); string(c.data) != "hi" || c.lost != 0 {
		t.Fatalf("read(7, 2) = %q lost %d", c.data, c.lost)
	}
	if c := r.read(10, 5); len(c.data) != 0 || c.start != 10 {
		t.Fatalf("read at the end = %q start %d", c.data, c.start)
	}
	r.write([]byte(strings.Repeat("x", 20))) // one write larger than the ring
	if c := r.read(0, 100); string(c.data) != "xxxxxxxx" || c.start != 22 || c.end != 30 {
		t.Fatalf("after a large write: %q start %d end %d", c.data, c.start, c.end)
	}
}

func TestRingWaitIsBoundedAndWakesOnOutput(t *testing.T) {
	r := newRing(64)
	start := time.Now()
	c := r.wait(context.Background(), 0, 64, 150*time.Millisecond, func(c chunk) bool { return len(c.data) > 0 })
	if d := time.Since(start); d < 140*time.Millisecond || d > 5*time.Second || len(c.data) != 0 {
		t.Fatalf("a wait without output took %s and read %q", d, c.data)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		r.write([]byte("partial "))
		time.Sleep(50 * time.Millisecond)
		r.write([]byte("prompt> "))
	}()
	c = r.wait(context.Background(), 0, 64, 10*time.Second, func(c chunk) bool { return strings.Contains(string(c.data), "prompt>") })
	if string(c.data) != "partial prompt> " {
		t.Fatalf("wait until the prompt read %q", c.data)
	}
}

func TestCleanRemovesEscapesAndKeepsText(t *testing.T) {
	in := "\x1b[?2004h\x1b[1;32mok\x1b[0m\r\nline\x1b]0;title\x07 two\ttab\x1b(B\x07\x1b[" + "é"
	if got, want := clean([]byte(in)), "ok\nline two\ttab"; got != want {
		t.Fatalf("clean = %q, want %q", got, want)
	}
	if got := clean([]byte("caf\xe9")); got != "caf\ufffd" {
		t.Fatalf("invalid UTF-8: %q", got)
	}
}

func TestWholeRunesKeepsAnIncompleteCharacterForTheNextRead(t *testing.T) {
	b := []byte("aé")
	if got := wholeRunes(b[:2]); string(got) != "a" {
		t.Fatalf("cut é: %q", got)
	}
	if got := wholeRunes(b); string(got) != "aé" {
		t.Fatalf("whole: %q", got)
	}
}

func TestEncodeInputNamesAnUnknownKey(t *testing.T) {
	b, err := encodeInput("ls", []string{"Enter", "Ctrl-C", "Up"})
	if err != nil || string(b) != "ls\r\x03\x1b[A" {
		t.Fatalf("encode = %q, %v", b, err)
	}
	if _, err := encodeInput("", []string{"Enter", "Hyper"}); err == nil || !strings.Contains(err.Error(), `"keys[1]"`) {
		t.Fatalf("unknown key: %v", err)
	}
}
