package fsops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// binUnknown skips the rest of a test on Windows when the Recycle Bin
// did not say where it put an item (Wine keeps its own bin, outside
// $Recycle.Bin): the item is there, but an undo cannot take it back by
// itself, which is what Hearth then tells the person.
func binUnknown(t *testing.T, where string) {
	t.Helper()
	if runtime.GOOS == "windows" && (where == "" || where == binName()) {
		t.Skip("the Recycle Bin did not say where it put the item (as under Wine): its undo cannot take it back by itself")
	}
}

// withTrash gives the test a trash of its own (freedesktop: under
// XDG_DATA_HOME); on Windows the Recycle Bin is the shell's.
func withTrash(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if runtime.GOOS != "windows" {
		t.Setenv("XDG_DATA_HOME", dir)
	}
	return dir
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func fileOp(t *testing.T, env testEnv, action string, in FileOpInput) FileOpResult {
	t.Helper()
	res, err := env.e.FileOp(context.Background(), "r:chat", action, in)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	return res
}

func TestMoveAndUndo(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	src, dst := env.path("Downloads", "invoice.pdf"), env.path("Documents", "Invoices", "2024 invoice.pdf")
	writeFile(t, src, "%PDF invoice")
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: src, To: dst}})
	if res.Status != "completed" || res.Items[0].Outcome != ItemDone || res.Items[0].ReceiptID == "" {
		t.Fatalf("move: %+v", res)
	}
	if exists(src) || mustRead(t, dst) != "%PDF invoice" {
		t.Fatal("the file did not move")
	}
	if res.Items[0].SHA256 != hashBytes([]byte("%PDF invoice")) {
		t.Fatalf("sha256 %q", res.Items[0].SHA256)
	}
	u, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID})
	if err != nil {
		t.Fatal(err)
	}
	if exists(dst) || mustRead(t, src) != "%PDF invoice" || u.UndoneReceiptID != res.Items[0].ReceiptID {
		t.Fatalf("undo did not move it back: %+v", u)
	}
	// The undo is a receipt of its own: undoing it moves it again.
	if _, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: u.ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if !exists(dst) || exists(src) {
		t.Fatal("the undo of the undo did not move it again")
	}
}

func TestMoveIntoFolderAndRename(t *testing.T) {
	env := newTestEngine(t)
	a := env.path("a.txt")
	writeFile(t, a, "a")
	if err := os.MkdirAll(env.path("Box"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: a, To: env.path("Box")}})
	if res.Items[0].Path != env.path("Box", "a.txt") || mustRead(t, env.path("Box", "a.txt")) != "a" {
		t.Fatalf("move into a folder: %+v", res.Items[0])
	}
	res = fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("Box", "a.txt"), To: env.path("Box", "b.txt")}})
	if res.Status != "completed" || mustRead(t, env.path("Box", "b.txt")) != "a" {
		t.Fatalf("rename: %+v", res)
	}
}

func TestMoveNeverOverwritesUnlessAsked(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	src, dst := env.path("new.txt"), env.path("old.txt")
	writeFile(t, src, "new")
	writeFile(t, dst, "old")
	for _, action := range []string{ActionMove, ActionCopy} {
		res, err := env.e.FileOp(context.Background(), "r:chat", action, FileOpInput{FileOpItem: FileOpItem{From: src, To: dst}})
		if err != nil || res.Status != "failed" || res.Items[0].Outcome != ItemConflict || res.Items[0].Code != ReasonExists {
			t.Fatalf("%s over a file: %+v %v", action, res, err)
		}
		if mustRead(t, dst) != "old" || mustRead(t, src) != "new" {
			t.Fatalf("%s over a file changed something", action)
		}
	}
	// A wrong expected_sha256 is a conflict too.
	wrong, _ := ExpectSHA(hashBytes([]byte("not old")))
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: src, To: dst, ExpectedSHA256: wrong}})
	if res.Items[0].Code != ReasonHashMismatch || mustRead(t, dst) != "old" {
		t.Fatalf("wrong expected_sha256: %+v", res.Items[0])
	}
	// A folder is never replaced, even with overwrite.
	if err := os.MkdirAll(env.path("folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, env.path("folder", "keep.txt"), "keep")
	res = fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("folder"), To: dst, Overwrite: true}})
	if res.Status != "failed" || !exists(env.path("folder", "keep.txt")) {
		t.Fatalf("a folder over a file: %+v", res)
	}
	// With the file's hash it is replaced, and the replaced file goes to
	// the bin; undo brings both back.
	right, _ := ExpectSHA(hashBytes([]byte("old")))
	res = fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: src, To: dst, ExpectedSHA256: right}})
	binUnknown(t, res.Items[0].Replaced)
	if res.Status != "completed" || mustRead(t, dst) != "new" || res.Items[0].Replaced == "" {
		t.Fatalf("move with expected_sha256: %+v", res)
	}
	if runtime.GOOS != "windows" && mustRead(t, res.Items[0].Replaced) != "old" {
		t.Fatal("the replaced file is not in the trash")
	}
	if _, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, src) != "new" || mustRead(t, dst) != "old" {
		t.Fatal("undo did not put both back")
	}
}

