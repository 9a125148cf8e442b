//go:build !windows

package secrets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
)

// Protect is DPAPI encryption, which exists only on Windows; elsewhere it
// returns errors.ErrUnsupported rather than pretending to protect anything.
func Protect(plain []byte) ([]byte, error) {
	return nil, fmt.Errorf("dpapi protect: %w", errors.ErrUnsupported)
}

// Unprotect is DPAPI decryption; see Protect.
func Unprotect(sealed []byte) ([]byte, error) {
	return nil, fmt.Errorf("dpapi unprotect: %w", errors.ErrUnsupported)
}

// keyLabel is the first line of a key file off Windows.
const keyLabel = "# Hearth private key, development fallback: NOT encrypted, protected only by file permissions (0600). On Windows this file is DPAPI-encrypted."

func seal(key []byte) ([]byte, error) {
	return []byte(keyLabel + "\n" + base64.StdEncoding.EncodeToString(key) + "\n"), nil
}

func unseal(b []byte) ([]byte, error) {
	label, body, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(label) != keyLabel {
		return nil, errors.New("not a Hearth key file")
	}
	key, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(body)))
	if err != nil {
		return nil, errors.New("key file is corrupt")
	}
	return key, nil
}

func readKeyFile(path string, limit int64) ([]byte, error) {
	return readPrivate(path, limit)
}
