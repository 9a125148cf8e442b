//go:build !windows

package instance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Lock is a held instance lock: an open file with an exclusive flock(2).
// The kernel drops the lock when the file is closed, which happens at the
// latest when the process exits.
type Lock struct {
	dataDir string
	once    sync.Once
	f       *os.File
}

// Acquire takes the instance lock for name in dataDir
// (<dataDir>/<name>.lock, created 0600), or returns ErrAlreadyRunning.
func Acquire(name, dataDir string) (*Lock, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("instance lock: %w", err)
	}
	path := filepath.Join(dataDir, name+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("instance lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, ErrAlreadyRunning
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("instance lock %s: %w", path, err)
	}
	return &Lock{dataDir: dataDir, f: f}, nil
}

// Release gives up the lock and removes instance.json if this process wrote
// it. The lock file itself stays: removing it would let a racing Acquire
// lock a file that a third process then recreates. Calling Release more
// than once is harmless.
func (l *Lock) Release() error {
	var err error
	l.once.Do(func() {
		err = errors.Join(removeOwnInfo(l.dataDir), l.f.Close())
	})
	return err
}

// Held reports whether some process holds the instance lock for name in
// dataDir. It creates nothing: a missing data directory or lock file means
// nobody holds the lock (a holder creates the file before it locks it).
//
// flock(2) cannot be queried, so Held takes a shared lock with LOCK_NB and
// drops it at once: refused means held. While Held has that shared lock (a
// few microseconds) an Acquire of the same name would get
// ErrAlreadyRunning; callers that must not disturb a start (hearth-tray
// doctor) use it only for the Hearth lock, never for the ensure lock, and
// accept that window. On Windows Held takes nothing at all.
func Held(name, dataDir string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	path := filepath.Join(dataDir, name+".lock")
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("instance lock %s: %w", path, err)
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("instance lock %s: %w", path, err)
	}
	// Closing the file drops the shared lock.
	return false, nil
}
