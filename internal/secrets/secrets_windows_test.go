package secrets

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
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

	files := assertNoSecretIn(t, dir, secret, key, raw[:])
	if files == 0 {
		t.Fatal("the key file was not written under the data directory")
	}
}

// assertNoSecretIn reads every file under dir and reports any that holds
// one of secrets in raw, UTF-16, hex or base64 form. It returns how many
// files it read.
func assertNoSecretIn(t *testing.T, dir string, secrets ...[]byte) int {
	t.Helper()
	var needles [][]byte
	for _, p := range secrets {
		var u16 []byte
		for _, r := range utf16.Encode([]rune(string(p))) {
			u16 = append(u16, byte(r), byte(r>>8))
		}
		needles = append(needles, p, u16, []byte(hex.EncodeToString(p)), []byte(base64.StdEncoding.EncodeToString(p)))
	}
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
	return files
}

// helperEnv switches the test binary into a helper child that uses the
// store from a process of its own; the secret travels in secretEnv, never
// on the command line.
const (
	helperEnv = "HEARTH_SECRETS_TEST_HELPER"
	secretEnv = "HEARTH_SECRETS_TEST_SECRET"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := helper(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper is the child side: "set NAME DATADIR" stores the secret from
// secretEnv, "take NAME DATADIR" prints the secret in hex and deletes it.
func helper(mode string, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("helper %s: want NAME DATADIR, got %q", mode, args)
	}
	s, err := Open(args[1])
	if err != nil {
		return err
	}
	switch mode {
	case "set":
		return s.Set(args[0], []byte(os.Getenv(secretEnv)))
	case "take":
		b, err := s.Get(args[0])
		if err != nil {
			return err
		}
		fmt.Print(hex.EncodeToString(b))
		return s.Delete(args[0])
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// runHelper runs the test binary as a helper child and returns its stdout.
func runHelper(t *testing.T, mode, name, dataDir string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], name, dataDir)
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %s %s: %v\n%s", mode, name, err, stderr.Bytes())
	}
	return string(out)
}

// TestCredentialAcrossProcesses: a secret one process stores in Credential
// Manager is there for the next process (Hearth restarting, or the tray and
// a second instance), which can read and delete it; and storing it left no
// trace of it under the data directory either process was given.
func TestCredentialAcrossProcesses(t *testing.T) {
	s, dir := openStore(t)
	name := testName(t, s)
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		t.Fatal(err)
	}
	secret := "sk-live-" + hex.EncodeToString(raw[:])

	runHelper(t, "set", name, dir, secretEnv+"="+secret)

	// A store opened in this process after the child exited sees it.
	fresh, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fresh.Get(name); err != nil || string(got) != secret {
		t.Fatalf("Get in another process = %q, %v; want the secret the child stored", got, err)
	}
	if ok, err := fresh.Present(name); err != nil || !ok {
		t.Fatalf("Present in another process = %v, %v; want true, nil", ok, err)
	}
	assertNoSecretIn(t, dir, []byte(secret), raw[:])

	// A second child reads it and deletes it; it is gone for this process.
	if got := runHelper(t, "take", name, dir); got != hex.EncodeToString([]byte(secret)) {
		t.Fatalf("second child read %q, want the secret in hex", got)
	}
	if _, err := fresh.Get(name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after another process deleted it: err = %v, want ErrNotFound", err)
	}
	if ok, err := s.Present(name); err != nil || ok {
		t.Fatalf("Present after another process deleted it = %v, %v; want false, nil", ok, err)
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
