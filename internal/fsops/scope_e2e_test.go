package fsops_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

const missingReceipt = "rcpt_aaaaaaaaaaaaaaaaaaaa"

// undoRefusedAsMissing fails unless c's fs.undo of id is answered exactly
// as its undo of an id that never existed (code, message naming the id,
// state), and leaves file with want.
func undoRefusedAsMissing(t *testing.T, c *hearthtest.Client, id, file, want string) {
	t.Helper()
	nf := c.Call("fs", map[string]any{"operation": "undo", "receipt_id": missingReceipt})
	got := c.Call("fs", map[string]any{"operation": "undo", "receipt_id": id})
	msg, _ := got.Get("error.message").(string)
	if !got.IsError || got.State() != "failed" || got.Get("error.code") != "not_found" || !strings.Contains(msg, id) {
		t.Fatalf("undo by %q of another conversation's receipt: %s", c.Conversation, got.Raw)
	}
	// Every side-effecting call gets a fresh command_id; the rest of the
	// answer must be the same.
	norm := func(r *hearthtest.Result) string {
		e, _ := json.Marshal(map[string]any{"state": r.State(), "primitive": r.Get("primitive"), "error": r.Get("error"), "is_error": r.IsError})
		return strings.ReplaceAll(string(e), id, missingReceipt)
	}
	if norm(got) != norm(nf) {
		t.Fatalf("undo by %q: another conversation's receipt is told apart from a missing one:\n%s\n%s", c.Conversation, got.Raw, nf.Raw)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != want {
		t.Fatalf("a refused undo changed %s: %q %v", file, b, err)
	}
}

// undoWorks fails unless c's fs.undo of id completes and leaves file with
// want.
func undoWorks(t *testing.T, c *hearthtest.Client, id, file, want string) {
	t.Helper()
	r := c.Call("fs", map[string]any{"operation": "undo", "receipt_id": id})
	if r.State() != "completed" || r.Get("result.undone_receipt_id") != id {
		t.Fatalf("undo by the owner %q: %s", c.Conversation, r.Raw)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != want {
		t.Fatalf("after the owner's undo %s: %q %v", file, b, err)
	}
}

// TestFSUndoIsPerConversation drives the rule through real MCP clients:
// conversation A's receipt cannot be undone by conversation B or by an
// anonymous request, which hear what they would for an id that never
// existed; A's own undo works, and its undo receipt is A's again.
func TestFSUndoIsPerConversation(t *testing.T) {
	in := hearthtest.Start(t, nil)
	a := hearthtest.Connect(t, in.URL, "owner")
	b := hearthtest.Connect(t, in.URL, "other")
	anon := hearthtest.Connect(t, in.URL, "")
	file := filepath.Join(in.Root, "owned.txt")
	if err := os.WriteFile(file, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := a.Call("fs", map[string]any{"operation": "write", "path": file, "data": "after"})
	id, _ := r.Get("result.receipt_id").(string)
	if r.State() != "completed" || id == "" {
		t.Fatalf("write: %s", r.Raw)
	}
	undoRefusedAsMissing(t, b, id, file, "after")
	undoRefusedAsMissing(t, anon, id, file, "after")
	r = a.Call("fs", map[string]any{"operation": "undo", "receipt_id": id})
	undoID, _ := r.Get("result.receipt_id").(string)
	if r.State() != "completed" || undoID == "" {
		t.Fatalf("owner undo: %s", r.Raw)
	}
	if got, _ := os.ReadFile(file); string(got) != "before" {
		t.Fatalf("owner undo left %q", got)
	}
	undoRefusedAsMissing(t, b, undoID, file, "before")
	undoWorks(t, a, undoID, file, "after")

	// Anonymous requests share one scope: one undoes another's receipt.
	r = anon.Call("fs", map[string]any{"operation": "write", "path": file, "data": "anonymous"})
	anonID, _ := r.Get("result.receipt_id").(string)
	if anonID == "" {
		t.Fatalf("anonymous write: %s", r.Raw)
	}
	undoRefusedAsMissing(t, a, anonID, file, "anonymous")
	undoWorks(t, hearthtest.Connect(t, in.URL, ""), anonID, file, "after")
}

// TestFSUndoOfScatterAndRecipeWrites checks that receipts made by a
// run.scatter item and by a recipe step belong to the conversation that
// scattered or ran the recipe. (fs.undo itself is neither a scatter kind
// nor a recipe step, so every undo is a direct fs call.)
func TestFSUndoOfScatterAndRecipeWrites(t *testing.T) {
	// A recipe run answers inline only within the inline budget; a loaded
	// machine must not turn it into a pending future here.
	in := hearthtest.Start(t, func(c *config.Config) { c.DispatchInlineBudgetMS = 30_000 })
	a := hearthtest.Connect(t, in.URL, "owner")
	b := hearthtest.Connect(t, in.URL, "other")

	scattered := filepath.Join(in.Root, "scattered.txt")
	env := a.ScatterOne(map[string]any{"kind": "fs.write", "path": scattered, "data": "from scatter"})
	id, _ := hearthtest.Get(env, "result.receipt_id").(string)
	if env["state"] != "completed" || id == "" {
		t.Fatalf("scattered write: %v", env)
	}
	undoRefusedAsMissing(t, b, id, scattered, "from scatter")
	r := a.Call("fs", map[string]any{"operation": "undo", "receipt_id": id})
	if r.State() != "completed" {
		t.Fatalf("owner undo of the scattered write: %s", r.Raw)
	}
	if _, err := os.Stat(scattered); !os.IsNotExist(err) {
		t.Fatalf("undo of the scattered create left the file: %v", err)
	}

	stepped := filepath.Join(in.Root, "stepped.txt")
	if err := os.WriteFile(stepped, []byte("before recipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = a.Call("recipe", map[string]any{"operation": "create", "name": "write-one",
		"steps": []any{map[string]any{"primitive": "fs.write", "input": map[string]any{"path": stepped, "data": "from recipe"}}}})
	if r.IsError {
		t.Fatalf("recipe create: %s", r.Raw)
	}
	r = a.Call("recipe", map[string]any{"operation": "run", "name": "write-one"})
	id, _ = r.Get("result.steps.0.result.receipt_id").(string)
	if r.IsError || id == "" {
		t.Fatalf("recipe run: %s", r.Raw)
	}
	undoRefusedAsMissing(t, b, id, stepped, "from recipe")
	undoWorks(t, a, id, stepped, "before recipe")
}
