// Package removetree deletes a directory tree, including where
// os.RemoveAll cannot.
//
// On Windows, os.RemoveAll (Go 1.25 and later) deletes each entry with
// POSIX semantics (NtSetInformationFile with FileDispositionInformationEx)
// and falls back to the classic delete only for the answers Windows gives
// when a file system lacks that class. A file system or Windows
// implementation that answers otherwise (Wine 8 answers "not implemented",
// seen as "Invalid function") makes every removal fail, though each file
// can be deleted the classic way (DeleteFile, RemoveDirectory), which is
// what os.Remove uses. Hearth's own clean-ups (the selftest's temporary
// directory, uninstall, the demo) go through All so that they finish there
// too.
package removetree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// All removes dir and everything in it; a missing dir is not an error.
// It tries os.RemoveAll first and, when that fails, removes what is left
// entry by entry with os.Remove, deepest first, clearing a read-only
// attribute that stands in the way.
func All(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	if werr := byEntry(dir); werr != nil {
		return errors.Join(err, werr)
	}
	return nil
}

// byEntry removes dir's tree one entry at a time with os.Remove.
func byEntry(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	// WalkDir lists a directory before its contents: reversed, every entry
	// comes before the directory holding it.
	slices.Reverse(paths)
	for _, p := range paths {
		if err := remove(p); err != nil {
			return err
		}
	}
	return nil
}

func remove(p string) error {
	err := os.Remove(p)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// A read-only file (or, on Windows, one with the read-only attribute)
	// cannot be deleted by the classic call; make it writable and retry.
	if cerr := os.Chmod(p, 0o700); cerr != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}
