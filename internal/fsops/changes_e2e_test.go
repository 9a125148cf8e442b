package fsops_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestChangesAndUndoManyOverMCP: through a real Hearth and MCP client,
// fs.changes lists only the calling conversation's receipts (with a
// cursor), fs.undo with receipt_ids answers partial naming the conflict,
// more than 100 ids is refused naming the field, another conversation's
// receipt is not_found, and during the e-stop the undo is refused like
// every write.
func TestChangesAndUndoManyOverMCP(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // the trash the created file goes to
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "changes-a")
	other := hearthtest.Connect(t, in.URL, "changes-b")
	a, b := filepath.Join(in.Root, "a.txt"), filepath.Join(in.Root, "b.txt")
	var ids []any
	for _, p := range []string{a, b} {
		r := c.Call("fs", map[string]any{"operation": "write", "path": p, "data": "chat\n"})
		if r.State() != "completed" {
			t.Fatalf("write: %s", r.Raw)
		}
		ids = append(ids, r.Str("result.receipt_id"))
	}
	if r := other.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(in.Root, "c.txt"), "data": "other\n"}); r.State() != "completed" {
		t.Fatalf("write: %s", r.Raw)
	}
	r := c.Call("fs", map[string]any{"operation": "changes", "limit": 1})
	if r.State() != "completed" || r.Str("result.changes.0.path") != b || r.Str("result.next_cursor") == "" {
		t.Fatalf("changes page 1: %s", r.Raw)
	}
	r = c.Call("fs", map[string]any{"operation": "changes", "limit": 5, "cursor": r.Str("result.next_cursor")})
	if r.State() != "completed" || r.Str("result.changes.0.path") != a || r.Get("result.changes.1") != nil || r.Get("result.next_cursor") != nil {
		t.Fatalf("changes page 2: %s", r.Raw)
	}

	if r := other.Call("fs", map[string]any{"operation": "undo", "receipt_ids": ids}); r.Str("error.code") != "not_found" {
		t.Fatalf("foreign receipts: %s", r.Raw)
	}
	many := make([]any, 101)
	for i := range many {
		many[i] = ids[0]
	}
	if r := c.Call("fs", map[string]any{"operation": "undo", "receipt_ids": many}); r.State() != "failed" || !strings.Contains(r.Str("error.message"), "receipt_ids") {
		t.Fatalf("101 ids: %s", r.Raw)
	}

	if err := os.WriteFile(b, []byte("the person's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = c.Call("fs", map[string]any{"operation": "undo", "receipt_ids": ids})
	if r.State() != "partial" || r.Str("error.details.conflicts.0.path") != b || r.Str("result.undone.0.undone_receipt_id") != ids[0] {
		t.Fatalf("partial undo: %s", r.Raw)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("a.txt, which the chat created, is still there: %v", err)
	}

	if err := in.App.Operator.EStop(context.Background(), "test", "stop"); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("fs", map[string]any{"operation": "undo", "receipt_ids": []any{ids[1]}}); r.State() != "blocked" {
		t.Fatalf("undo during the e-stop: %s", r.Raw)
	}
	if r := c.Call("fs", map[string]any{"operation": "changes"}); r.State() != "completed" {
		t.Fatalf("changes (a read) during the e-stop: %s", r.Raw)
	}
}
