package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
	"github.com/hearth-dev/hearth/internal/store"
)

// hearthData is a data directory with a real hearth.db and a ledger signed
// by its own key.
type hearthData struct {
	dir  string
	db   *store.DB
	l    *ledger.Ledger
	vkey string
}

func newHearthData(t testing.TB) *hearthData {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	skey, vkey, err := ledger.LoadOrCreateKey(ledger.FileKeyStore{Path: filepath.Join(dir, "ledger.key")})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	return &hearthData{dir: dir, db: db, l: l, vkey: vkey}
}

func (h *hearthData) append(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		if _, err := h.l.Append(context.Background(), ledger.KindIntent, map[string]any{"i": i, "primitive": "machine.exec"}); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *hearthData) opts(reason string, keep int) Options {
	return Options{Dir: Dir(h.dir), Keep: keep, Reason: reason, VerifierKey: h.vkey}
}

// ledgerSize reads the number of ledger entries of the database at path.
func ledgerSize(t *testing.T, path string) int64 {
	t.Helper()
	db, err := store.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return int64(ledgertest.Count(t, db))
}

func TestMakeVerifyRestore(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 25)
	if _, err := h.l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	h.append(t, 3)
	info, err := Make(ctx, h.db, h.opts(ReasonManual, 7))
	if err != nil {
		t.Fatal(err)
	}
	if info.LedgerEntries != 28 || info.CheckpointSize != 25 || info.PublicKey != h.vkey || info.Reason != ReasonManual {
		t.Fatalf("backup info = %+v, want 28 entries, checkpoint 25 signed by this key", info)
	}
	if !strings.HasPrefix(info.File, "hearth-") || !strings.HasSuffix(info.File, "-manual.db") {
		t.Fatalf("backup file name %q", info.File)
	}
	newest, ok, err := Newest(Dir(h.dir))
	if err != nil || !ok || newest.File != info.File || newest.SHA256 != info.SHA256 {
		t.Fatalf("Newest = %+v, %v, %v; want the backup just made", newest, ok, err)
	}
	if err := Recheck(newest); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, info.Path, h.vkey); err != nil {
		t.Fatalf("the backup must verify on its own: %v", err)
	}

	// Work after the backup, then restore it: the database is the backup's
	// again, and the replaced one is kept aside, whole.
	h.append(t, 10)
	if err := h.db.Close(); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(h.dir, DBName)
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	res, err := Restore(ctx, h.dir, info.Path, h.vkey, when)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backup.LedgerEntries != 28 {
		t.Fatalf("restored backup info = %+v", res.Backup)
	}
	if got := ledgerSize(t, live); got != 28 {
		t.Fatalf("restored database has %d ledger entries, want 28", got)
	}
	if want := filepath.Join(Dir(h.dir), "replaced-20260304-050607.000Z"); res.Aside != want {
		t.Fatalf("aside = %q, want %q", res.Aside, want)
	}
	if got := ledgerSize(t, filepath.Join(res.Aside, DBName)); got != 38 {
		t.Fatalf("the database kept aside has %d ledger entries, want 38", got)
	}
	// The restored database opens as Hearth opens it, and its ledger verifies.
	db, err := store.Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := ledger.VerifyDB(ctx, db, ledger.ExpectKey(h.vkey))
	if err != nil || rep.Entries != 28 {
		t.Fatalf("restored ledger: %+v, %v", rep, err)
	}
}

