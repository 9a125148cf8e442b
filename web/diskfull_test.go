package web_test

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestFullDiskIsSaidOnceAndClearsByItself fills the database to SQLite's
// page limit (PRAGMA max_page_count on the one write connection: every
// write that needs a new page fails with SQLITE_FULL, as on a full disk).
// Every call that changes something then fails closed with Hearth's own
// words for the model; Status leads with the full disk in plain words and
// is not green; the log says it once, however many calls fail; and when
// room returns, Status clears by itself, the log says so once, and calls
// run again.
func TestFullDiskIsSaidOnceAndClearsByItself(t *testing.T) {
	logs := &syncBuffer{}
	f := newFixtureWith(t, hearthtest.Trusted, func(o *app.Options) {
		o.Log = slog.New(slog.NewTextHandler(logs, nil))
	})
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-full")
	db := f.in.App.DB
	var pages int
	if err := db.W.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	exec := func() *hearthtest.Result {
		return c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{strings.Repeat("x", 2000)}})
	}
	var r *hearthtest.Result
	for i := 0; i < 300; i++ {
		if r = exec(); r.State() != "completed" {
			break
		}
	}
	if r.State() != "failed" || r.Get("error.code") != "disk_full" {
		t.Fatalf("with the disk full a call answers: %s", r.Raw)
	}
	if msg, _ := r.Get("error.message").(string); !strings.Contains(msg, "disk that holds Hearth's data is full") || strings.Contains(msg, "(13)") {
		t.Fatalf("the model is not told in Hearth's words: %q", msg)
	}
	for range 5 {
		if r := exec(); r.Get("error.code") != "disk_full" {
			t.Fatalf("a later call with the disk full: %s", r.Raw)
		}
	}
	page := f.get(t, b, "/")
	if !strings.Contains(page, `data-testid="status-disk-full"`) || !strings.Contains(page, "Free some space on that disk") {
		t.Fatalf("Status does not say the disk is full:\n%s", page)
	}
	if strings.Contains(page, `class="sentence good"`) {
		t.Fatal("Status stays green with the disk full")
	}
	out := logs.String()
	if n := strings.Count(out, "the disk holding Hearth's data is full"); n != 1 {
		t.Fatalf("the log says the disk is full %d times, want once:\n%s", n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "full (13)") && !strings.Contains(line, "the disk holding Hearth's data is full") {
			t.Fatalf("the log repeats the full disk as another error:\n%s", out)
		}
	}

	// Room again: nothing else needs to happen for Status to clear.
	if _, err := db.W.Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); strings.Contains(f.get(t, b, "/"), `data-testid="status-disk-full"`); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Status still says the disk is full after room returned")
		}
	}
	if n := strings.Count(logs.String(), "has room again"); n != 1 {
		t.Fatalf("the log says room returned %d times, want once:\n%s", n, logs.String())
	}
	if r := exec(); r.State() != "completed" {
		t.Fatalf("with room again a call answers: %s", r.Raw)
	}
}
