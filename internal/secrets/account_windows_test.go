package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestAccountCredentials: for a user whose name has letters outside
// ASCII and a space (under Wine in CI, "Zoë Ünal": see
// scripts/test-windows; the test first checks Windows names that user),
// a secret one process stores in Credential Manager is read back by
// another, byte for byte (letters outside ASCII in it too), deleted, and
// nothing of it lands in the data directory in that profile.
func TestAccountCredentials(t *testing.T) {
	var n uint32 = 256
	buf := make([]uint16, n)
	if err := windows.GetUserNameEx(windows.NameSamCompatible, &buf[0], &n); err != nil {
		t.Fatalf("GetUserNameEx: %v", err)
	}
	account := windows.UTF16ToString(buf[:n])
	if want := os.Getenv("HEARTH_WINE_PROFILE"); want != "" {
		if _, user, _ := strings.Cut(account, `\`); user != want || os.Getenv("USERNAME") != want {
			t.Fatalf("this process runs as %q (USERNAME %q), want the user %q", account, os.Getenv("USERNAME"), want)
		}
	}
	local := os.Getenv("LOCALAPPDATA")
	if local == "" {
		t.Fatal("LOCALAPPDATA is not set")
	}
	if err := os.MkdirAll(local, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(local, "Hearth secrets test ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	name := testName(t, s)
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		t.Fatal(err)
	}
	secret := "sk-Zoë-Ünal-" + hex.EncodeToString(raw[:])

	runHelper(t, "set", name, dir, secretEnv+"="+secret)
	if got, err := s.Get(name); err != nil || string(got) != secret {
		t.Fatalf("%s: Get after another process stored it = %q, %v; want %q", account, got, err, secret)
	}
	assertNoSecretIn(t, dir, []byte(secret), raw[:])
	if got := runHelper(t, "take", name, dir); got != hex.EncodeToString([]byte(secret)) {
		t.Fatalf("another process read %q, want the secret in hex", got)
	}
	if _, err := s.Get(name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after another process deleted it: %v, want ErrNotFound", err)
	}
}
