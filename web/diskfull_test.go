package web_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
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

// TestCallEndRecordedWhenRoomReturns: a call that outlived the inline
// budget and ended while the disk was full could not have its end
// written; once there is room again it is written by itself, without a
// restart: its real result arrives in its chat (not an UNKNOWN, which
// would close the chat's gate for something Hearth does know) and Tasks no
// longer says "still running; the result will come".
func TestCallEndRecordedWhenRoomReturns(t *testing.T) {
	f := newFixture(t, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-full-end")
	marker := filepath.Join(t.TempDir(), "ended")
	// Slower than the inline budget, and with more output than the full
	// disk leaves room for.
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c",
		`while [ ! -e "$1.go" ]; do sleep 0.05; done; head -c 30000 /dev/zero | tr '\0' x; touch "$1"`, "sh", marker}})
	fid, _ := r.Get("future_id").(string)
	if r.State() != "pending" || fid == "" {
		t.Fatalf("the slow exec answers: %s", r.Raw)
	}
	db := f.in.App.DB
	var pages int
	if err := db.W.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{strings.Repeat("x", 2000)}})
		if r.Get("error.code") == "disk_full" {
			break
		}
		if i == 300 {
			t.Fatalf("the disk never filled: %s", r.Raw)
		}
	}
	if err := os.WriteFile(marker+".go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow exec never ended")
		}
	}
	time.Sleep(500 * time.Millisecond) // its end is tried (and refused) meanwhile
	if dispatchtest.State(t, db, fid) == "completed" {
		t.Fatal("with the disk full the exec's end was recorded anyway: the test did not fill the disk")
	}

	if _, err := db.W.Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	arr := c.WaitArrival(fid)
	if hearthtest.Get(arr, "envelope.state") != "completed" || hearthtest.Get(arr, "envelope.result.exit_code") != float64(0) {
		t.Fatalf("the exec's end once room returned: %v", arr)
	}
	if page := f.get(t, b, "/tasks"); strings.Contains(page, "still running") {
		t.Fatalf("Tasks still says the call is running after its end was recorded:\n%s", page)
	}
}
