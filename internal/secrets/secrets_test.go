package secrets

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// testName returns a secret name no real installation uses, so running the
// tests on a developer's Windows machine never touches Hearth's own
// credentials; the secret is deleted when the test ends.
func testName(t *testing.T, s Store) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "test-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if err := s.Delete(name); err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("cleanup: %v", err)
		}
	})
	return name
}

func openStore(t *testing.T) (Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestRoundTripOverwriteDelete(t *testing.T) {
	s, _ := openStore(t)
	name := testName(t, s)

	if ok, err := s.Present(name); err != nil || ok {
		t.Fatalf("Present before Set = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.Get(name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Set: err = %v, want ErrNotFound", err)
	}

	first := []byte("sk-first-\x00\xff binary and text")
	if err := s.Set(name, first); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(name); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("Get = %q, %v; want %q", got, err, first)
	}
	if ok, err := s.Present(name); err != nil || !ok {
		t.Fatalf("Present after Set = %v, %v; want true, nil", ok, err)
	}

	second := []byte("sk-second")
	if err := s.Set(name, second); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(name); err != nil || !bytes.Equal(got, second) {
		t.Fatalf("Get after overwrite = %q, %v; want %q", got, err, second)
	}

	if err := s.Delete(name); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Present(name); err != nil || ok {
		t.Fatalf("Present after Delete = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.Get(name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: err = %v, want ErrNotFound", err)
	}
}

func TestSecretsAreSeparate(t *testing.T) {
	s, _ := openStore(t)
	a, b := testName(t, s), testName(t, s)
	if err := s.Set(a, []byte("alpha")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(b, []byte("beta")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(b); err != nil || string(got) != "beta" {
		t.Fatalf("Get(b) after Delete(a) = %q, %v", got, err)
	}
}

func TestRejectsBadInput(t *testing.T) {
	s, _ := openStore(t)
	for _, name := range []string{"", ".hidden", "a/b", `a\b`, "a b", "ключ", strings.Repeat("x", 65), "..", "con:"} {
		if err := s.Set(name, []byte("x")); err == nil {
			t.Errorf("Set(%q) succeeded", name)
			_ = s.Delete(name)
		}
		if _, err := s.Get(name); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) err = %v, want a name error", name, err)
		}
	}
	name := testName(t, s)
	if err := s.Set(name, nil); err == nil {
		t.Error("Set of an empty secret succeeded")
	}
	if err := s.Set(name, make([]byte, MaxSecretSize+1)); err == nil {
		t.Error("Set of an oversized secret succeeded")
	}
	if err := s.Set(name, bytes.Repeat([]byte{7}, MaxSecretSize)); err != nil {
		t.Errorf("Set of a secret of exactly MaxSecretSize: %v", err)
	}
}

func TestProtectedFileKeyStore(t *testing.T) {
	dir := t.TempDir()
	ks := ProtectedFileKeyStore{Path: filepath.Join(dir, "keys", "ledger.key")}

	if key, found, err := ks.Load(); err != nil || found || key != nil {
		t.Fatalf("Load of a missing file = %q, %v, %v; want nil, false, nil", key, found, err)
	}
	key := []byte("PRIVATE+KEY+hearth/0123456789abcdef+1a2b3c4d+AVerySecretSeedValue\n")
	if err := ks.Save(key); err != nil {
		t.Fatal(err)
	}
	got, found, err := ks.Load()
	if err != nil || !found || !bytes.Equal(got, key) {
		t.Fatalf("Load = %q, %v, %v; want the saved key", got, found, err)
	}
	if err := ks.Save([]byte("another key")); err == nil {
		t.Fatal("Save replaced an existing key file")
	}
	if got, _, _ := ks.Load(); !bytes.Equal(got, key) {
		t.Fatal("a refused Save changed the stored key")
	}
	if err := ks.Save(nil); err == nil {
		t.Fatal("Save of an empty key succeeded")
	}
}
