package fsops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/store"
)

type testEnv struct {
	e          *Engine
	root, data string
}

// newTestEngine builds an Engine over a real temporary root and a real
// SQLite database in a data directory that is itself under the root (and
// denied), as a user who makes their home a root would have it.
func newTestEngine(t testing.TB) testEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "home")
	data := filepath.Join(root, ".local", "hearth")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(data, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	roots, err := NewRoots([]string{root}, []string{data})
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{DB: db, Roots: roots, SpillDir: filepath.Join(data, "fs-undo")}
	e.Documents.CacheDir = testPDFCache
	t.Cleanup(func() { e.Documents.Close() })
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return testEnv{e: e, root: root, data: data}
}

func (env testEnv) path(parts ...string) string {
	return filepath.Join(append([]string{env.root}, parts...)...)
}

func mustRead(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func conflictOf(t *testing.T, err error, reason string) *ConflictError {
	t.Helper()
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want a conflict (%s)", err, reason)
	}
	if ce.Reason != reason {
		t.Fatalf("conflict reason %q, want %q (%s)", ce.Reason, reason, ce.Message)
	}
	return ce
}

func TestWriteCreateAndReplace(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("dir", "sub", "f.txt")

	w1, err := env.e.Write(ctx, "r1", WriteInput{Path: p, Data: "one", ExpectedSHA256: ExpectAbsent()})
	if err != nil {
		t.Fatal(err)
	}
	if !w1.Created || w1.PreviousSHA256 != nil || *w1.SHA256 != hashBytes([]byte("one")) || w1.ReplaceAttempts != 1 ||
		w1.Size != 3 || !validReceiptID(w1.ReceiptID) {
		t.Fatalf("first write result %+v", w1)
	}
	if got := mustRead(t, p); got != "one" {
		t.Fatalf("content %q", got)
	}

	// null precondition on an existing file
	_, err = env.e.Write(ctx, "r1", WriteInput{Path: p, Data: "two", ExpectedSHA256: ExpectAbsent()})
	ce := conflictOf(t, err, ReasonExists)
	if ce.Actual == nil || *ce.Actual != *w1.SHA256 || ce.Expected != "absent" {
		t.Fatalf("conflict %+v", ce)
	}
	// wrong hash
	wrong, _ := ExpectSHA(strings.Repeat("ab", 32))
	_, err = env.e.Write(ctx, "r1", WriteInput{Path: p, Data: "two", ExpectedSHA256: wrong})
	conflictOf(t, err, ReasonHashMismatch)
	// hash on a missing file
	_, err = env.e.Write(ctx, "r1", WriteInput{Path: env.path("nope.txt"), Data: "x", ExpectedSHA256: wrong})
	conflictOf(t, err, ReasonMissing)
	if got := mustRead(t, p); got != "one" {
		t.Fatalf("a conflict changed the file: %q", got)
	}

	right, _ := ExpectSHA(strings.ToUpper(*w1.SHA256))
	w2, err := env.e.Write(ctx, "r1", WriteInput{Path: p, Data: "dHdv", Encoding: "base64", ExpectedSHA256: right})
	if err != nil {
		t.Fatal(err)
	}
	if w2.Created || *w2.PreviousSHA256 != *w1.SHA256 || mustRead(t, p) != "two" {
		t.Fatalf("second write %+v, content %q", w2, mustRead(t, p))
	}
	// no precondition
	if _, err := env.e.Write(ctx, "r1", WriteInput{Path: p, Data: "three"}); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRefusals(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	cases := []struct {
		in   WriteInput
		want error
	}{
		{WriteInput{Path: "relative.txt", Data: "x"}, ErrContainment},
		{WriteInput{Path: filepath.Join(env.data, "hearth.db"), Data: "x"}, ErrContainment},
		{WriteInput{Path: env.path("x"), Data: "!!", Encoding: "base64"}, ErrInvalidInput},
		{WriteInput{Path: env.path("x"), Data: "x", Encoding: "latin1"}, ErrInvalidInput},
		{WriteInput{Path: env.root, Data: "x"}, ErrInvalidInput}, // a directory
	}
	for _, c := range cases {
		if _, err := env.e.Write(ctx, "r", c.in); !errors.Is(err, c.want) {
			t.Errorf("Write(%+v) = %v, want %v", c.in, err, c.want)
		}
	}
}

func TestExpectJSON(t *testing.T) {
	hash := strings.Repeat("0f", 32)
	tests := []struct {
		in   string
		want Expect
		err  bool
	}{
		{`{"path":"x"}`, Expect{}, false},
		{`{"path":"x","expected_sha256":null}`, Expect{Set: true, Null: true}, false},
		{`{"path":"x","expected_sha256":"` + hash + `"}`, Expect{Set: true, SHA: hash}, false},
		{`{"path":"x","expected_sha256":"` + strings.ToUpper(hash) + `"}`, Expect{Set: true, SHA: hash}, false},
		{`{"path":"x","expected_sha256":"abc"}`, Expect{}, true},
		{`{"path":"x","expected_sha256":5}`, Expect{}, true},
	}
	for _, tt := range tests {
		var in WriteInput
		err := json.Unmarshal([]byte(tt.in), &in)
		if tt.err != (err != nil) || !tt.err && in.ExpectedSHA256 != tt.want {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", tt.in, in.ExpectedSHA256, err, tt.want)
			continue
		}
		if tt.err {
			continue
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var back WriteInput
		if err := json.Unmarshal(out, &back); err != nil || back.ExpectedSHA256 != tt.want {
			t.Errorf("round trip of %s via %s = %+v, %v", tt.in, out, back.ExpectedSHA256, err)
		}
	}
}

func TestPatchPreservesCRLFAndBOM(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("win.txt")
	orig := "\xEF\xBB\xBFline one\r\nline two\r\nline three\r\n"
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{
		{Old: "line one\nline two\n", New: "first\nsecond\n"},
		{Old: "three", New: "3"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := "\xEF\xBB\xBFfirst\r\nsecond\r\nline 3\r\n"
	if got := mustRead(t, p); got != want {
		t.Fatalf("content %q, want %q", got, want)
	}
	if !res.NormalizedLineEndings || res.Replacements != 2 || *res.SHA256 != hashBytes([]byte(want)) {
		t.Fatalf("result %+v", res)
	}
	// An exact match reports no normalization.
	res, err = env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{{Old: "first", New: "1st"}}})
	if err != nil || res.NormalizedLineEndings {
		t.Fatalf("result %+v, %v", res, err)
	}
}

func TestPatchConflicts(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("f.txt")
	if err := os.WriteFile(p, []byte("a b a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{{"b", "B"}, {"a", "A"}}})
	ce := conflictOf(t, err, ReasonMatchCount)
	if ce.Replacement != 1 || ce.Matches != 2 || ce.Path != p || ce.Actual == nil || !strings.Contains(ce.Message, "replacement 1") {
		t.Fatalf("conflict %+v", ce)
	}
	b, _ := json.Marshal(ce)
	if !strings.Contains(string(b), `"replacement":1,"matches":2`) {
		t.Fatalf("conflict JSON %s", b)
	}
	_, err = env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{{"zzz", "y"}}})
	if ce := conflictOf(t, err, ReasonMatchCount); ce.Replacement != 0 || ce.Matches != 0 {
		t.Fatalf("conflict %+v", ce)
	}
	wrong, _ := ExpectSHA(strings.Repeat("00", 32))
	_, err = env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{{"b", "B"}}, ExpectedSHA256: wrong})
	ce = conflictOf(t, err, ReasonHashMismatch)
	if b, _ := json.Marshal(ce); strings.Contains(string(b), "replacement") || !strings.Contains(string(b), `"current_sha256":"`) {
		t.Fatalf("conflict JSON %s", b)
	}
	if got := mustRead(t, p); got != "a b a\n" {
		t.Fatalf("conflicts changed the file: %q", got)
	}
	if _, err := env.e.Patch(ctx, "r", PatchInput{Path: env.path("missing.txt"), Replacements: []Replacement{{"a", "b"}}}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("patch of a missing file: %v", err)
	}
	if _, err := env.e.Patch(ctx, "r", PatchInput{Path: p}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("patch without replacements: %v", err)
	}
	// No receipt is left behind by refused operations.
	var n int
	if err := env.e.DB.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d receipts after only refusals (%v)", n, err)
	}
}

