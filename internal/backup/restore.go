package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hearth-dev/hearth/internal/instance"
)

// ErrRunning refuses a restore while Hearth runs for the data directory.
var ErrRunning = errors.New("Hearth is running: quit it first (tray menu → Quit Hearth), then restore again")

// DBName is the database's file name in the data directory.
const DBName = "hearth.db"

// Restored says what Restore did.
type Restored struct {
	// Backup is the restored file, verified.
	Backup Info
	// Aside is the directory the replaced database was moved to; "" when
	// there was none.
	Aside string
}

// Restore replaces <dataDir>/hearth.db with the backup at file. It refuses
// (ErrRunning) while a Hearth holds the instance lock and holds that lock
// itself until it is done, so no Hearth starts meanwhile. It copies file
// into the data directory and verifies the copy (Verify, with
// verifierKey); a backup listed in the backups directory must also still
// have the bytes its record says were verified. Only then is the current
// database, with its WAL and shared-memory files, moved into
// backups/replaced-<time>/ and the copy renamed into its place. The next
// Hearth start migrates the restored database if it is older.
func Restore(ctx context.Context, dataDir, file, verifierKey string, now time.Time) (Restored, error) {
	lock, err := instance.Acquire(instance.LockHearth, dataDir)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		return Restored{}, ErrRunning
	}
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer lock.Release()

	abs, err := filepath.Abs(file)
	if err != nil {
		return Restored{}, fmt.Errorf("restore %s: %w", file, err)
	}
	live := filepath.Join(dataDir, DBName)
	if same, _ := sameFile(abs, live); same {
		return Restored{}, fmt.Errorf("restore %s: that is the current database", file)
	}
	if rec, err := readRecord(abs); err == nil {
		if err := Recheck(rec); err != nil {
			return Restored{}, fmt.Errorf("restore %s: %w", file, err)
		}
	}
	tmp, err := tempName(dataDir, ".restoring-", ".db")
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer os.Remove(tmp)
	if err := copyFile(abs, tmp); err != nil {
		return Restored{}, fmt.Errorf("restore %s: %w", file, err)
	}
	info, err := verifyFile(ctx, tmp, verifierKey)
	if err != nil {
		return Restored{}, fmt.Errorf("restore %s: refused, the file does not verify: %w", file, err)
	}
	info.File, info.Path = filepath.Base(abs), abs

	aside, err := moveAside(dataDir, now)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: keep the current database: %w", err)
	}
	if err := os.Rename(tmp, live); err != nil {
		err = fmt.Errorf("restore: put the backup in place: %w", err)
		if aside != "" {
			err = errors.Join(err, moveBack(aside, dataDir))
		}
		return Restored{}, err
	}
	return Restored{Backup: info, Aside: aside}, nil
}

// dbFiles are the database's files: SQLite finds the WAL and shared-memory
// files by name beside the database, so they move together.
var dbFiles = []string{DBName, DBName + "-wal", DBName + "-shm"}

// moveAside moves the current database files into
// backups/replaced-<time>/ and returns that directory, or "" when there is
// no current database.
func moveAside(dataDir string, now time.Time) (string, error) {
	if _, err := os.Stat(filepath.Join(dataDir, DBName)); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	dir := filepath.Join(Dir(dataDir), "replaced-"+now.UTC().Format(nameTime))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, name := range dbFiles {
		err := os.Rename(filepath.Join(dataDir, name), filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", errors.Join(err, moveBack(dir, dataDir))
		}
	}
	return dir, nil
}

// moveBack undoes moveAside.
func moveBack(dir, dataDir string) error {
	var errs []error
	for _, name := range dbFiles {
		err := os.Rename(filepath.Join(dir, name), filepath.Join(dataDir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("move the database back from %s: %w", dir, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
