package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ProtectedFileKeyStore keeps one private key in a file: DPAPI-encrypted for
// the current user on Windows (see Protect), a labelled 0600 file elsewhere.
// It satisfies the ledger's KeyStore interface.
//
// Save refuses to replace an existing file: a replaced signing key would
// orphan everything the old key signed, so replacing one is a deliberate,
// manual act.
type ProtectedFileKeyStore struct {
	Path string
}

// maxKeyFile bounds what Load reads; keys are a few hundred bytes.
const maxKeyFile = 16 << 10

// Load returns the key, or found=false with no error when the file does not
// exist.
func (s ProtectedFileKeyStore) Load() (key []byte, found bool, err error) {
	b, err := readKeyFile(s.Path, maxKeyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read key file %s: %w", s.Path, err)
	}
	key, err = unseal(b)
	if err != nil {
		return nil, false, fmt.Errorf("read key file %s: %w", s.Path, err)
	}
	return key, true, nil
}

// Save writes key to a new file (mode 0600, directory 0700).
func (s ProtectedFileKeyStore) Save(key []byte) error {
	if len(key) == 0 {
		return errors.New("save key: empty key")
	}
	sealed, err := seal(key)
	if err != nil {
		return fmt.Errorf("save key %s: %w", s.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("save key %s: %w", s.Path, err)
	}
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("save key: %w", err)
	}
	_, err = f.Write(sealed)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(fmt.Errorf("save key %s: %w", s.Path, err), os.Remove(s.Path))
	}
	return nil
}
