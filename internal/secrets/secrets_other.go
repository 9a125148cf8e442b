//go:build !windows

package secrets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// fallbackLabel is the first line of every fallback secret file, so that
// nobody mistakes it for protected storage.
const fallbackLabel = "# Hearth development fallback secret store: NOT encrypted, protected only by file permissions (0600). On Windows, Hearth keeps secrets in Credential Manager."

// Open returns the development fallback store: one 0600 file per secret in
// <dataDir>/secrets (created 0700).
func Open(dataDir string) (Store, error) {
	if dataDir == "" {
		return nil, errors.New("open secret store: no data directory")
	}
	dir := filepath.Join(dataDir, "secrets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open secret store: %w", err)
	}
	return fileStore{dir: dir}, nil
}

// fileStore is the non-Windows Store. Each file holds the label line and
// the secret in base64 (so any bytes survive; base64 is not protection).
type fileStore struct{ dir string }

func (s fileStore) path(name string) string { return filepath.Join(s.dir, name) }

func (s fileStore) Set(name string, secret []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := checkSecret(name, secret); err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(fallbackLabel + "\n")
	buf.WriteString(base64.StdEncoding.EncodeToString(secret) + "\n")
	if err := writePrivate(s.path(name), buf.Bytes()); err != nil {
		return fmt.Errorf("store secret %s: %w", name, err)
	}
	return nil
}

func (s fileStore) Get(name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	b, err := readPrivate(s.path(name), 4*MaxSecretSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read secret %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	label, body, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(label) != fallbackLabel {
		return nil, fmt.Errorf("read secret %s: %s is not a Hearth secret file", name, s.path(name))
	}
	secret, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(body)))
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %s is corrupt", name, s.path(name))
	}
	return secret, nil
}

func (s fileStore) Delete(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := os.Remove(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete secret %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete secret %s: %w", name, err)
	}
	return nil
}

func (s fileStore) Present(name string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	_, err := os.Lstat(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up secret %s: %w", name, err)
	}
	return true, nil
}

// writePrivate replaces path atomically with data in a 0600 file.
func writePrivate(path string, data []byte) error {
	return atomicfile.Replacer{Private: true}.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// readPrivate reads a regular file of at most limit bytes, refusing one that
// grants any access to group or others, as ssh does for private keys.
func readPrivate(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s is accessible by group or others (mode %04o); run chmod 600 on it", path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is too large", path)
	}
	return b, nil
}
