package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

const kib = 1 << 10

// content is 100 KiB of one letter: inline prior content (under the 256 KiB
// inline limit).
func content(c byte) string { return strings.Repeat(string(c), 100*kib) }

func TestIdenticalPriorCopiesStoredOnce(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { c.StorageBudgetBytes = 0 })
	ctx := context.Background()
	p := filepath.Join(in.Root, "flip.txt")
	// A, B, A, B, A, B: five receipts keep a prior copy, of two contents.
	var last string
	for i := range 6 {
		r, err := in.App.FS.Write(ctx, "r:t", fsops.WriteInput{Path: p, Data: content("AB"[i%2])})
		if err != nil {
			t.Fatal(err)
		}
		last = r.ReceiptID
	}
	u, err := in.App.StorageUsage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u.ReceiptBytes != 200*kib {
		t.Fatalf("undo copies take %d bytes, want %d (two distinct contents)", u.ReceiptBytes, 200*kib)
	}
	// Every receipt still undoes to its own prior content.
	if _, err := in.App.FS.Undo(ctx, "r:t", fsops.UndoInput{ReceiptID: last}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != content('A') {
		t.Fatalf("undo restored %d bytes (%v), want content A", len(got), err)
	}
}

func TestBudgetPrunesOldestFirst(t *testing.T) {
	// The test enforces by hand: a background pass between the writes
	// would prune before the "before" below is measured.
	in := hearthtest.StartWith(t, func(c *config.Config) { c.StorageBudgetBytes = 350 * kib },
		func(o *app.Options) { o.BudgetEvery = -1 })
	ctx := context.Background()
	// An old artifact (200 KiB), then five receipts of distinct 100 KiB
	// priors: 700 KiB stored, 350 KiB allowed.
	art, err := in.App.Artifacts.Put(ctx, "r:t", "old.bin", "application/octet-stream", "test", []byte(strings.Repeat("z", 200*kib)), false)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(in.Root, "f.txt")
	var rcpts []string
	for i := range 6 {
		r, err := in.App.FS.Write(ctx, "r:t", fsops.WriteInput{Path: p, Data: content("abcdef"[i])})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			rcpts = append(rcpts, r.ReceiptID)
		}
	}
	u, err := in.App.StorageUsage(ctx)
	if err != nil || u.UsedBytes != 700*kib {
		t.Fatalf("before: %+v %v", u, err)
	}
	rep, err := in.App.EnforceBudget(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, err = in.App.StorageUsage(ctx)
	if err != nil || u.UsedBytes > 350*kib || u.BudgetBytes != 350*kib {
		t.Fatalf("after: %+v %v (report %+v)", u, err, rep)
	}
	if _, err := in.App.Artifacts.Metadata(ctx, art.ID); err == nil {
		t.Fatal("the oldest copy (the artifact) was kept while newer ones were pruned")
	}
	// The newest receipts are kept and undoable; the oldest say expired.
	if _, err := in.App.FS.Undo(ctx, "r:t", fsops.UndoInput{ReceiptID: rcpts[0]}); !errors.Is(err, fsops.ErrReceiptExpired) {
		t.Fatalf("undo of the oldest receipt: %v, want expired", err)
	}
	if _, err := in.App.FS.Undo(ctx, "r:t", fsops.UndoInput{ReceiptID: rcpts[len(rcpts)-1]}); err != nil {
		t.Fatalf("undo of the newest receipt: %v", err)
	}
	// host_info shows the space used and the budget (the undo above
	// stored one more copy).
	if u, err = in.App.StorageUsage(ctx); err != nil {
		t.Fatal(err)
	}
	r := hearthtest.Connect(t, in.URL, "").Call("machine", map[string]any{"operation": "host_info"})
	if r.Get("result.storage.budget_bytes") != float64(350*kib) || r.Get("result.storage.used_bytes") != float64(u.UsedBytes) {
		t.Fatalf("host_info storage: %v", r.Get("result.storage"))
	}
}

func TestBudgetPassDropsFinishedInputs(t *testing.T) {
	// By hand only, or a background pass could drop the input before it is
	// first measured.
	in := hearthtest.StartWith(t, hearthtest.Trusted, func(o *app.Options) { o.BudgetEvery = -1 })
	ctx := context.Background()
	c := hearthtest.Connect(t, in.URL, "inputs")
	data := strings.Repeat("d", 64*kib)
	r := c.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(in.Root, "big.txt"), "data": data, "detach": true})
	fid, _ := r.Get("future_id").(string)
	if fid == "" {
		t.Fatalf("detached write: %s", r.Raw)
	}
	c.WaitArrival(fid, r)
	inputLen := func() int { return dispatchtest.InputLen(t, in.App.DB, fid) }
	if inputLen() < 64*kib {
		t.Fatalf("the future's input is %d bytes before the pass", inputLen())
	}
	rep, err := in.App.EnforceBudget(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := inputLen(); n > 4*kib || rep.Inputs < 1 {
		t.Fatalf("after the pass the finished future keeps %d bytes of input (report %+v)", n, rep)
	}
	// The result is still there for task get.
	g := c.Call("task", map[string]any{"operation": "get", "id": fid})
	if g.State() != "completed" || g.Get("result.future.result.result.size") != float64(64*kib) {
		t.Fatalf("task get after the pass: %s", g.Raw)
	}
}