func TestCopyAndUndo(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	src := env.path("photos", "a.jpg")
	writeFile(t, src, "jpeg")
	writeFile(t, env.path("photos", "sub", "b.jpg"), "jpeg b")
	res := fileOp(t, env, ActionCopy, FileOpInput{FileOpItem: FileOpItem{From: env.path("photos"), To: env.path("backup")}})
	if res.Status != "completed" || res.Items[0].Type != TypeDir || res.Items[0].Files != 2 {
		t.Fatalf("copy: %+v", res)
	}
	if mustRead(t, env.path("backup", "sub", "b.jpg")) != "jpeg b" || mustRead(t, src) != "jpeg" {
		t.Fatal("the copy or the original is not right")
	}
	if _, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if exists(env.path("backup")) || mustRead(t, src) != "jpeg" {
		t.Fatal("undo of a copy must put the copy in the bin and leave the original")
	}
}

func TestMkdirAndUndo(t *testing.T) {
	env := newTestEngine(t)
	dir := env.path("Documents", "Invoices", "2024")
	res := fileOp(t, env, ActionMkdir, FileOpInput{FileOpItem: FileOpItem{Path: dir}})
	if res.Status != "completed" || res.Items[0].Outcome != ItemDone {
		t.Fatalf("mkdir: %+v", res)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatal("no folder")
	}
	again := fileOp(t, env, ActionMkdir, FileOpInput{FileOpItem: FileOpItem{Path: dir}})
	if again.Items[0].Outcome != ItemUnchanged || again.Status != "completed" {
		t.Fatalf("mkdir of a folder that is there: %+v", again)
	}
	// Not empty: the undo leaves it alone and says why.
	writeFile(t, filepath.Join(dir, "x.txt"), "x")
	_, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID})
	conflictOf(t, err, ReasonChanged)
	os.Remove(filepath.Join(dir, "x.txt"))
	if _, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Fatal("undo of mkdir left the empty folder")
	}
}

func TestTrashAndUndo(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	p := env.path("Downloads", "dup (1).pdf")
	writeFile(t, p, "dup")
	res := fileOp(t, env, ActionTrash, FileOpInput{FileOpItem: FileOpItem{Path: p}})
	if res.Status != "completed" || exists(p) || res.Items[0].Trash == "" {
		t.Fatalf("trash: %+v", res)
	}
	binUnknown(t, res.Items[0].Trash)
	if runtime.GOOS != "windows" {
		if mustRead(t, res.Items[0].Trash) != "dup" {
			t.Fatal("the trashed file is not where the answer says")
		}
		info := mustRead(t, trashInfoOf(res.Items[0].Trash))
		if !strings.Contains(info, "Path=") || !strings.Contains(info, "dup%20%281%29.pdf") {
			t.Fatalf("trashinfo %q", info)
		}
	}
	if _, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, p) != "dup" {
		t.Fatal("undo of trash did not restore it")
	}
}

func TestUndoLeavesChangedItemAlone(t *testing.T) {
	env := newTestEngine(t)
	src, dst := env.path("a.txt"), env.path("b.txt")
	writeFile(t, src, "a")
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: src, To: dst}})
	writeFile(t, dst, "edited since")
	_, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID})
	ce := conflictOf(t, err, ReasonChanged)
	if ce.Path != dst || exists(src) || mustRead(t, dst) != "edited since" {
		t.Fatalf("a changed file must be left alone and named: %+v", ce)
	}
	// Moved away since: named too.
	writeFile(t, dst, "a")
	os.Rename(dst, env.path("c.txt"))
	_, err = env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID})
	conflictOf(t, err, ReasonChanged)
}

