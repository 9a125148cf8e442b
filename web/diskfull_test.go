package web_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/govern"
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
	// Its own row (a loaded machine may have made other calls of the test
	// outlast the budget too; their ends are written the same way).
	page := f.get(t, b, "/tasks")
	row, _, _ := strings.Cut(page[max(0, strings.Index(page, `data-task-id="`+fid+`"`)):], "</li>")
	if !strings.Contains(row, fid) || strings.Contains(row, "still running") {
		t.Fatalf("Tasks still says the call is running after its end was recorded:\n%s", row)
	}
}

// TestFullDiskIsSaidOnEveryPageAndAction: with the disk full, every page
// carries the banner (Permits and Setup too; Status leads with its own
// sentence), and an Allow once that cannot be recorded says so on the
// page in words (never a bare HTTP 500 that a form sent in place shows
// nothing of); the request keeps waiting, and is allowed once there is
// room.
func TestFullDiskIsSaidOnEveryPageAndAction(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-full-allow")
	pid, fid := execNeedingPermit(t, c, "first")
	db := f.in.App.DB
	var pages int
	if err := db.W.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	// Large writes first, then small ones: near a full disk a small
	// record still fits where a large one does not.
	for _, size := range []int{2000, 1} {
		for i := 0; ; i++ {
			r := c.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(f.in.Root, "fill.txt"), "data": strings.Repeat("x", size)})
			if r.Get("error.code") == "disk_full" {
				break
			}
			if i == 1000 {
				t.Fatalf("the disk never filled: %s", r.Raw)
			}
		}
	}
	for _, path := range []string{"/permits", "/setup", "/tasks", "/changes", "/ledger", "/safety"} {
		if page := f.get(t, b, path); !strings.Contains(page, `data-testid="disk-full-banner"`) || !strings.Contains(page, "Free some space on that disk") {
			t.Errorf("%s does not say the disk is full", path)
		}
	}
	if strings.Contains(f.get(t, b, "/"), "empty the Recycle Bin") {
		t.Error("Status names the Recycle Bin on a system that has none")
	}
	r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/permits" {
		t.Fatalf("Allow once on a full disk answers %d (%s), want the Permits page again: %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, "That did not happen: the disk that holds Hearth&#39;s data is full") || strings.Contains(page, "You allowed it") {
		t.Fatalf("after Allow once on a full disk the page does not say it failed:\n%s", page)
	}
	if ps, _ := f.in.App.Operator.Permits(t.Context(), "pending"); !slices.ContainsFunc(ps, func(p govern.Permit) bool { return p.ID == pid }) {
		t.Fatalf("the request must keep waiting: %+v", ps)
	}

	if _, err := db.W.Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); strings.Contains(f.get(t, b, "/permits"), `data-testid="disk-full-banner"`); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the banner stays after room returned")
		}
	}
	if r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve with room again: %d %s", r.StatusCode, r.body)
	}
	if env := await(t, c, fid); env["state"] != "completed" {
		t.Fatalf("the allowed call: %v", env)
	}
}
