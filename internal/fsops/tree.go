package fsops

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// The files and folders the file operations (move, copy, trash) carry:
// what one looks like (its fingerprint, so an undo can tell it is still as
// the operation left it), and the copy that is verified before anything
// is removed when a move crosses volumes.

// MaxTreeEntries bounds the entries of one folder moved, copied or
// trashed: the fingerprint and the copy walk all of them.
const MaxTreeEntries = 20000

// treePrefix starts the fingerprint of a folder, so it is never taken for
// a file's SHA-256.
const treePrefix = "tree:"

// linkPrefix starts the fingerprint of a link (a SHA-256 of where it
// points), so it is never taken for a file's SHA-256 either.
const linkPrefix = "link:"

// linkPrint is the fingerprint of the link at p.
func linkPrint(p string) (string, error) {
	target, err := os.Readlink(p)
	if err != nil {
		return "", err
	}
	return linkPrefix + hashBytes([]byte(target)), nil
}

// errTooManyEntries is a folder with more than MaxTreeEntries entries.
var errTooManyEntries = fmt.Errorf("more than %d files and folders in it", MaxTreeEntries)

// tooManyEntries refuses a call whose items hold more than MaxTreeEntries
// files and folders in all: the write check judges each file a call
// carries, and cannot judge more, so such a call is never run in part.
func tooManyEntries(in FileOpInput) error {
	if len(in.Items) == 0 {
		field := "from"
		if in.Path != "" {
			field = "path"
		}
		return &InputError{Field: field, Message: fmt.Sprintf("the folder has %v; Hearth checks every file it moves, copies or trashes, so give smaller folders", errTooManyEntries)}
	}
	return &InputError{Field: "items", Message: fmt.Sprintf("the items hold more than %d files and folders in all; Hearth checks every file it moves, copies or trashes, so split them into smaller calls", MaxTreeEntries)}
}

// entriesOver reports whether the folders among paths hold more than
// MaxTreeEntries entries in all: the run-time form of the budget the
// call's Target spends (fileOpTarget), so both count the same total.
func entriesOver(paths []string) bool {
	budget := MaxTreeEntries
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil || !info.IsDir() {
			continue
		}
		filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
			if err != nil || q == p {
				return nil
			}
			if budget--; budget < 0 {
				return filepath.SkipAll
			}
			return nil
		})
		if budget < 0 {
			return true
		}
	}
	return false
}

// fingerprint is what an item at p looks like: a file's SHA-256, a
// link's "link:" and a SHA-256 of where it points, or for a folder
// "tree:" and a SHA-256 of every entry below it (its path in the folder,
// type, size and modification time to the second), with the count of
// files in it. Other special files, and links inside a folder, are
// refused: the file operations carry plain files and folders, and a link
// itself.
func fingerprint(p string) (fp string, dir bool, files int, err error) {
	info, err := lstatItem(p)
	if err != nil {
		return "", false, 0, err
	}
	switch {
	case info.Mode().IsRegular():
		f, err := openRead(p)
		if err != nil {
			return "", false, 0, err
		}
		defer f.Close()
		sha, err := hashReader(f)
		return sha, false, 1, err
	case isLink(info):
		fp, err := linkPrint(p)
		return fp, false, 1, err
	case !info.IsDir():
		return "", false, 0, &InputError{Field: "path", Message: fmt.Sprintf("%s is a %s; Hearth moves, copies and trashes plain files and folders only", p, typeOf(info.Mode()))}
	}
	h := sha256.New()
	entries := 0
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if q == p {
			return nil
		}
		if entries++; entries > MaxTreeEntries {
			return &InputError{Field: "path", Message: fmt.Sprintf("the folder %s has %v", p, errTooManyEntries)}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		info = plainInfo(q, info)
		if !info.Mode().IsRegular() && !info.IsDir() {
			return &InputError{Field: "path", Message: fmt.Sprintf("%s holds %s, a %s; Hearth moves, copies and trashes plain files and folders only", p, q, typeOf(info.Mode()))}
		}
		rel, _ := filepath.Rel(p, q)
		size := info.Size()
		if info.IsDir() {
			size = 0
		} else {
			files++
		}
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\n", filepath.ToSlash(rel), typeOf(info.Mode()), size, info.ModTime().Unix())
		return nil
	})
	if err != nil {
		return "", true, 0, err
	}
	return treePrefix + hex.EncodeToString(h.Sum(nil)), true, files, nil
}