// corrupt overwrites bytes in the middle of the file at path.
func corrupt(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte(strings.Repeat("\xff\x00garbage", 512))
	if _, err := f.WriteAt(junk, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptedBackupIsRefused(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 400)
	if _, err := h.l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := Make(ctx, h.db, h.opts(ReasonManual, 7))
	if err != nil {
		t.Fatal(err)
	}
	h.db.Close()
	live := filepath.Join(h.dir, DBName)
	before, _, err := hashFile(live)
	if err != nil {
		t.Fatal(err)
	}

	// A listed backup whose bytes changed: its record no longer matches.
	corrupt(t, info.Path)
	if err := Recheck(info); err == nil {
		t.Fatal("Recheck of a changed backup must fail")
	}
	_, err = Restore(ctx, h.dir, info.Path, h.vkey, time.Now())
	if err == nil || !strings.Contains(err.Error(), "changed since it was verified") {
		t.Fatalf("restore of a changed backup = %v, want refused", err)
	}

	// The same file without its record (copied elsewhere): the database
	// checks themselves refuse it.
	loose := filepath.Join(t.TempDir(), "copy.db")
	if err := copyFile(info.Path, loose); err != nil {
		t.Fatal(err)
	}
	_, err = Restore(ctx, h.dir, loose, h.vkey, time.Now())
	if err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("restore of a corrupted file = %v, want refused", err)
	}
	if _, err := Verify(ctx, loose, h.vkey); err == nil {
		t.Fatal("Verify of a corrupted file must fail")
	}
	after, _, err := hashFile(live)
	if err != nil || after != before {
		t.Fatalf("a refused restore changed the current database (%v)", err)
	}
	if ents, _ := os.ReadDir(Dir(h.dir)); len(ents) != 2 {
		t.Fatalf("a refused restore left something in backups/: %v", ents)
	}
	for _, bad := range []string{"empty", "text"} {
		p := filepath.Join(t.TempDir(), bad+".db")
		os.WriteFile(p, []byte(map[string]string{"empty": "", "text": "not a database at all, just some words"}[bad]), 0o600)
		if _, err := Restore(ctx, h.dir, p, h.vkey, time.Now()); err == nil {
			t.Fatalf("restore of a %s file must be refused", bad)
		}
	}
}

func TestTamperedLedgerIsRefused(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 10)
	if _, err := h.l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	// A sound SQLite file whose ledger was edited: integrity_check passes,
	// the ledger verification does not.
	// (An editor of the file would drop the append-only trigger first.)
	if n := ledgertest.Tamper(t, h.db, `"i":3`, `"i":4`); n != 1 {
		t.Fatalf("tampered with %d entries, want 1", n)
	}
	_, err := Make(ctx, h.db, h.opts(ReasonDaily, 7))
	if err == nil || !strings.Contains(err.Error(), "ledger verification failed") {
		t.Fatalf("backup of a tampered ledger = %v, want refused", err)
	}
	if all, _ := List(Dir(h.dir)); len(all) != 0 {
		t.Fatalf("a refused backup was listed: %+v", all)
	}
	ents, _ := os.ReadDir(Dir(h.dir))
	if len(ents) != 0 {
		t.Fatalf("a refused backup left files: %v", ents)
	}
}

func TestForeignKeyIsRefused(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 5)
	if _, err := h.l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	other := newHearthData(t)
	_, err := Make(ctx, h.db, Options{Dir: Dir(h.dir), Keep: 7, Reason: ReasonManual, VerifierKey: other.vkey})
	if err == nil || !strings.Contains(err.Error(), "not by this installation's key") {
		t.Fatalf("backup checked against another key = %v, want refused", err)
	}
}

func TestBackupDuringWritesIsConsistent(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 50)
	if _, err := h.l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes int
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := h.l.Append(ctx, ledger.KindOutcome, map[string]any{"w": i}); err != nil {
				werr = err
				return
			}
			if i%7 == 0 {
				if _, err := h.l.Checkpoint(ctx); err != nil {
					werr = err
					return
				}
			}
			writes++
		}
	}()
	// Wait until the writer is really writing, then back up several times
	// while it goes on; every copy must verify and grow.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := h.l.Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n > 60 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var infos []Info
	for range 4 {
		info, err := Make(ctx, h.db, h.opts(ReasonDaily, 10))
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("backup during writes: %v", err)
		}
		infos = append(infos, info)
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	if writes == 0 {
		t.Fatal("the writer wrote nothing while the backups ran")
	}
	for i, info := range infos {
		if _, err := Verify(ctx, info.Path, h.vkey); err != nil {
			t.Fatalf("backup %d: %v", i, err)
		}
		if i > 0 && info.LedgerEntries < infos[i-1].LedgerEntries {
			t.Fatalf("backup %d has %d entries, fewer than the one before (%d)", i, info.LedgerEntries, infos[i-1].LedgerEntries)
		}
	}
	if infos[0].LedgerEntries <= 50 {
		t.Fatalf("first backup has %d entries; the writer's entries are missing", infos[0].LedgerEntries)
	}
}