func TestBatchPartialNamesEachFailure(t *testing.T) {
	env := newTestEngine(t)
	var items []FileOpItem
	for _, n := range []string{"1.txt", "2.txt", "3.txt"} {
		writeFile(t, env.path("in", n), n)
		items = append(items, FileOpItem{From: env.path("in", n), To: env.path("out", n)})
	}
	writeFile(t, env.path("out", "2.txt"), "already")
	items = append(items, FileOpItem{From: env.path("in", "missing.txt"), To: env.path("out", "m.txt")})
	res := fileOp(t, env, ActionMove, FileOpInput{Items: items})
	if res.Status != "partial" || res.Done != 2 || res.Failed != 2 {
		t.Fatalf("batch: %+v", res)
	}
	if res.Items[1].Outcome != ItemConflict || res.Items[3].Outcome != ItemFailed || !strings.Contains(res.Items[3].Error, "missing.txt") {
		t.Fatalf("failures not named: %+v", res.Items)
	}
	if mustRead(t, env.path("out", "2.txt")) != "already" || mustRead(t, env.path("in", "2.txt")) != "2.txt" {
		t.Fatal("a conflict changed a file")
	}
	answer, err := fileOpAnswer(ActionMove, res)
	if answer != nil || err == nil || !strings.Contains(err.Error(), "2 done; 2 not") {
		t.Fatalf("answer %v %v", answer, err)
	}
}

func TestFileOpBadInputNamesTheField(t *testing.T) {
	env := newTestEngine(t)
	cases := []struct {
		action string
		in     FileOpInput
		field  string
	}{
		{ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("a")}}, "to"},
		{ActionCopy, FileOpInput{FileOpItem: FileOpItem{To: env.path("a")}}, "from"},
		{ActionTrash, FileOpInput{}, "path"},
		{ActionMkdir, FileOpInput{FileOpItem: FileOpItem{Path: env.path("a"), Overwrite: true}}, "overwrite"},
		{ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("a"), To: env.path("b")}, Items: []FileOpItem{{From: env.path("a"), To: env.path("b")}}}, "items"},
		{ActionMove, FileOpInput{Items: []FileOpItem{{From: env.path("a"), To: env.path("b")}, {From: env.path("c")}}}, "items[1].to"},
		{ActionTrash, FileOpInput{Items: make([]FileOpItem, MaxFileOpItems+1)}, "items"},
	}
	for _, c := range cases {
		_, err := env.e.FileOp(context.Background(), "r:chat", c.action, c.in)
		ie, ok := err.(*InputError)
		if !ok || ie.Field != c.field {
			t.Errorf("%s %+v: err %v, want field %s", c.action, c.in, err, c.field)
		}
	}
	writeFile(t, env.path("dir", "f.txt"), "f")
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("dir"), To: env.path("dir", "inside")}})
	if res.Status != "failed" || !exists(env.path("dir", "f.txt")) {
		t.Fatalf("a folder into itself: %+v", res)
	}
}