// copyTree copies the file or folder src to dst (which must not exist),
// keeping permissions and modification times; every file is synced.
func copyTree(src, dst string) error {
	info, err := lstatItem(src)
	if err != nil {
		return err
	}
	if info.Mode().IsRegular() {
		return copyFile(src, dst, info)
	}
	if isLink(info) {
		// The link itself, pointing where it points.
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is a %s, not a file or folder", src, typeOf(info.Mode()))
	}
	type dirTime struct {
		path string
		t    time.Time
	}
	var dirs []dirTime
	entries := 0
	err = filepath.WalkDir(src, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entries++; entries > MaxTreeEntries+1 {
			return errTooManyEntries
		}
		rel, _ := filepath.Rel(src, q)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		info = plainInfo(q, info)
		switch {
		case info.IsDir():
			if err := os.Mkdir(to, info.Mode().Perm()|0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{to, info.ModTime()})
			return nil
		case info.Mode().IsRegular():
			return copyFile(q, to, info)
		}
		return fmt.Errorf("%s is a %s, not a file or folder", q, typeOf(info.Mode()))
	})
	if err != nil {
		return err
	}
	// Deepest first: filling a folder changes its time.
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chtimes(dirs[i].path, dirs[i].t, dirs[i].t)
	}
	return nil
}

// copyFile copies one file to dst (which must not exist), synced, with
// src's permissions and modification time.
func copyFile(src, dst string, info fs.FileInfo) error {
	in, err := openRead(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return err
	}
	if info.Mode().Perm()&0o200 == 0 {
		// A read-only file stays read-only in its copy.
		os.Chmod(dst, info.Mode().Perm())
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
}

// copiedEntry is one file or folder a copy across volumes carried: its
// path below the item ("." for the item itself) and, for a file, the
// SHA-256 its copy was verified to have (a link's fingerprint for a link). The source is removed only
// where it is still that (removeCopied).
type copiedEntry struct {
	rel string
	dir bool
	sha string
}

// verifyTree checks that b is a faithful copy of a: the same folders and
// files, each file of the same size and SHA-256. It returns what it
// checked, parents before what they hold.
func verifyTree(a, b string) ([]copiedEntry, error) {
	ia, err := lstatItem(a)
	if err != nil {
		return nil, err
	}
	if ia.Mode().IsRegular() {
		sha, err := verifyFile(a, b, ia)
		if err != nil {
			return nil, err
		}
		return []copiedEntry{{rel: ".", sha: sha}}, nil
	}
	if isLink(ia) {
		fa, err := linkPrint(a)
		if err != nil {
			return nil, err
		}
		if fb, err := linkPrint(b); err != nil || fb != fa {
			return nil, fmt.Errorf("the copy of the link %s does not point where it points", a)
		}
		return []copiedEntry{{rel: ".", sha: fa}}, nil
	}
	var copied []copiedEntry
	err = filepath.WalkDir(a, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a, q)
		other := filepath.Join(b, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		info = plainInfo(q, info)
		if info.IsDir() {
			oi, err := os.Lstat(other)
			if err != nil || !oi.IsDir() {
				return fmt.Errorf("the copy lacks the folder %s", rel)
			}
			copied = append(copied, copiedEntry{rel: rel, dir: true})
			return nil
		}
		sha, err := verifyFile(q, other, info)
		copied = append(copied, copiedEntry{rel: rel, sha: sha})
		return err
	})
	return copied, err
}

// verifyFile checks that b has a's size and SHA-256, and returns it.
func verifyFile(a, b string, ia fs.FileInfo) (string, error) {
	ib, err := lstatItem(b)
	if err != nil || !ib.Mode().IsRegular() || ib.Size() != ia.Size() {
		return "", fmt.Errorf("the copy of %s is not the same size", a)
	}
	sa, _, err := fileHash(a)
	if err != nil {
		return "", err
	}
	sb, _, err := fileHash(b)
	if err != nil {
		return "", err
	}
	if sa != sb {
		return "", fmt.Errorf("the copy of %s does not have the same content (SHA-256)", a)
	}
	return sa, nil
}