func TestUndoRoundTrip(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("notes.txt")

	created, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{{"v1", "v2"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Undo the patch: back to v1.
	u1, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: patched.ReceiptID})
	if err != nil {
		t.Fatal(err)
	}
	if mustRead(t, p) != "v1" || *u1.SHA256 != *created.SHA256 || u1.UndoneReceiptID != patched.ReceiptID || u1.ReceiptID == patched.ReceiptID {
		t.Fatalf("undo result %+v, content %q", u1, mustRead(t, p))
	}
	// Undoing it again is a conflict.
	_, err = env.e.Undo(ctx, "r", UndoInput{ReceiptID: patched.ReceiptID})
	conflictOf(t, err, ReasonAlreadyUndone)
	// Undo the undo: v2 again.
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: u1.ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, p); got != "v2" {
		t.Fatalf("after undoing the undo: %q", got)
	}
	// The creation cannot be undone now: the file is not what it wrote.
	_, err = env.e.Undo(ctx, "r", UndoInput{ReceiptID: created.ReceiptID})
	ce := conflictOf(t, err, ReasonChanged)
	if ce.Expected != *created.SHA256 || ce.Actual == nil || *ce.Actual != hashBytes([]byte("v2")) {
		t.Fatalf("conflict %+v", ce)
	}
	if got := mustRead(t, p); got != "v2" {
		t.Fatalf("a conflicting undo changed the file: %q", got)
	}

	// Undo of a creation removes the file.
	q := env.path("new.txt")
	w, err := env.e.Write(ctx, "r", WriteInput{Path: q, Data: "fresh", ExpectedSHA256: ExpectAbsent()})
	if err != nil {
		t.Fatal(err)
	}
	u, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: w.ReceiptID})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Deleted || u.SHA256 != nil {
		t.Fatalf("undo of a creation: %+v", u)
	}
	if _, err := os.Stat(q); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file still there: %v", err)
	}
	// ...and undoing that restores it.
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: u.ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, q); got != "fresh" {
		t.Fatalf("restored %q", got)
	}

	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: "rcpt_aaaaaaaaaaaaaaaaaaaa"}); !errors.Is(err, ErrReceiptNotFound) {
		t.Fatalf("unknown receipt: %v", err)
	}
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: "../../etc"}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("bad receipt id: %v", err)
	}
}

