package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// ExeName is the installed program's file name.
const ExeName = "hearth-tray.exe"

// ShortcutName is the Start-menu shortcut's file name.
const ShortcutName = "Hearth.lnk"

// ErrInUse is returned by CopyExe when the target cannot be replaced,
// which on Windows means a program runs from it.
var ErrInUse = errors.New("the installed hearth-tray.exe is in use")

// ProgramDir is the per-user install directory,
// %LOCALAPPDATA%\Programs\Hearth: Windows' place for programs installed
// for one user, writable without elevation. Without the variable (a bare
// environment) it is the known folder UserProgramFiles' Hearth (that of
// Local AppData where Windows names no UserProgramFiles).
func ProgramDir() (string, error) {
	if d := os.Getenv("LOCALAPPDATA"); d != "" {
		return filepath.Join(d, "Programs", "Hearth"), nil
	}
	if d := knownFolder("UserProgramFiles"); d != "" {
		return filepath.Join(d, "Hearth"), nil
	}
	if d := knownFolder("LocalAppData"); d != "" { // Wine knows no UserProgramFiles
		return filepath.Join(d, "Programs", "Hearth"), nil
	}
	return "", errors.New("LOCALAPPDATA is not set")
}

// ShortcutPath is the Start-menu shortcut: Hearth.lnk in the known
// folder Programs, where the Start menu really lists the user's programs
// (a Start menu redirected by folder redirection included), else in
// %APPDATA%\Microsoft\Windows\Start Menu\Programs.
func ShortcutPath() (string, error) {
	if d := knownFolder("Programs"); d != "" {
		return filepath.Join(d, ShortcutName), nil
	}
	d := os.Getenv("APPDATA")
	if d == "" {
		return "", errors.New("APPDATA is not set")
	}
	return filepath.Join(d, "Microsoft", "Windows", "Start Menu", "Programs", ShortcutName), nil
}

// SameFile reports whether a and b are the same existing file.
func SameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// CopyExe copies the program src to dst atomically (atomicfile.Replacer.WriteFrom:
// a temporary file beside dst, flushed to disk, renamed over dst, the
// rename retried briefly while a scanner holds the new file), so that dst is
// always either the old or the new program, never half of one. When dst
// cannot be replaced because it is in use (a running hearth-tray on
// Windows) the error matches ErrInUse.
func CopyExe(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dst), err)
	}
	_, err = atomicfile.Replacer{}.WriteFrom(dst, in, 0o755)
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %w", ErrInUse, err)
	}
	if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	return nil
}
