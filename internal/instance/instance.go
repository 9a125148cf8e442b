// Package instance keeps Hearth to one running instance per user and data
// directory, and lets a second start find the first one's addresses.
//
// Acquire takes the lock: a named mutex on Windows, flock(2) on a file in
// the data directory elsewhere. Both are released by the operating system
// when the holder exits, however it exits, so a crash never leaves a stale
// lock behind. The holder then publishes its addresses with WriteInfo; a
// second start that gets ErrAlreadyRunning reads them with ReadInfo, opens
// the first instance's panel and exits 0. Held asks whether the lock is
// held without taking it (Windows) or taking it only for an instant
// (elsewhere), for diagnostics that must not disturb a start.
//
// The lock covers one data directory, not the whole account: with the
// default data directory that is "one per user", while a run with its own
// HEARTH_HOME (tests, `hearth-tray demo`) does not collide with the tray.
package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// ErrAlreadyRunning is returned by Acquire when another process holds the lock.
var ErrAlreadyRunning = errors.New("another Hearth instance is already running for this user")

// Lock names: the one the running Hearth (serve or the tray) holds, and
// the one an ensure holds while it starts Hearth.
const (
	LockHearth = "hearth"
	LockEnsure = "hearth-ensure"
)

// InfoFile is the name of the file, in the data directory, that describes
// the running instance.
const InfoFile = "instance.json"

// Info describes the running instance to a second start.
type Info struct {
	PID      int    `json:"pid"`
	MCPURL   string `json:"mcp_url"`
	PanelURL string `json:"panel_url"`
	// Version is the running program's version: how an update's health
	// check knows the new program is the one that answers.
	Version string `json:"version,omitempty"`
}

// checkName accepts 1 to 32 ASCII letters, digits, '-' or '_': the name
// becomes part of a kernel object name and of a file name.
func checkName(name string) error {
	if name == "" || len(name) > 32 {
		return fmt.Errorf("invalid instance name %q", name)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("invalid instance name %q", name)
		}
	}
	return nil
}

// WriteInfo publishes info as <dataDir>/instance.json, replacing the file
// atomically so a concurrent ReadInfo sees the old or the new content.
func WriteInfo(dataDir string, info Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := atomicfile.WriteWith(filepath.Join(dataDir, InfoFile), 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("write instance info: %w", err)
	}
	return nil
}

// ReadInfo reads <dataDir>/instance.json. A missing file gives an error
// matching fs.ErrNotExist: the first instance may not have written it yet.
func ReadInfo(dataDir string) (Info, error) {
	var info Info
	b, err := os.ReadFile(filepath.Join(dataDir, InfoFile))
	if err != nil {
		return info, fmt.Errorf("read instance info: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("read instance info %s: %w", filepath.Join(dataDir, InfoFile), err)
	}
	return info, nil
}

// removeOwnInfo deletes instance.json if it describes this process, so a
// later start does not read a dead instance's addresses.
func removeOwnInfo(dataDir string) error {
	info, err := ReadInfo(dataDir)
	if err != nil || info.PID != os.Getpid() {
		return nil
	}
	if err := os.Remove(filepath.Join(dataDir, InfoFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove instance info: %w", err)
	}
	return nil
}