func TestUndoConflictAfterExternalEdit(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("f.txt")
	w, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "hearth wrote this"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("the user edited it"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = env.e.Undo(ctx, "r", UndoInput{ReceiptID: w.ReceiptID})
	conflictOf(t, err, ReasonChanged)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	_, err = env.e.Undo(ctx, "r", UndoInput{ReceiptID: w.ReceiptID})
	if ce := conflictOf(t, err, ReasonChanged); ce.Actual != nil {
		t.Fatalf("conflict on a removed file should have a null current hash: %+v", ce)
	}
}

func TestUndoLargeFileUsesSpill(t *testing.T) {
	env := newTestEngine(t)
	env.e.InlinePriorMax = 1024
	ctx := context.Background()
	p := env.path("big.bin")
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "small now"})
	if err != nil {
		t.Fatal(err)
	}
	var inline []byte
	var file string
	if err := env.e.DB.R.QueryRow(`SELECT prior, COALESCE(prior_file, '') FROM fs_receipts WHERE id = ?`, w.ReceiptID).
		Scan(&inline, &file); err != nil {
		t.Fatal(err)
	}
	if inline != nil || file == "" {
		t.Fatalf("prior inline %d bytes, file %q; want a spill file", len(inline), file)
	}
	if _, err := os.Stat(filepath.Join(env.e.SpillDir, file)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: w.ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, big) {
		t.Fatalf("restored %d bytes, want %d", len(got), len(big))
	}
}

