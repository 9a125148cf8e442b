// Package secrets keeps Hearth's secrets — today the tunnel runtime key — out
// of the database, the logs and the data directory.
//
// On Windows a secret is a generic credential in the user's Credential
// Manager, which Windows encrypts with DPAPI under the user's logon
// credentials. Elsewhere (Linux development and CI) the store is a 0600 file
// per secret under <dataDir>/secrets/, labelled as a development fallback:
// it is not encrypted, only protected by file permissions.
//
// The package also has DPAPI helpers (Protect, Unprotect) and
// ProtectedFileKeyStore for other private material that must live in a file,
// such as the ledger's signing key.
package secrets

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned by Get and Delete when no secret has the name.
var ErrNotFound = errors.New("secret not found")

// Store holds named secrets for the current user.
type Store interface {
	// Set creates or replaces the secret called name.
	Set(name string, secret []byte) error
	// Get returns the secret called name, or ErrNotFound.
	Get(name string) ([]byte, error)
	// Delete removes the secret called name, or returns ErrNotFound.
	Delete(name string) error
	// Present reports whether a secret called name exists, without reading
	// its value into memory where the platform allows.
	Present(name string) (bool, error)
}

// MaxSecretSize is the largest secret a Store accepts: the Windows
// Credential Manager limit (CRED_MAX_CREDENTIAL_BLOB_SIZE, 5*512 bytes).
const MaxSecretSize = 5 * 512

// checkName rejects names that could not be used as both a credential
// target suffix and a file name on every platform: 1 to 64 ASCII letters,
// digits, '.', '_' or '-', not starting with '.'.
func checkName(name string) error {
	if name == "" || len(name) > 64 || name[0] == '.' {
		return fmt.Errorf("invalid secret name %q", name)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("invalid secret name %q: use letters, digits, '.', '_' or '-'", name)
		}
	}
	return nil
}

func checkSecret(name string, secret []byte) error {
	if len(secret) == 0 {
		return fmt.Errorf("set secret %s: empty secret", name)
	}
	if len(secret) > MaxSecretSize {
		return fmt.Errorf("set secret %s: %d bytes is more than the %d allowed", name, len(secret), MaxSecretSize)
	}
	return nil
}
