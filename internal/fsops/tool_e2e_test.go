package fsops_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/store"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestFSConflictAndUndoOverMCP(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask: fs writes need no permit
	c := hearthtest.Connect(t, in.URL, "fs")
	file := filepath.Join(in.Root, "work", "notes.txt")

	r := c.Call("fs", map[string]any{"operation": "write", "path": file, "data": "line one\r\nline two\r\n", "expected_sha256": nil})
	if r.State() != "completed" || r.Get("result.sha256") != sha("line one\r\nline two\r\n") {
		t.Fatalf("create: %s", r.Raw)
	}
	first := r.Get("result.receipt_id").(string)
	r = c.Call("fs", map[string]any{"operation": "write", "path": file, "data": "x", "expected_sha256": nil})
	if r.State() != "conflict" || !r.IsError {
		t.Fatalf("null precondition on an existing file: %s", r.Raw)
	}
	// A patch written with LF matches the CRLF file and keeps CRLF.
	r = c.Call("fs", map[string]any{"operation": "patch", "path": file, "replacements": []map[string]string{{"old": "one\nline", "new": "1\nline"}}})
	if r.State() != "completed" || r.Get("result.normalized_line_endings") != true {
		t.Fatalf("patch: %s", r.Raw)
	}
	patched := r.Get("result.receipt_id").(string)
	b, _ := os.ReadFile(file)
	if string(b) != "line 1\r\nline two\r\n" {
		t.Fatalf("CRLF not preserved: %q", b)
	}
	r = c.Call("fs", map[string]any{"operation": "patch", "path": file, "replacements": []map[string]string{{"old": "line", "new": "L"}}})
	if r.State() != "conflict" || r.Get("error.details.matches") != float64(2) || r.Get("error.details.replacement") != float64(0) {
		t.Fatalf("double match must conflict naming the replacement and count: %s", r.Raw)
	}
	r = c.Call("fs", map[string]any{"operation": "patch", "path": file, "replacements": []map[string]string{{"old": "absent", "new": "x"}}, "expected_sha256": sha("nope")})
	if r.State() != "conflict" {
		t.Fatalf("hash precondition: %s", r.Raw)
	}
	// Undo of the first receipt conflicts: the file changed since.
	r = c.Call("fs", map[string]any{"operation": "undo", "receipt_id": first})
	if r.State() != "conflict" {
		t.Fatalf("stale undo: %s", r.Raw)
	}
	r = c.Call("fs", map[string]any{"operation": "undo", "receipt_id": patched})
	if r.State() != "completed" {
		t.Fatalf("undo: %s", r.Raw)
	}
	if b, _ := os.ReadFile(file); string(b) != "line one\r\nline two\r\n" {
		t.Fatalf("undo content: %q", b)
	}
	r = c.Call("fs", map[string]any{"operation": "undo", "receipt_id": first})
	if r.State() != "completed" {
		t.Fatalf("undo of the creating write: %s", r.Raw)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("undoing a create must remove the file: %v", err)
	}
	// Reads, stat, list, search.
	c.Call("fs", map[string]any{"operation": "write", "path": file, "data": "alpha\nbeta needle\n"})
	if r := c.Call("fs", map[string]any{"operation": "read", "path": file, "offset": 6, "limit": 4}); r.Get("result.data") != "beta" {
		t.Fatalf("read: %s", r.Raw)
	}
	if r := c.Call("fs", map[string]any{"operation": "stat", "path": file}); r.Get("result.size") != float64(18) {
		t.Fatalf("stat: %s", r.Raw)
	}
	if r := c.Call("fs", map[string]any{"operation": "list", "path": filepath.Dir(file)}); !strings.Contains(string(r.Raw), "notes.txt") {
		t.Fatalf("list: %s", r.Raw)
	}
	if r := c.Call("fs", map[string]any{"operation": "search", "path": in.Root, "query": "needle"}); !strings.Contains(string(r.Raw), "notes.txt") {
		t.Fatalf("search: %s", r.Raw)
	}
	// Containment: outside the roots, the data directory's database, '..'.
	for _, p := range []string{"/etc/passwd", filepath.Join(in.Home, "hearth.db"), in.Root + "/work/../../x"} {
		r := c.Call("fs", map[string]any{"operation": "write", "path": p, "data": "x"})
		if r.State() != "blocked" || r.Get("error.code") != "outside_roots" {
			t.Errorf("write %s: %s", p, r.Raw)
		}
	}
}

