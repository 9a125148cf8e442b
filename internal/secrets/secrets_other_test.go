//go:build !windows

package secrets

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFallbackFileIsPrivateAndLabelled(t *testing.T) {
	s, dir := openStore(t)
	name := testName(t, s)
	if err := s.Set(name, []byte("sk-dev")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "secrets", name)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("secret file mode = %04o, want 0600", perm)
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("secrets directory mode = %04o, want 0700", perm)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, "development fallback") || !strings.Contains(first, "NOT encrypted") {
		t.Errorf("first line = %q, want the development-fallback label", first)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("secrets directory has %d entries, want only the secret (no temp files left)", len(entries))
	}
}

func TestFallbackRefusesSharedFile(t *testing.T) {
	s, dir := openStore(t)
	name := testName(t, s)
	if err := s.Set(name, []byte("sk-dev")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "secrets", name)
	for _, mode := range []os.FileMode{0o640, 0o604, 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(name); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Get of a %04o file: err = %v, want a permissions error", mode, err)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(name); err != nil || string(got) != "sk-dev" {
		t.Fatalf("Get after chmod 600 = %q, %v", got, err)
	}
}

func TestFallbackRefusesSymlink(t *testing.T) {
	s, dir := openStore(t)
	name := testName(t, s)
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte(fallbackLabel+"\nc2stZGV2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "secrets", name)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(name); err == nil {
		t.Fatal("Get followed a symlink")
	}
}

func TestKeyStoreFallbackFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.key")
	ks := ProtectedFileKeyStore{Path: path}
	if err := ks.Save([]byte("PRIVATE+KEY+x")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode = %04o, want 0600", perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), keyLabel+"\n") {
		t.Errorf("key file does not start with its label: %q", b)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ks.Load(); err == nil {
		t.Error("Load accepted a world-readable key file")
	}
}

func TestProtectUnsupported(t *testing.T) {
	if _, err := Protect([]byte("x")); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Protect err = %v, want ErrUnsupported", err)
	}
	if _, err := Unprotect([]byte("x")); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Unprotect err = %v, want ErrUnsupported", err)
	}
}

func TestOpenNeedsDataDir(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}