func TestListSortAndFilter(t *testing.T) {
	env := newTestEngine(t)
	day := func(d int) time.Time { return time.Date(2024, 1, d, 12, 0, 0, 0, time.UTC) }
	for i, n := range []string{"b.pdf", "a.pdf", "c.pdf"} {
		p := env.path("docs", n)
		writeFile(t, p, strings.Repeat("x", (i+1)*10))
		if err := os.Chtimes(p, day(i+1), day(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	names := func(r ListResult) string {
		var s []string
		for _, e := range r.Entries {
			s = append(s, e.Name)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		in   ListInput
		want string
	}{
		{ListInput{}, "a.pdf,b.pdf,c.pdf"},
		{ListInput{Sort: "size"}, "c.pdf,a.pdf,b.pdf"},
		{ListInput{Sort: "modified"}, "c.pdf,a.pdf,b.pdf"},
		{ListInput{ModifiedAfter: "2024-01-02"}, "a.pdf,c.pdf"},
		{ListInput{ModifiedBefore: "2024-01-02T12:00:00Z", Sort: "modified"}, "b.pdf"},
		{ListInput{Sort: "modified", Limit: 1}, "c.pdf"},
	} {
		c.in.Path = env.path("docs")
		r, err := env.e.List(context.Background(), c.in)
		if err != nil || names(r) != c.want {
			t.Errorf("%+v: %s %v, want %s", c.in, names(r), err, c.want)
		}
	}
	_, err := env.e.List(context.Background(), ListInput{Path: env.path("docs"), ModifiedAfter: "last year"})
	if ie, ok := err.(*InputError); !ok || ie.Field != "modified_after" {
		t.Fatalf("bad time: %v", err)
	}
}

// tidySet makes n mixed documents in Downloads, every fifth a duplicate
// of the one before, and returns their paths and SHA-256s.
func tidySet(t testing.TB, dir string, n int) map[string]string {
	t.Helper()
	exts := []string{"pdf", "docx", "xlsx", "jpg", "txt"}
	want := map[string]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("file %03d.%s", i, exts[i%len(exts)])
		content := fmt.Sprintf("document %d", i)
		if i%5 == 4 {
			name = fmt.Sprintf("file %03d (copy).%s", i-1, exts[(i-1)%len(exts)])
			content = fmt.Sprintf("document %d", i-1)
		}
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		year := 2022 + i%3
		mt := time.Date(year, time.Month(1+i%12), 1, 12, 0, 0, 0, time.UTC)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		want[p] = hashBytes([]byte(content))
	}
	return want
}

// tidyPlan sorts the documents of dir into dst/<type>/<year> folders and
// trashes the duplicates: the folders to make, the moves, the trashes.
func tidyPlan(t testing.TB, dir, dst string) (mkdirs, moves, trashes []FileOpItem) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]bool{}
	for _, de := range des {
		p := filepath.Join(dir, de.Name())
		if strings.Contains(de.Name(), "(copy)") {
			trashes = append(trashes, FileOpItem{Path: p})
			continue
		}
		info, _ := de.Info()
		folder := filepath.Join(dst, strings.TrimPrefix(filepath.Ext(p), "."), strconv.Itoa(info.ModTime().Year()))
		if !made[folder] {
			made[folder] = true
			mkdirs = append(mkdirs, FileOpItem{Path: folder})
		}
		moves = append(moves, FileOpItem{From: p, To: filepath.Join(folder, de.Name())})
	}
	return mkdirs, moves, trashes
}

// checkRestored checks every file is back at its path with its content.
func checkRestored(t testing.TB, want map[string]string) {
	t.Helper()
	for p, sha := range want {
		got, ok, err := fileHash(p)
		if err != nil || !ok || got != sha {
			t.Fatalf("%s not restored (%v %v)", p, ok, err)
		}
	}
}

func TestUndoChatOfATidyRestoresEveryFile(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	want := tidySet(t, env.path("Downloads"), 200)
	mkdirs, moves, trashes := tidyPlan(t, env.path("Downloads"), env.path("Documents", "Sorted"))
	for _, c := range []struct {
		action string
		items  []FileOpItem
	}{{ActionMkdir, mkdirs}, {ActionMove, moves}, {ActionTrash, trashes}} {
		res := fileOp(t, env, c.action, FileOpInput{Items: c.items})
		if res.Status != "completed" {
			t.Fatalf("%s: %+v", c.action, res)
		}
		if c.action == ActionTrash {
			binUnknown(t, res.Items[0].Trash)
		}
	}
	if des, _ := os.ReadDir(env.path("Downloads")); len(des) != 0 {
		t.Fatalf("Downloads still has %d entries", len(des))
	}
	cs, err := env.e.ChatChanges(context.Background(), "r:chat")
	if err != nil || len(cs) != len(mkdirs)+len(moves)+len(trashes) {
		t.Fatalf("changes %d %v", len(cs), err)
	}
	rep, err := env.e.UndoChat(context.Background(), "Ann", "r:chat")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Outcome == OutcomeChanged || f.Outcome == OutcomeFailed {
			t.Fatalf("%s: %s (%s)", f.Path, f.Outcome, f.Why)
		}
	}
	checkRestored(t, want)
	if exists(env.path("Documents", "Sorted", "pdf")) {
		t.Fatal("the folders the chat made are still there")
	}
	if des, _ := os.ReadDir(env.path("Downloads")); len(des) != len(want) {
		t.Fatalf("Downloads has %d entries, want %d", len(des), len(want))
	}
}