func TestMutationRetryReportsAttempts(t *testing.T) {
	env := newTestEngine(t)
	env.e.Replacer = atomicfile.Replacer{Rename: flakyRename(2, atomicfile.TransientErrnos()[1]), Sleep: func(time.Duration) {}}
	res, err := env.e.Write(context.Background(), "r", WriteInput{Path: env.path("f.txt"), Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ReplaceAttempts != 3 {
		t.Fatalf("replace_attempts = %d, want 3", res.ReplaceAttempts)
	}
}

func TestFailedReplaceVoidsReceipt(t *testing.T) {
	env := newTestEngine(t)
	env.e.InlinePriorMax = 4
	p := env.path("f.txt")
	if err := os.WriteFile(p, []byte("old content, spilled"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.e.Replacer = atomicfile.Replacer{Rename: flakyRename(100, atomicfile.TransientErrnos()[0]), Sleep: func(time.Duration) {}, MaxAttempts: 3}
	_, err := env.e.Write(context.Background(), "r", WriteInput{Path: p, Data: "new"})
	if err == nil {
		t.Fatal("write succeeded")
	}
	var state string
	if err := env.e.DB.R.QueryRow(`SELECT state FROM fs_receipts`).Scan(&state); err != nil || state != "void" {
		t.Fatalf("receipt state %q (%v), want void", state, err)
	}
	if des, _ := os.ReadDir(env.e.SpillDir); len(des) != 0 {
		t.Fatalf("spill files left: %d", len(des))
	}
	if got := mustRead(t, p); got != "old content, spilled" || len(tempNames(t, env.root)) != 0 {
		t.Fatalf("content %q, temps %v", got, tempNames(t, env.root))
	}
}

// TestRecoverSettlesCrashes rebuilds the states a crash can leave at each
// step of mutate and checks that Recover makes them consistent.
func TestRecoverSettlesCrashes(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	e := env.e
	dir := env.path("work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	done := filepath.Join(dir, "renamed.txt")    // crash after the rename, before the commit
	notDone := filepath.Join(dir, "pending.txt") // crash before the rename
	for p, s := range map[string]string{done: "new", notDone: "old"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, atomicfile.TempPrefix+"123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.SpillDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.SpillDir, "rcpt_orphan.prior"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	insert := func(id, path, pre, post string) {
		t.Helper()
		if _, err := e.DB.W.Exec(`INSERT INTO fs_receipts(id, route, op, path, existed_before, pre_sha256, post_sha256,
			prior, state, created_at) VALUES (?, 'r', 'write', ?, 1, ?, ?, ?, 'pending', 1)`,
			id, path, pre, post, []byte("old")); err != nil {
			t.Fatal(err)
		}
	}
	old, neu := hashBytes([]byte("old")), hashBytes([]byte("new"))
	insert("rcpt_done", done, old, neu)
	insert("rcpt_notdone", notDone, old, neu)
	if _, err := e.DB.W.Exec(`INSERT INTO fs_touched_dirs(dir, touched_at) VALUES (?, 1), (?, 1)`,
		dir, env.path("gone")); err != nil {
		t.Fatal(err)
	}

	rep, err := e.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := RecoverReport{Committed: 1, Voided: 1, TempsRemoved: 1, SpillsRemoved: 1}
	if rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	states := map[string]string{}
	rows, err := e.DB.R.Query(`SELECT id, state FROM fs_receipts`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, st string
		if err := rows.Scan(&id, &st); err != nil {
			t.Fatal(err)
		}
		states[id] = st
	}
	rows.Close()
	if states["rcpt_done"] != "committed" || states["rcpt_notdone"] != "void" {
		t.Fatalf("states %v", states)
	}
	var dirs int
	if err := e.DB.R.QueryRow(`SELECT COUNT(*) FROM fs_touched_dirs`).Scan(&dirs); err != nil || dirs != 1 {
		t.Fatalf("%d touched dirs (%v), want the missing one forgotten", dirs, err)
	}
	// A second run finds nothing to do.
	if rep, err := e.Recover(ctx); err != nil || rep != (RecoverReport{}) {
		t.Fatalf("second recover %+v, %v", rep, err)
	}
}

func TestConcurrentWritesSerialize(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("race.txt")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := range 8 {
		wg.Go(func() {
			_, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: strings.Repeat("x", i+1), ExpectedSHA256: ExpectAbsent()})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ErrConflict):
				conflicts++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Fatalf("%d writes won and %d conflicted; want exactly one winner", wins, conflicts)
	}
}
