package selftest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"

	"github.com/hearth-dev/hearth/internal/secrets"
)

// checkCredentials round-trips a secret under the run's own credential
// name through the store Hearth keeps the tunnel key in: Credential
// Manager on Windows, the development file fallback elsewhere.
func (r *run) checkCredentials(ctx context.Context) (string, error) {
	store, err := secrets.Open(r.dataDir)
	if err != nil {
		return "", err
	}
	name := CredentialName(r.id)
	if on, err := store.Present(name); err != nil || on {
		return "", fmt.Errorf("before the run, credential %s is present=%v (%v); the run's name must be new", name, on, err)
	}
	r.onFinish("the credential "+name, func() error {
		if err := store.Delete(name); err != nil && !errors.Is(err, secrets.ErrNotFound) {
			return err
		}
		return nil
	})
	for range 2 { // the second Set replaces the first
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		val := []byte(hex.EncodeToString(b[:]))
		if err := store.Set(name, val); err != nil {
			return "", err
		}
		got, err := store.Get(name)
		if err != nil {
			return "", err
		}
		if string(got) != string(val) {
			return "", errors.New("the secret read back differs from the one stored")
		}
	}
	if on, err := store.Present(name); err != nil || !on {
		return "", fmt.Errorf("Present after Set = %v, %v", on, err)
	}
	if err := store.Delete(name); err != nil {
		return "", err
	}
	if _, err := store.Get(name); !errors.Is(err, secrets.ErrNotFound) {
		return "", fmt.Errorf("Get after Delete = %v, want not found", err)
	}
	where := "the development file store (not Windows: no Credential Manager)"
	if runtime.GOOS == "windows" {
		where = "Credential Manager (generic credential Hearth/" + name + ")"
	}
	return "stored, replaced, read back and deleted a secret in " + where, nil
}
