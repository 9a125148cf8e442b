//go:build !windows

package fsops

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MoveToTrash moves the file at path to the user's trash, never deleting
// it: here the freedesktop.org trash in the home directory
// ($XDG_DATA_HOME/Trash, else ~/.local/share/Trash), a file in files/ and
// its .trashinfo (original path, time) in info/, which file managers show
// and restore. The move is a rename, so the file is either in its place or
// in the trash; across filesystems it is copied, synced, and only then
// removed from its place. Undo uses it (as Replacer.Remove) for a file a
// chat created.
func MoveToTrash(path string) error {
	_, err := trashItem(path)
	return err
}

// trashSlot is a name in the trash reserved for one item: its
// .trashinfo is written first, so a crash between the reservation and
// the move leaves an info file without an item (removed by release), never
// an item nobody can trace back.
type trashSlot struct {
	// Where is the item's path in the trash once it is there.
	Where string
	info  string
}

// reserveTrash reserves a name in the trash for the item at path.
func reserveTrash(path string) (trashSlot, error) {
	dir, err := trashDir()
	if err != nil {
		return trashSlot{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return trashSlot{}, fmt.Errorf("create the trash %s: %w", dir, err)
	}
	if top, ok := volumeTrash(path, dir); ok {
		dir = top
	}
	files, info := filepath.Join(dir, "files"), filepath.Join(dir, "info")
	for _, d := range []string{files, info} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return trashSlot{}, fmt.Errorf("create trash directory %s: %w", d, err)
		}
	}
	base := filepath.Base(path)
	for i := 1; i < 1000; i++ {
		name := base
		if i > 1 {
			name = base + "." + strconv.Itoa(i)
		}
		infoPath := filepath.Join(info, name+".trashinfo")
		f, err := os.OpenFile(infoPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return trashSlot{}, fmt.Errorf("trash %s: %w", path, err)
		}
		_, err = fmt.Fprintf(f, "[Trash Info]\nPath=%s\nDeletionDate=%s\n",
			(&url.URL{Path: path}).EscapedPath(), time.Now().Format("2006-01-02T15:04:05"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(infoPath)
			return trashSlot{}, fmt.Errorf("trash %s: %w", path, err)
		}
		return trashSlot{Where: filepath.Join(files, name), info: infoPath}, nil
	}
	return trashSlot{}, fmt.Errorf("move %s to the trash: too many trashed items named %s", path, base)
}

// put moves the item at path into the reserved slot.
// A *keptError says it is there, but what changed or appeared at path
// during a move across volumes stayed at path.
func (s trashSlot) put(path string) (string, error) {
	if err := moveTree(path, s.Where); err != nil {
		var kept *keptError
		if errors.As(err, &kept) {
			return s.Where, err
		}
		s.release()
		return "", fmt.Errorf("move %s to the trash: %w", path, err)
	}
	return s.Where, nil
}

// reservedTrash is the slot reserveTrash gave, found again by its place
// in the trash (where).
func reservedTrash(where string) trashSlot { return trashSlot{Where: where, info: trashInfoOf(where)} }

// release gives the reservation up (the item was not moved).
func (s trashSlot) release() {
	if s.info != "" {
		os.Remove(s.info)
	}
}

// trashItem moves the file or folder at path to the trash and returns
// where it is there.
func trashItem(path string) (string, error) {
	s, err := reserveTrash(path)
	if err != nil {
		return "", err
	}
	return s.put(path)
}

// restoreFromTrash moves the item at where (a path in the trash) back to
// path, which must not exist, and removes its .trashinfo.
func restoreFromTrash(where, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("put %s back from the trash: %w", path, fs.ErrExist)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("put %s back from the trash: %w", path, err)
	}
	if err := moveTree(where, path); err != nil {
		// A *keptError: it is back, but what appeared in the trash's
		// copy meanwhile stayed there, with its .trashinfo.
		return fmt.Errorf("put %s back from the trash: %w", path, err)
	}
	if info := trashInfoOf(where); info != "" {
		os.Remove(info)
	}
	return nil
}

// findTrashed gives "": here the place in the trash is reserved, and
// recorded, before an item goes there.
func findTrashed(string, time.Time) string { return "" }

// trashInfoOf is the .trashinfo of an item in the trash, "" when where is
// not in a trash's files/ folder.
func trashInfoOf(where string) string {
	files := filepath.Dir(where)
	if filepath.Base(files) != "files" {
		return ""
	}
	return filepath.Join(filepath.Dir(files), "info", filepath.Base(where)+".trashinfo")
}

// inTrash reports whether where is an item in a trash (a path trashItem
// gave), so restore never takes anything from elsewhere.
func inTrash(where string) bool {
	files := filepath.Dir(where)
	top := filepath.Base(filepath.Dir(files))
	if filepath.Base(files) != "files" {
		return false
	}
	if top == ".Trash-"+strconv.Itoa(os.Getuid()) {
		return true
	}
	dir, err := trashDir()
	return err == nil && strings.HasPrefix(where, filepath.Join(dir, "files")+string(filepath.Separator))
}

// volumeTrash is the trash of path's own file system when it is not the
// home trash's ($topdir/.Trash-$uid of the freedesktop.org
// specification), so trashing there is one rename, never a copy that a
// crash could leave half done.
func volumeTrash(path, home string) (string, bool) {
	dev := func(p string) (uint64, bool) {
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			return 0, false
		}
		return uint64(st.Dev), true
	}
	parent := filepath.Dir(path)
	d, ok := dev(parent)
	h, hok := dev(home)
	if !ok || !hok || d == h {
		return "", false
	}
	top := parent
	for up := filepath.Dir(top); up != top; top, up = up, filepath.Dir(up) {
		if u, ok := dev(up); !ok || u != d {
			break
		}
	}
	trash := filepath.Join(top, ".Trash-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(trash, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", false
	}
	if info, err := os.Lstat(trash); err != nil || !info.IsDir() || info.Mode()&fs.ModeSymlink != 0 {
		return "", false
	}
	return trash, true
}

// trashDir is the home trash of the freedesktop.org specification.
func trashDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "Trash"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the trash: %w", err)
	}
	return filepath.Join(home, ".local", "share", "Trash"), nil
}

// crossVolume reports whether a rename failed because its two paths are
// on different file systems.
func crossVolume(err error) bool { return errors.Is(err, syscall.EXDEV) }
