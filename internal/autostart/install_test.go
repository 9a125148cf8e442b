package autostart

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestCopyExeReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.exe")
	dst := filepath.Join(dir, "Programs", "Hearth", ExeName)
	for _, content := range [][]byte{[]byte("version one"), bytes.Repeat([]byte("version two "), 100000)} {
		if err := os.WriteFile(src, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := CopyExe(src, dst); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("installed copy: %v, %d bytes, want %d", err, len(got), len(content))
		}
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm()&0o100 == 0 {
			t.Fatalf("installed copy must be executable: %v %v", fi.Mode(), err)
		}
	}
	left, err := os.ReadDir(filepath.Dir(dst))
	if err != nil || len(left) != 1 {
		t.Fatalf("the install directory must hold only the program, not temporary files: %v %v", left, err)
	}
	if !SameFile(dst, dst) || SameFile(src, dst) {
		t.Fatal("SameFile")
	}
}

func TestCopyExeMissingSource(t *testing.T) {
	dir := t.TempDir()
	if err := CopyExe(filepath.Join(dir, "nope.exe"), filepath.Join(dir, "out", ExeName)); err == nil {
		t.Fatal("copying a missing file must fail")
	}
}

func TestInstallPaths(t *testing.T) {
	t.Setenv("LOCALAPPDATA", filepath.Join("L", "AppData", "Local"))
	t.Setenv("APPDATA", filepath.Join("R", "AppData", "Roaming"))
	if d, err := ProgramDir(); err != nil || d != filepath.Join("L", "AppData", "Local", "Programs", "Hearth") {
		t.Fatalf("ProgramDir = %q, %v", d, err)
	}
	// On Windows the shortcut goes where the Start menu lists the user's
	// programs (the known folder), whatever APPDATA says.
	wantLnk := filepath.Join("R", "AppData", "Roaming", "Microsoft", "Windows", "Start Menu", "Programs", "Hearth.lnk")
	if d := knownFolder("Programs"); runtime.GOOS == "windows" {
		if d == "" {
			t.Fatal("Windows names no known folder Programs")
		}
		wantLnk = filepath.Join(d, "Hearth.lnk")
	}
	if p, err := ShortcutPath(); err != nil || p != wantLnk {
		t.Fatalf("ShortcutPath = %q, %v; want %q", p, err, wantLnk)
	}
	t.Setenv("LOCALAPPDATA", "")
	d, err := ProgramDir()
	if runtime.GOOS != "windows" {
		if err == nil {
			t.Fatal("no LOCALAPPDATA must be an error")
		}
		return
	}
	// A bare environment: the known folder UserProgramFiles (Wine has
	// none: Local AppData's Programs).
	want := filepath.Join(knownFolder("UserProgramFiles"), "Hearth")
	if knownFolder("UserProgramFiles") == "" {
		want = filepath.Join(knownFolder("LocalAppData"), "Programs", "Hearth")
	}
	if err != nil || d != want || !filepath.IsAbs(d) {
		t.Fatalf("ProgramDir without LOCALAPPDATA = %q, %v; want %q", d, err, want)
	}
}
