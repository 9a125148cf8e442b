package secrets

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"
)

// TestNoPlaintextUnderDataDir stores a secret and a key, then reads every
// file under the data directory: the secret's bytes must appear in none of
// them, in raw, UTF-16, hex or base64 form.
func TestNoPlaintextUnderDataDir(t *testing.T) {
	s, dir := openStore(t)
	name := testName(t, s)

	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		t.Fatal(err)
	}
	secret := []byte("sk-live-" + hex.EncodeToString(raw[:]))
	if err := s.Set(name, secret); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(name); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Get = %q, %v", got, err)
	}
	key := []byte("PRIVATE+KEY+hearth/test+00000000+" + base64.StdEncoding.EncodeToString(raw[:]))
	if err := (ProtectedFileKeyStore{Path: filepath.Join(dir, "ledger.key")}).Save(key); err != nil {
		t.Fatal(err)
	}

	forms := func(p []byte) [][]byte {
		var u16 []byte
		for _, r := range utf16.Encode([]rune(string(p))) {
			u16 = append(u16, byte(r), byte(r>>8))
		}
		return [][]byte{p, u16, []byte(hex.EncodeToString(p)), []byte(base64.StdEncoding.EncodeToString(p))}
	}
	needles := append(forms(secret), forms(key)...)
	needles = append(needles, raw[:])

	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, n) {
				t.Errorf("%s contains secret material (%d bytes)", path, len(n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("the key file was not written under the data directory")
	}
}

func TestProtectRoundTrip(t *testing.T) {
	plain := []byte("ed25519 seed: 0123456789abcdef0123456789abcdef")
	sealed, err := Protect(plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain) || bytes.Contains(sealed, plain[:16]) {
		t.Fatal("DPAPI output contains the plaintext")
	}
	got, err := Unprotect(sealed)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Unprotect = %q, %v", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-5] ^= 0x40
	if got, err := Unprotect(tampered); err == nil && bytes.Equal(got, plain) {
		t.Fatal("Unprotect accepted a tampered blob")
	}
	if _, err := Unprotect([]byte("not a dpapi blob at all")); err == nil {
		t.Fatal("Unprotect accepted garbage")
	}
}

func TestKeyFileIsNotPlain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(path, []byte("plain key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (ProtectedFileKeyStore{Path: path}).Load(); err == nil {
		t.Fatal("Load accepted a key file that is not DPAPI-protected")
	}
}
