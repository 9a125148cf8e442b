package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/windows"
)

// Lock is a held instance lock: an open handle to a named mutex. The mutex
// exists while any process holds a handle to it, and Windows closes the
// handle when the process exits.
type Lock struct {
	dataDir string
	once    sync.Once
	h       windows.Handle
}

// Acquire takes the instance lock for name and dataDir, or returns
// ErrAlreadyRunning.
//
// The mutex is `Local\Hearth-<name>-<user SID>-<data dir hash>`. Local\ is
// the logon session's namespace: the tray belongs to one interactive
// desktop, and the Task Scheduler's ensure task runs in that session. The
// user's SID keeps two users (runas, fast user switching in one session)
// apart; the hash of the cleaned, case-folded absolute data directory ties
// the lock to the database it protects.
func Acquire(name, dataDir string) (*Lock, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	mutexName, err := mutexName(name, dataDir)
	if err != nil {
		return nil, err
	}
	p, err := windows.UTF16PtrFromString(mutexName)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateMutex(nil, false, p)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		windows.CloseHandle(h)
		return nil, ErrAlreadyRunning
	}
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		// Someone else owns an object of that name; we cannot tell whether
		// Hearth runs, so say what happened.
		return nil, fmt.Errorf("create instance mutex %s: access denied (object owned by another account)", mutexName)
	}
	if err != nil {
		return nil, fmt.Errorf("create instance mutex %s: %w", mutexName, err)
	}
	return &Lock{dataDir: dataDir, h: h}, nil
}

// Release gives up the lock and removes instance.json if this process wrote
// it. Calling it more than once is harmless.
func (l *Lock) Release() error {
	var err error
	l.once.Do(func() {
		err = errors.Join(removeOwnInfo(l.dataDir), windows.CloseHandle(l.h))
	})
	return err
}

func mutexName(name, dataDir string) (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", fmt.Errorf("instance lock: %w", err)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", fmt.Errorf("instance lock: %w", err)
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(abs))))
	return `Local\Hearth-` + name + "-" + sid + "-" + hex.EncodeToString(sum[:8]), nil
}

func userSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("read user SID: %w", err)
	}
	return tu.User.Sid.String(), nil
}

// Held reports whether some process holds the instance lock for name and
// dataDir, without taking it: it opens the named mutex Acquire creates,
// asking only for SYNCHRONIZE, and closes it at once. The mutex exists only
// while a holder has a handle to it, so "it exists" means held and
// ERROR_FILE_NOT_FOUND means not held. When nobody holds the lock, Held
// creates nothing and a start at that moment is not affected. The one
// overlap left: if the holder exits while Held has the mutex open (a few
// microseconds), the object lives on until Held closes it, and a start in
// that instant sees ErrAlreadyRunning.
func Held(name, dataDir string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	mutexName, err := mutexName(name, dataDir)
	if err != nil {
		return false, err
	}
	p, err := windows.UTF16PtrFromString(mutexName)
	if err != nil {
		return false, err
	}
	h, err := windows.OpenMutex(windows.SYNCHRONIZE, false, p)
	switch {
	case err == nil:
		windows.CloseHandle(h)
		return true, nil
	case errors.Is(err, windows.ERROR_FILE_NOT_FOUND):
		return false, nil
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return false, fmt.Errorf("open instance mutex %s: access denied (object owned by another account)", mutexName)
	default:
		return false, fmt.Errorf("open instance mutex %s: %w", mutexName, err)
	}
}
