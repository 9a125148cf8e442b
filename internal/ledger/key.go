package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// KeyStore holds the ledger's private signing key (a sumdb/note signer key
// string). Load reports found=false, with no error, when no key exists yet.
// On Windows a DPAPI-protected implementation is used; FileKeyStore is the
// portable one.
type KeyStore interface {
	Load() (key []byte, found bool, err error)
	Save(key []byte) error
}

// LoadOrCreateKey returns the signer key from ks, generating and saving a
// new Ed25519 key on first run. The key's name, which is also the origin
// of every checkpoint, is "hearth/<host-id>" with a random 16-hex-digit
// host id: a new key means a new origin.
func LoadOrCreateKey(ks KeyStore) (skey, vkey string, err error) {
	b, found, err := ks.Load()
	if err != nil {
		return "", "", fmt.Errorf("load ledger key: %w", err)
	}
	if found {
		skey = strings.TrimSpace(string(b))
		vkey, err = VerifierKey(skey)
		if err != nil {
			return "", "", fmt.Errorf("load ledger key: %w", err)
		}
		return skey, vkey, nil
	}
	var id [8]byte
	if _, err := io.ReadFull(rand.Reader, id[:]); err != nil {
		return "", "", fmt.Errorf("create ledger key: %w", err)
	}
	skey, vkey, err = note.GenerateKey(rand.Reader, "hearth/"+hex.EncodeToString(id[:]))
	if err != nil {
		return "", "", fmt.Errorf("create ledger key: %w", err)
	}
	if err := ks.Save([]byte(skey + "\n")); err != nil {
		return "", "", fmt.Errorf("save ledger key: %w", err)
	}
	return skey, vkey, nil
}

// VerifierKey derives the public verifier key from a note Ed25519 signer
// key ("PRIVATE+KEY+<name>+<hash>+<base64 key>").
func VerifierKey(skey string) (string, error) {
	if _, err := note.NewSigner(skey); err != nil {
		return "", errors.New("ledger key is not a valid note signer key")
	}
	parts := strings.SplitN(skey, "+", 5)
	key, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(key) != 1+ed25519.SeedSize || key[0] != 1 {
		return "", errors.New("ledger key is not an Ed25519 note signer key")
	}
	pub := ed25519.NewKeyFromSeed(key[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(parts[2], pub)
}

// FileKeyStore keeps the key in a file readable only by its owner (0600).
// Load refuses a file that grants any access to group or others, as ssh
// does for private keys. On Windows, file modes do not describe access;
// there the DPAPI store should be used instead.
type FileKeyStore struct {
	Path string
}

// maxKeyFile bounds what Load reads: a note signer key is under 200 bytes.
const maxKeyFile = 4096

// Load implements KeyStore.
func (s FileKeyStore) Load() ([]byte, bool, error) {
	f, err := os.Open(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("key file %s is not a regular file", s.Path)
	}
	if err := checkPrivate(s.Path, fi); err != nil {
		return nil, false, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("read key file %s: %w", s.Path, err)
	}
	if len(b) > maxKeyFile {
		return nil, false, fmt.Errorf("key file %s is too large to be a ledger key", s.Path)
	}
	return b, true, nil
}

// Save implements KeyStore. It creates the file with mode 0600 (and its
// directory with 0700) and refuses to replace an existing file: a replaced
// key would orphan every checkpoint the old one signed.
func (s FileKeyStore) Save(key []byte) error {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("create key directory: %w", err)
	}
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create key file: %w", err)
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(fmt.Errorf("write key file %s: %w", s.Path, err), os.Remove(s.Path))
	}
	return nil
}