func TestRestoreRefusedWhileRunning(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 3)
	info, err := Make(ctx, h.db, h.opts(ReasonManual, 7))
	if err != nil {
		t.Fatal(err)
	}
	// A real second process holds the Hearth lock, as a running Hearth does.
	child := startLockHolder(t, h.dir)
	_, err = Restore(ctx, h.dir, info.Path, h.vkey, time.Now())
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("restore while Hearth runs = %v, want ErrRunning", err)
	}
	if _, err := os.Stat(filepath.Join(Dir(h.dir))); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(Dir(h.dir), "replaced-*")); len(ents) != 0 {
		t.Fatalf("a refused restore moved the database aside: %v", ents)
	}
	child.stop(t)
	h.db.Close()
	if _, err := Restore(ctx, h.dir, info.Path, h.vkey, time.Now()); err != nil {
		t.Fatalf("restore once Hearth stopped: %v", err)
	}
}

func TestPruneKeepsTheNewest(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 2)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var made []Info
	for i := range 6 {
		clock := t0.Add(time.Duration(i) * time.Hour)
		o := h.opts(ReasonDaily, 3)
		o.Now = func() time.Time { return clock }
		info, err := Make(ctx, h.db, o)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, info)
	}
	all, err := List(Dir(h.dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, info := range all {
		got = append(got, info.File)
	}
	want := []string{made[5].File, made[4].File, made[3].File}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("kept %v, want the three newest %v", got, want)
	}
	for _, old := range made[:3] {
		for _, p := range []string{old.Path, old.Path + ".json"} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was not pruned (%v)", filepath.Base(p), err)
			}
		}
	}
	// A half-made backup is left alone while young, deleted when stale;
	// a replaced database is never pruned.
	half := filepath.Join(Dir(h.dir), ".making-0123.db")
	os.WriteFile(half, []byte("x"), 0o600)
	aside := filepath.Join(Dir(h.dir), "replaced-20260101-000000.000Z")
	os.MkdirAll(aside, 0o700)
	now := t0.Add(6 * time.Hour)
	os.Chtimes(half, now, now)
	if err := Prune(Dir(h.dir), 3, now); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(half); err != nil {
		t.Fatalf("a young half-made backup was deleted: %v", err)
	}
	if err := Prune(Dir(h.dir), 3, now.Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(half); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stale half-made backup was kept: %v", err)
	}
	if _, err := os.Stat(aside); err != nil {
		t.Fatalf("a replaced database was pruned: %v", err)
	}
	if err := Prune(Dir(h.dir), 0, now); err == nil {
		t.Fatal("Prune with keep 0 must be refused")
	}
}

func TestDue(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if due, err := Due(Dir(h.dir), t0); err != nil || !due {
		t.Fatalf("no backup yet: due = %v, %v; want due", due, err)
	}
	o := h.opts(ReasonDaily, 7)
	o.Now = func() time.Time { return t0 }
	if _, err := Make(ctx, h.db, o); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at  time.Duration
		due bool
	}{{time.Hour, false}, {DailyEvery - time.Minute, false}, {DailyEvery, true}, {-2 * time.Hour, true}} {
		if due, err := Due(Dir(h.dir), t0.Add(tc.at)); err != nil || due != tc.due {
			t.Errorf("%v after the backup: due = %v, %v; want %v", tc.at, due, err, tc.due)
		}
	}
}

func TestUnknownReasonIsRefused(t *testing.T) {
	h := newHearthData(t)
	if _, err := Make(context.Background(), h.db, h.opts("weekly", 7)); err == nil || !strings.Contains(err.Error(), `"weekly"`) {
		t.Fatalf("Make with reason weekly = %v", err)
	}
}

// A backup through a read-only connection of its own while the database
// is open for writing elsewhere (hearth-tray backup while Hearth runs).
func TestMakeFromReadOnly(t *testing.T) {
	ctx := context.Background()
	h := newHearthData(t)
	h.append(t, 12)
	info, err := MakeFromFile(ctx, filepath.Join(h.dir, DBName), h.opts(ReasonManual, 7))
	if err != nil {
		t.Fatal(err)
	}
	if info.LedgerEntries != 12 {
		t.Fatalf("backup from a read-only connection has %d entries, want 12", info.LedgerEntries)
	}
}
