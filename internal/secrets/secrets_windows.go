package secrets

import (
	"errors"
	"fmt"

	"github.com/danieljoos/wincred"
)

// targetPrefix namespaces Hearth's credentials in Credential Manager; the
// tunnel key shows up there as "Hearth/tunnel-key".
const targetPrefix = "Hearth/"

// Open returns the Credential Manager store. dataDir is not used on Windows:
// nothing is written under it.
func Open(dataDir string) (Store, error) {
	return credStore{}, nil
}

// credStore keeps each secret as a generic credential of the current user.
//
// Persistence is CRED_PERSIST_LOCAL_MACHINE: the credential belongs to this
// user and survives logoff and reboot (so the tunnel restarts unattended
// after a reboot), but, unlike CRED_PERSIST_ENTERPRISE, it does not travel
// with a roaming profile to other machines. Both are per-user; "local
// machine" only means "not roamed". Windows encrypts the blob with DPAPI
// under the user's logon secret.
type credStore struct{}

func target(name string) string { return targetPrefix + name }

func (credStore) Set(name string, secret []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := checkSecret(name, secret); err != nil {
		return err
	}
	cred := wincred.NewGenericCredential(target(name))
	cred.CredentialBlob = secret
	cred.Persist = wincred.PersistLocalMachine
	cred.UserName = "hearth"
	cred.Comment = "Hearth secret; managed by Hearth's control panel"
	if err := cred.Write(); err != nil {
		return fmt.Errorf("store secret %s in Credential Manager: %w", name, err)
	}
	return nil
}

func (credStore) Get(name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	cred, err := wincred.GetGenericCredential(target(name))
	if errors.Is(err, wincred.ErrElementNotFound) {
		return nil, fmt.Errorf("read secret %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read secret %s from Credential Manager: %w", name, err)
	}
	return cred.CredentialBlob, nil
}

func (credStore) Delete(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	cred, err := wincred.GetGenericCredential(target(name))
	if errors.Is(err, wincred.ErrElementNotFound) {
		return fmt.Errorf("delete secret %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete secret %s from Credential Manager: %w", name, err)
	}
	clear(cred.CredentialBlob)
	if err := cred.Delete(); err != nil {
		return fmt.Errorf("delete secret %s from Credential Manager: %w", name, err)
	}
	return nil
}

func (s credStore) Present(name string) (bool, error) {
	b, err := s.Get(name)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	clear(b)
	return true, nil
}
