package artifacts_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/fsops/fsopstest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

// TestRetentionAtStart runs real Hearth instances on one data directory:
// it makes an artifact and fs receipts through MCP, back-dates their rows
// while Hearth is stopped, and restarts it. The start-up pass prunes them
// (receipts only once receipt_retention_days is no longer 0), a pruned
// receipt's undo says it expired, recent things stay, and the ledger still
// verifies.
func TestRetentionAtStart(t *testing.T) {
	if _, err := exec.LookPath("seq"); err != nil {
		t.Skip("needs seq")
	}
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, func(c *config.Config) {
		hearthtest.Trusted(c)
		c.MaxOutputBytes = 256
		c.ReceiptRetentionDays = 0 // keep receipts forever, for now
	})
	c := hearthtest.Connect(t, in.URL, "conv")
	spill := func() string {
		r := c.Final("machine", map[string]any{"operation": "exec", "command": "seq", "args": []string{"1", "500"}})
		id, _ := r.Get("result.stdout.artifact.id").(string)
		if id == "" {
			t.Fatalf("no spill: %s", r.Raw)
		}
		return id
	}
	oldArt, youngArt := spill(), spill()
	p := filepath.Join(in.Root, "notes.txt")
	c.Final("fs", map[string]any{"operation": "write", "path": p, "data": "v1"})
	w := c.Final("fs", map[string]any{"operation": "write", "path": p, "data": "v2"})
	oldRcpt, _ := w.Get("result.receipt_id").(string)
	w = c.Final("fs", map[string]any{"operation": "write", "path": p, "data": "v3"})
	youngRcpt, _ := w.Get("result.receipt_id").(string)
	if oldRcpt == "" || youngRcpt == "" {
		t.Fatalf("no receipt: %s", w.Raw)
	}
	in.Stop()

	// Back-date the old rows in the real database file.
	back := time.Now().Add(-45 * 24 * time.Hour).UnixMilli()
	db := openHome(t, home)
	if _, err := db.W.Exec(`UPDATE artifacts SET created_at = ? WHERE id = ?`, back, oldArt); err != nil {
		t.Fatal(err)
	}
	fsopstest.Backdate(t, db.W, oldRcpt, back)
	db.Close()

	// Restart: the artifact goes, receipts stay (0 days).
	in = hearthtest.StartHome(t, home, nil)
	c = hearthtest.Connect(t, in.URL, "conv")
	waitGone(t, c, oldArt)
	if _, err := os.Stat(filepath.Join(home, "artifacts", oldArt+".bin")); !os.IsNotExist(err) {
		t.Errorf("the pruned artifact's file is still there: %v", err)
	}
	if r := c.Call("artifact", map[string]any{"operation": "read", "id": youngArt}); r.IsError {
		t.Errorf("a recent artifact was pruned: %s", r.Raw)
	}
	if !fsopstest.Kept(t, in.App.DB, oldRcpt) {
		t.Fatal("receipt_retention_days 0 pruned a receipt")
	}
	in.Stop()

	// Restart with receipt retention on: the old receipt expires.
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Roots = []string{in.Root}
		c.MCPAddr, c.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	})
	in = hearthtest.StartHome(t, home, nil)
	c = hearthtest.Connect(t, in.URL, "conv")
	deadline := time.Now().Add(10 * time.Second)
	var u *hearthtest.Result
	for {
		u = c.Final("fs", map[string]any{"operation": "undo", "receipt_id": oldRcpt})
		if u.Get("error.code") == "expired" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	msg, _ := u.Get("error.message").(string)
	if u.Get("error.code") != "expired" || !strings.Contains(msg, oldRcpt) || !strings.Contains(msg, "pruned") {
		t.Fatalf("undo of a pruned receipt: %s", u.Raw)
	}
	if r := c.Final("fs", map[string]any{"operation": "undo", "receipt_id": youngRcpt}); r.State() != "completed" {
		t.Fatalf("undo of a recent receipt: %s", r.Raw)
	}
	if b, _ := os.ReadFile(p); string(b) != "v2" {
		t.Fatalf("after undo: %q", b)
	}

	// The ledger was not pruned: it exports and verifies offline.
	var buf bytes.Buffer
	if err := in.App.Ledger.Export(context.Background(), &buf, 0); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.VerifyBundle(&buf)
	if err != nil {
		t.Fatalf("ledger after pruning: %v", err)
	}
	t.Logf("ledger verifies after pruning: %+v", rep)
}

// openHome opens the stopped instance's database file; the caller closes
// it before the instance starts again.
func openHome(t *testing.T, home string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// waitGone waits for the start-up pass (it runs beside serving) to prune id.
func waitGone(t *testing.T, c *hearthtest.Client, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := c.Call("artifact", map[string]any{"operation": "metadata", "id": id})
		if r.Get("error.code") == "not_found" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("artifact %s was not pruned at start: %s", id, r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
