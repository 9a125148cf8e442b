//go:build !windows

package fsops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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
	dir, err := trashDir()
	if err != nil {
		return err
	}
	files, info := filepath.Join(dir, "files"), filepath.Join(dir, "info")
	for _, d := range []string{files, info} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create trash directory %s: %w", d, err)
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
			return fmt.Errorf("trash %s: %w", path, err)
		}
		_, err = fmt.Fprintf(f, "[Trash Info]\nPath=%s\nDeletionDate=%s\n",
			(&url.URL{Path: path}).EscapedPath(), time.Now().Format("2006-01-02T15:04:05"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = moveFile(path, filepath.Join(files, name))
		}
		if err != nil {
			os.Remove(infoPath)
			return fmt.Errorf("move %s to the trash: %w", path, err)
		}
		return nil
	}
	return fmt.Errorf("move %s to the trash: too many trashed files named %s", path, base)
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

// moveFile renames from to to, or across filesystems copies it (synced)
// and then removes from; a failed copy leaves from in place.
func moveFile(from, to string) error {
	err := os.Rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Remove(from)
	}
	if err != nil {
		os.Remove(to)
	}
	return err
}
