package fsops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// TestFileOpCarriesAJunctionItself: a junction (a mount point) is a
// link: fs.move and fs.trash carry the junction itself, never the folder
// it points to, which stays as it was; and it is still a junction where
// it went. (A OneDrive file, the other reparse point a move or a trash
// meets, cannot be made here: it needs the cloud-files filter driver,
// which Wine has not; TestLinkTag checks that its tag is no link's.)
func TestFileOpCarriesAJunctionItself(t *testing.T) {
	env := newTestEngine(t)
	withTrash(t)
	target := env.path("Documents", "Photos")
	writeFile(t, filepath.Join(target, "beach.jpg"), "a photo")
	sha, _, err := fileHash(filepath.Join(target, "beach.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	untouched := func(when string) {
		t.Helper()
		if got, _, err := fileHash(filepath.Join(target, "beach.jpg")); err != nil || got != sha {
			t.Fatalf("%s: the folder the junction points to changed: %v", when, err)
		}
	}
	if err := os.MkdirAll(env.path("Downloads"), 0o755); err != nil {
		t.Fatal(err)
	}
	junction := env.path("Downloads", "Photos link")
	err = makeJunction(junction, target)
	if errors.Is(err, windows.ERROR_NOT_SUPPORTED) || errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
		t.Skipf("this file system cannot hold a junction: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	isJunctionTo := func(p string) {
		t.Helper()
		if tag, ok := reparseTag(p); !ok || tag != windows.IO_REPARSE_TAG_MOUNT_POINT {
			t.Fatalf("%s is not a junction (tag %#x, %v)", p, tag, ok)
		}
		if got, err := os.Readlink(p); err != nil || filepath.Clean(got) != target {
			t.Fatalf("%s does not point to %s: %q %v", p, target, got, err)
		}
	}
	isJunctionTo(junction)

	to := env.path("Archive", "Photos link")
	res := fileOp(t, env, ActionMove, FileOpInput{FileOpItem: FileOpItem{From: junction, To: to}})
	if res.Status != "completed" || res.Items[0].Type != TypeSymlink {
		t.Fatalf("move of a junction: %+v", res)
	}
	isJunctionTo(to)
	if _, err := os.Lstat(junction); err == nil {
		t.Fatal("the junction is still at its old place")
	}
	untouched("move")

	res = fileOp(t, env, ActionTrash, FileOpInput{FileOpItem: FileOpItem{Path: to}})
	if res.Status != "completed" || res.Items[0].Type != TypeSymlink {
		t.Fatalf("trash of a junction: %+v", res)
	}
	if _, err := os.Lstat(to); err == nil {
		t.Fatal("the junction is still there after its trash")
	}
	untouched("trash")
	if _, err := env.e.Undo(context.Background(), "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatalf("undo of the trash of a junction: %v", err)
	}
	isJunctionTo(to)
	untouched("undo of the trash")
}

// TestOfflineFileIsReadOnlyByARead: a file whose attributes say it is
// not on this PC (as a OneDrive file online only: Windows downloads it
// when it is read) is stated without its hash and left unread by a search
// (online_only); fs.read, which a person asked for, reads it. The
// attributes are Windows's own (fileAttributes), not a fake's; a file
// system that does not keep the offline attribute skips the test.
func TestOfflineFileIsReadOnlyByARead(t *testing.T) {
	ctx := context.Background()
	env := newTestEngine(t)
	p := env.path("Documents", "away.txt")
	writeFile(t, p, "an invoice kept online\n")
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetFileAttributes(name, windows.FILE_ATTRIBUTE_OFFLINE); err != nil {
		t.Skipf("cannot mark a file offline here: %v", err)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if attrs, ok := fileAttributes(info); !ok || attrs&windows.FILE_ATTRIBUTE_OFFLINE == 0 {
		t.Skipf("this file system does not keep the offline attribute (%#x, %v)", attrs, ok)
	}
	st, err := env.e.Stat(ctx, StatInput{Path: p})
	if err != nil || st.Type != TypeFile || st.SHA256 != "" {
		t.Errorf("fs.stat of a file not on this PC: %+v %v", st, err)
	}
	s, err := env.e.Search(ctx, SearchInput{Path: env.path("Documents"), Query: "invoice"})
	if err != nil || len(s.Matches) != 0 || s.Skipped["online_only"] != 1 {
		t.Errorf("fs.search of a file not on this PC: %+v %v", s, err)
	}
	if r, err := env.e.Read(ctx, ReadInput{Path: p}); err != nil || r.Data != "an invoice kept online\n" {
		t.Errorf("fs.read of a file not on this PC: %+v %v", r, err)
	}
}