// moveTree renames from to to, or across volumes copies it beside to
// under a temporary name, verifies the copy, renames it into place and
// only then removes from: only what was copied and is still as it was
// verified, and folders only once empty, so a file another program
// writes into from meanwhile stays there (a *keptError names it: the
// move is done, nothing is lost). A failed copy leaves from as it was.
// The trash and its restore use it; a move the person asked for puts
// what it removes in the bin instead (Engine.binSource).
func moveTree(from, to string) error {
	err := renameNoReplace(from, to)
	if err == nil || !crossVolume(err) {
		return err
	}
	tmp := filepath.Join(filepath.Dir(to), tempName(strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err := copyTree(from, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	copied, err := verifyTree(from, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := renameNoReplace(tmp, to); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	kept, err := removeCopied(from, copied, nil)
	if err != nil {
		return errors.Join(fmt.Errorf("copied to %s, but %s could not be removed", to, from), err)
	}
	if len(kept) > 0 {
		return &keptError{From: from, To: to, Kept: kept}
	}
	return nil
}

// removeCopied removes from what copied lists (a verified copy of it is
// elsewhere): each file only while it still has the SHA-256 its copy
// was verified to have, each folder only once empty. It returns what it
// left: files changed since the copy, and whatever appeared meanwhile.
// dispose takes such a file (p, and rel its path below from) away: nil
// removes it; a move the person asked for puts it in the bin instead
// (Engine.binSource).
func removeCopied(from string, copied []copiedEntry, dispose func(p, rel string) error) (kept []string, err error) {
	if dispose == nil {
		dispose = func(p, _ string) error { return os.Remove(p) }
	}
	var errs []error
	// Backwards: what a folder holds before the folder.
	for i := len(copied) - 1; i >= 0; i-- {
		c := copied[i]
		p := filepath.Join(from, c.rel)
		if c.dir {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				if des, derr := os.ReadDir(p); derr != nil || len(des) == 0 {
					errs = append(errs, rerr) // empty, yet not removed
				}
			}
			continue
		}
		info, lerr := lstatItem(p)
		if errors.Is(lerr, fs.ErrNotExist) {
			continue
		}
		var sha string
		var herr error
		switch {
		case lerr != nil:
			continue // kept, and named below
		case info.Mode().IsRegular():
			sha, _, herr = fileHash(p)
		case isLink(info):
			sha, herr = linkPrint(p)
		default:
			continue // not what was copied
		}
		if herr != nil {
			errs = append(errs, herr)
			continue
		}
		if sha != c.sha {
			continue
		}
		if rerr := dispose(p, c.rel); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			errs = append(errs, rerr)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, lerr := os.Lstat(from); lerr != nil {
		return nil, nil
	}
	filepath.WalkDir(from, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			kept = append(kept, q)
			return nil
		}
		if d.IsDir() {
			if des, _ := os.ReadDir(q); len(des) > 0 {
				return nil // named by what it holds
			}
		}
		kept = append(kept, q)
		return nil
	})
	return kept, nil
}

// keptError is a move across volumes that is done, but left at its
// source what was new or changed there since the copy (Kept), so that
// nothing another program wrote meanwhile is lost.
type keptError struct {
	From, To string
	Kept     []string
}

func (e *keptError) Error() string {
	names := e.Kept
	more := ""
	if len(names) > 5 {
		names, more = names[:5], fmt.Sprintf(" and %d more", len(e.Kept)-5)
	}
	return fmt.Sprintf("moved to %s, but %s%s changed or appeared at %s during the move and stayed there (nothing was lost)",
		e.To, strings.Join(names, ", "), more, e.From)
}

// tempName is the name of a copy in progress, which the fs tool never
// shows nor accepts and recovery removes.
func tempName(id string) string { return atomicfile.TempPrefix + id }
