//go:build !windows

package instance

import (
	"errors"
	"fmt"
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