// A move across volumes killed after its verified copy was in place, its
// source not yet in the bin: recovery finishes it (the state of a kill
// between those two steps, made here without the kill, which polling
// rarely lands on).
func TestRecoverFinishesAMoveWhoseCopyIsInPlace(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	src, dst := env.path("a", "report.docx"), env.path("b", "report.docx")
	writeFile(t, src, "report")
	sha := hashBytes([]byte("report"))
	ctx := context.Background()
	id := newReceiptID()
	if err := env.e.insertAction(ctx, id, plan{route: "r:chat", action: ActionMove, op: "write", src: src, dst: dst}, false, "", sha, false); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := copyTree(src, tempPath(dst, id)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tempPath(dst, id), dst); err != nil {
		t.Fatal(err)
	}
	rep, err := env.e.Recover(ctx)
	if err != nil || rep.Committed != 1 {
		t.Fatalf("recover %+v %v", rep, err)
	}
	if exists(src) || mustRead(t, dst) != "report" {
		t.Fatal("recovery did not finish the move")
	}
	var bin string
	env.e.DB.R.QueryRow(`SELECT COALESCE(bin_path, '') FROM fs_receipts WHERE id = ?`, id).Scan(&bin)
	if runtime.GOOS != "windows" && mustRead(t, bin) != "report" {
		t.Fatalf("the source is not in the bin where the receipt says (%q)", bin)
	}

	// Killed while copying: the temporary copy goes, the receipt is void.
	id2 := newReceiptID()
	writeFile(t, env.path("c", "x.txt"), "x")
	if err := env.e.insertAction(ctx, id2, plan{route: "r:chat", action: ActionMove, op: "write", src: env.path("c", "x.txt"), dst: env.path("d", "x.txt")}, false, "", hashBytes([]byte("x")), false); err != nil {
		t.Fatal(err)
	}
	writeFile(t, tempPath(env.path("d", "x.txt"), id2), "half")
	if rep, err := env.e.Recover(ctx); err != nil || rep.Voided != 1 {
		t.Fatalf("recover %+v %v", rep, err)
	}
	if exists(tempPath(env.path("d", "x.txt"), id2)) || mustRead(t, env.path("c", "x.txt")) != "x" {
		t.Fatal("recovery left the half copy or lost the source")
	}
}

func tempPath(dst, id string) string { return filepath.Join(filepath.Dir(dst), tempName(id)) }

// The rename a move makes never replaces what another program put at the
// destination after Hearth looked.
func TestRenameNeverReplaces(t *testing.T) {
	env := newTestEngine(t)
	writeFile(t, env.path("a.txt"), "a")
	writeFile(t, env.path("b.txt"), "b")
	if err := renameNoReplace(env.path("a.txt"), env.path("b.txt")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err %v, want fs.ErrExist", err)
	}
	if mustRead(t, env.path("a.txt")) != "a" || mustRead(t, env.path("b.txt")) != "b" {
		t.Fatal("a file was replaced")
	}
	if err := renameNoReplace(env.path("a.txt"), env.path("c.txt")); err != nil || mustRead(t, env.path("c.txt")) != "a" {
		t.Fatalf("rename to a free name: %v", err)
	}
}

// "to" names a folder the item goes in when it exists, ends in a
// separator, or is the "to" of several items of the call.
func TestMoveIntoAFolderNotThereYet(t *testing.T) {
	env := newTestEngine(t)
	for _, n := range []string{"a.pdf", "b.pdf", "c.pdf"} {
		writeFile(t, env.path("in", n), n)
	}
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: env.path("in", "a.pdf"), To: env.path("Invoices") + string(filepath.Separator)}})
	if res.Status != "completed" || mustRead(t, env.path("Invoices", "a.pdf")) != "a.pdf" {
		t.Fatalf("to ending in a separator: %+v", res)
	}
	res = fileOp(t, env, ActionMove, FileOpInput{Items: []FileOpItem{{From: env.path("in", "b.pdf"), To: env.path("Archive")}, {From: env.path("in", "c.pdf"), To: env.path("Archive")}}})
	if res.Status != "completed" || mustRead(t, env.path("Archive", "b.pdf")) != "b.pdf" || mustRead(t, env.path("Archive", "c.pdf")) != "c.pdf" {
		t.Fatalf("several items to one folder: %+v", res)
	}
}