// TestFSCrashMidWriteStream SIGKILLs a real serve while a client streams
// writes to several files; after a restart each file is wholly one of the
// versions written, no temporary file is left, and the receipts in the
// serve's database form a settled chain ending at each file's content.
// Every other version is larger than fsops.DefaultInlinePriorMax, so the
// serve spills prior copies to files and the walk checks those too.
func TestFSCrashMidWriteStream(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{work} })
	p := hearthtest.StartProcess(t, home)
	version := func(file, v int) string {
		unit := fmt.Sprintf("file %d version %d|", file, v)
		n := 3000
		if v%2 == 1 {
			n = fsops.DefaultInlinePriorMax/len(unit) + 1000
		}
		return strings.Repeat(unit, n)
	}
	const files = 4
	var wg sync.WaitGroup
	var written [files]atomic.Int64
	stop := make(chan struct{})
	for f := range files {
		c := hearthtest.Connect(t, p.URL, fmt.Sprintf("w%d", f))
		wg.Go(func() {
			for v := 0; ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.TryCall("fs", map[string]any{"operation": "write", "path": filepath.Join(work, fmt.Sprintf("f%d.txt", f)), "data": version(f, v)}, nil); err != nil {
					return // the server died mid-call
				}
				written[f].Add(1)
			}
		})
	}
	// Stream for a while, and at least until every file has had a large
	// version overwritten (versions 0, 1, 2), so some prior copy spilled.
	time.Sleep(1500 * time.Millisecond)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		done := true
		for f := range files {
			done = done && written[f].Load() >= 3
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writers did not get three versions of every file written in a minute")
		}
	}
	p.Kill()
	close(stop)
	wg.Wait()
	p2 := hearthtest.StartProcess(t, home)
	// Connect returns once the serve answers, which it does only after
	// its start-up Recover has settled the receipts the kill left pending.
	c := hearthtest.Connect(t, p2.URL, "check")
	var paths []string
	for f := range files {
		path := filepath.Join(work, fmt.Sprintf("f%d.txt", f))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("file %d: %v", f, err)
		}
		var v int
		if _, err := fmt.Sscanf(string(b), "file %d version %d|", new(int), &v); err != nil || string(b) != version(f, v) {
			t.Fatalf("file %d is not wholly one version (%d bytes)", f, len(b))
		}
		r := c.Call("fs", map[string]any{"operation": "stat", "path": path})
		if r.Get("result.sha256") != sha(string(b)) {
			t.Fatalf("stat sha differs: %s", r.Raw)
		}
		paths = append(paths, path)
	}
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".hearth-tmp-") {
			t.Fatalf("stale temp file %s after restart", e.Name())
		}
	}
	db, err := store.Open(context.Background(), filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The serve keeps its spilled prior copies in <home>/receipts.
	if spilled := fsops.CheckReceiptChain(t, db, filepath.Join(home, "receipts"), paths); spilled == 0 {
		t.Fatal("no prior copy was spilled; the test no longer exercises spill files")
	}
}

// BenchmarkFS64K compares fs.read / fs.write of 64 KiB through the real
// HTTP handler with os.ReadFile and a plain atomic write, in one run.
func BenchmarkFS64K(b *testing.B) {
	in := hearthtest.Start(b, nil)
	file := filepath.Join(in.Root, "bench.txt")
	data := strings.Repeat("0123456789abcdef", 4096)
	os.WriteFile(file, []byte(data), 0o600)
	client := &http.Client{}
	// post sends one tools/call. The first call of each sub-benchmark is
	// checked (status 200 and a completed call), so a benchmark of failing
	// calls cannot pass for a fast one; the rest only drain the body.
	post := func(b *testing.B, first *bool, body string) {
		req, err := http.NewRequest("POST", in.URL, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if !*first {
			io.Copy(io.Discard, resp.Body)
			return
		}
		*first = false
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"state":"completed"`) {
			b.Fatalf("first call: status %d, body %.500s", resp.StatusCode, got)
		}
	}
	readCall := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"read","path":%q,"limit":65536}}}`, file)
	writeCall := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"write","path":%q,"data":%q}}}`, file, data)
	b.Run("hearth_read", func(b *testing.B) {
		first := true
		for b.Loop() {
			post(b, &first, readCall)
		}
	})
	b.Run("os_readfile", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile(file); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hearth_write", func(b *testing.B) {
		first := true
		for b.Loop() {
			post(b, &first, writeCall)
		}
	})
	// The same write admitted by the real governor but journaled nowhere
	// (ledgerOffGovernor), to measure what the ledger adds.
	b.Run("hearth_write_unjournaled", func(b *testing.B) {
		gov := in.App.Dispatcher.Gov
		in.App.Dispatcher.Gov = ledgerOffGovernor{gov}
		defer func() { in.App.Dispatcher.Gov = gov }()
		first := true
		for b.Loop() {
			post(b, &first, writeCall)
		}
	})
	b.Run("atomic_write", func(b *testing.B) {
		for b.Loop() {
			if _, err := atomicfile.Write(file, []byte(data), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ledgerOffGovernor is a benchmark's governor: the real one's admission
// (e-stop, policy, UNKNOWN gate, permits) with no journal at all: no replay
// lookup, no intent before a call and no outcome after it. It exists only
// to measure what the host ledger adds to a write; nothing that ships
// runs without the journal.
type ledgerOffGovernor struct{ callpath.Governor }

func (ledgerOffGovernor) Replay(context.Context, *callpath.Admission) (*callpath.Envelope, error) {
	return nil, nil
}
func (ledgerOffGovernor) Begin(context.Context, *callpath.Admission) error { return nil }
func (ledgerOffGovernor) BeginTx(context.Context, *sql.Tx, *callpath.Admission) error {
	return nil
}
func (ledgerOffGovernor) Finish(context.Context, *sql.Tx, *callpath.Admission, *callpath.Envelope) error {
	return nil
}
func (ledgerOffGovernor) InFlight(context.Context, *sql.Tx, *callpath.Admission) error { return nil }
