package artifacts_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/store"
)

func openStore(t *testing.T) *artifacts.Store {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &artifacts.Store{DB: db, Dir: filepath.Join(dir, "artifacts")}
}

// TestScopeHidesOtherConversations checks the store-level rule: another
// conversation's artifact fails exactly like a nonexistent one.
func TestScopeHidesOtherConversations(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	m, err := s.Put(ctx, "conv-a", "out.txt", "text/plain", "test", []byte("alpha\nbeta\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	anon, err := s.Put(ctx, "anon:1", "anon.txt", "text/plain", "test", []byte("gamma\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	const missing = "art_aaaaaaaaaaaaaaaaaaaa"
	_, errMissing := s.In("conv-b").Metadata(ctx, missing)
	want := strings.ReplaceAll(errMissing.Error(), missing, m.ID)

	b := s.In("conv-b")
	checks := map[string]error{}
	_, checks["metadata"] = b.Metadata(ctx, m.ID)
	_, checks["range"] = b.ReadRange(ctx, m.ID, 0, 10, "utf8")
	_, _, checks["search"] = b.Search(ctx, m.ID, "beta", 5)
	for op, err := range checks {
		if !errors.Is(err, artifacts.ErrNotFound) || err.Error() != want {
			t.Errorf("%s of another conversation's artifact: %v, want %q", op, err, want)
		}
	}
	if l, err := b.List(ctx, 10); err != nil || len(l) != 0 {
		t.Errorf("list of conv-b: %v %v", l, err)
	}

	a := s.In("conv-a")
	if c, err := a.ReadRange(ctx, m.ID, 0, 5, "utf8"); err != nil || c.Data != "alpha" {
		t.Errorf("owner range: %+v %v", c, err)
	}
	if ms, _, err := a.Search(ctx, m.ID, "beta", 5); err != nil || len(ms) != 1 || ms[0].Line != 2 {
		t.Errorf("owner search: %+v %v", ms, err)
	}
	if _, err := a.Metadata(ctx, anon.ID); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("a conversation reads an anonymous request's artifact: %v", err)
	}
	// Anonymous requests share one scope (primitive.RouteMatch).
	if _, err := s.In("anon:2").Metadata(ctx, anon.ID); err != nil {
		t.Errorf("another anonymous request: %v", err)
	}
	if _, err := s.In("anon:2").Metadata(ctx, m.ID); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("an anonymous request reads a conversation's artifact: %v", err)
	}
	// Operator paths are unscoped.
	if _, err := s.Metadata(ctx, m.ID); err != nil {
		t.Errorf("operator metadata: %v", err)
	}
	if _, err := s.ReadRange(ctx, m.ID, 0, 5, "utf8"); err != nil {
		t.Errorf("operator range: %v", err)
	}
}

// TestArtifactOperationsArePerConversation drives the rule through real
// MCP clients: conversation A's spilled output cannot be read, ranged,
// described or searched by conversation B (directly or as a scatter kind),
// and the refusal is the same as for an id that never existed.
func TestArtifactOperationsArePerConversation(t *testing.T) {
	if _, err := exec.LookPath("seq"); err != nil {
		t.Skip("needs seq")
	}
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); c.MaxOutputBytes = 256 })
	a := hearthtest.Connect(t, in.URL, "owner")
	b := hearthtest.Connect(t, in.URL, "other")
	r := a.Call("machine", map[string]any{"operation": "exec", "command": "seq", "args": []string{"1", "500"}})
	id, _ := r.Get("result.stdout.artifact.id").(string)
	if id == "" {
		t.Fatalf("no spill: %s", r.Raw)
	}
	const missing = "art_aaaaaaaaaaaaaaaaaaaa"
	ops := []map[string]any{
		{"operation": "read"},
		{"operation": "range", "offset": 10, "limit": 20},
		{"operation": "metadata"},
		{"operation": "search", "query": "250"},
	}
	for _, op := range ops {
		call := func(c *hearthtest.Client, id string) *hearthtest.Result {
			args := map[string]any{"id": id}
			for k, v := range op {
				args[k] = v
			}
			return c.Call("artifact", args)
		}
		name := op["operation"]
		nf := call(b, missing)
		got := call(b, id)
		msg, _ := got.Get("error.message").(string)
		if !got.IsError || got.Get("error.code") != "not_found" || !strings.Contains(msg, id) {
			t.Fatalf("%s by another conversation: %s", name, got.Raw)
		}
		if strings.ReplaceAll(got.Text, id, missing) != nf.Text {
			t.Errorf("%s: another conversation's artifact is told apart from a missing one:\n%s\n%s", name, got.Text, nf.Text)
		}
		if own := call(a, id); own.IsError || own.State() != "completed" {
			t.Errorf("%s by the owner: %s", name, own.Raw)
		}
	}
	if s := a.Call("artifact", map[string]any{"operation": "search", "id": id, "query": "250"}); hearthtest.Get(s.Env, "result.matches.0.line") != float64(250) {
		t.Errorf("owner search: %s", s.Raw)
	}
	if l := b.Call("artifact", map[string]any{"operation": "list"}); strings.Contains(string(l.Raw), id) {
		t.Errorf("another conversation lists the artifact: %s", l.Raw)
	}

	// The same holds when the read is a scatter kind: the dispatcher hands
	// it the scattering conversation's route.
	for _, tc := range []struct {
		c    *hearthtest.Client
		want string
	}{{b, "not_found"}, {a, ""}} {
		env := tc.c.ScatterOne(map[string]any{"kind": "artifact.metadata", "id": id})
		if code, _ := hearthtest.Get(env, "error.code").(string); code != tc.want {
			t.Errorf("scatter artifact.metadata by %s: %v", tc.c.Conversation, env)
		}
	}
}
