package tunnel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/hearth-dev/hearth/internal/config"
)

// Pinning. Hearth runs exactly one tunnel-client file, the one the
// operator pinned on the Setup page: its absolute path and its SHA-256 are
// kept in config.json (tunnel.client_path, tunnel.client_sha256), which the
// fs tool cannot reach. Before every start of the child, and before every
// init or doctor, Hearth opens that file, hashes it and runs what it
// hashed; a file whose hash changed is never run. The search for a
// tunnel-client (tunnel.client_path, beside hearth-tray, PATH) happens only
// when the operator pins, never at start: the default fs root, the user's
// home, holds a folder on PATH (%LOCALAPPDATA%\Microsoft\WindowsApps), so a
// PATH lookup at start would run whatever the model planted there with the
// tunnel key in its environment.

// KindClientPinned is the ledger entry of a pin (path and sha256).
const KindClientPinned = "tunnel_client_pinned"

// ErrNotPinned: no tunnel-client is pinned; the operator pins one on the
// Setup page (running init there pins one too).
var ErrNotPinned = errors.New("tunnel-client is not pinned yet (pin it on the Setup page; running init there pins it too)")

// ErrClientNotFound: FindClient found no tunnel-client to pin.
var ErrClientNotFound = errors.New("tunnel-client not found")

// ErrClientChanged is what a ClientChangedError wraps.
var ErrClientChanged = errors.New("the pinned tunnel-client changed")

// ClientChangedError says that the pinned tunnel-client is gone, cannot be
// read or no longer has the pinned SHA-256. It is the reason of
// StateClientChanged and names the file, so that the operator can check it
// before pinning it again.
type ClientChangedError struct {
	Path string
	// Want is the pinned SHA-256; Got the file's now ("" when Err says why
	// it could not be hashed).
	Want, Got string
	Err       error
}

func (e *ClientChangedError) Error() string {
	what := "no longer has the SHA-256 pinned on the Setup page"
	if e.Err != nil {
		what = "cannot be read"
		if errors.Is(e.Err, os.ErrNotExist) {
			what = "is gone"
		}
	}
	return fmt.Sprintf("the pinned tunnel-client %s %s; Hearth will not run it until the operator checks it and pins it again on the Setup page", e.Path, what)
}

func (e *ClientChangedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrClientChanged}
	}
	return []error{ErrClientChanged, e.Err}
}

// Pin is a pinned tunnel-client.
type Pin struct {
	// Path is the absolute path of the file.
	Path string `json:"path"`
	// SHA256 is its content's SHA-256, lowercase hex.
	SHA256 string `json:"sha256"`
}

// Pinned returns the pinned tunnel-client, if any. It does not look at the
// file; VerifyClient does.
func (s *Supervisor) Pinned() (Pin, bool) {
	cfg := s.Config()
	if cfg.ClientPath == "" || cfg.ClientSHA256 == "" {
		return Pin{}, false
	}
	return Pin{Path: cfg.ClientPath, SHA256: cfg.ClientSHA256}, true
}

// VerifyClient hashes the pinned tunnel-client now: nil when it still has
// its pinned SHA-256, ErrNotPinned, or a *ClientChangedError.
func (s *Supervisor) VerifyClient() error {
	c, err := openClient(s.Config())
	if err != nil {
		return err
	}
	return c.Close()
}

// FindClient returns the tunnel-client that PinClient("") would pin, and
// where it was found: "tunnel.client_path", "beside hearth-tray" or "PATH"
// (never the current directory). Only the operator's pin uses it; nothing
// is ever started from what it finds.
func (s *Supervisor) FindClient() (path, source string, err error) {
	cfg := s.Config()
	if cfg.ClientPath != "" {
		if isFile(cfg.ClientPath) {
			return filepath.Clean(cfg.ClientPath), "tunnel.client_path", nil
		}
		return "", "", fmt.Errorf("%w: tunnel.client_path (%s) does not name a program file", ErrClientNotFound, cfg.ClientPath)
	}
	dir := s.exeDir
	if dir == "" {
		if exe, err := os.Executable(); err == nil {
			dir = filepath.Dir(exe)
		}
	}
	if dir != "" {
		if p := filepath.Join(dir, clientName()); isFile(p) {
			return p, "beside hearth-tray", nil
		}
	}
	if p, err := exec.LookPath(clientName()); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, "PATH", nil
		}
	}
	return "", "", fmt.Errorf("%w: no %s beside hearth-tray or on PATH (put it there, or give its full path)", ErrClientNotFound, clientName())
}

// PinClient pins tunnel-client: path when given (it must be absolute),
// else what FindClient finds. It hashes the file, saves path and hash as
// tunnel.client_path and tunnel.client_sha256 (persisted like SetConfig)
// and records tunnel_client_pinned in the ledger. Only the operator may
// call it (the Setup page); pinning again after updating tunnel-client is
// how the new file is allowed to run. A running tunnel-client keeps
// running; its next start runs the new pin.
func (s *Supervisor) PinClient(path string) (Pin, error) {
	if path == "" {
		p, _, err := s.FindClient()
		if err != nil {
			return Pin{}, err
		}
		path = p
	} else if !filepath.IsAbs(path) {
		return Pin{}, &config.Error{Key: "tunnel.client_path", Msg: fmt.Sprintf("%q is not an absolute path", path)}
	}
	path = filepath.Clean(path)
	if !isFile(path) {
		return Pin{}, &config.Error{Key: "tunnel.client_path", Msg: fmt.Sprintf("%q is not a program file", path)}
	}
	f, err := openExclusive(path)
	if err != nil {
		return Pin{}, fmt.Errorf("open tunnel-client %s: %w", path, err)
	}
	sum, err := hashFile(f)
	f.Close()
	if err != nil {
		return Pin{}, fmt.Errorf("hash tunnel-client %s: %w", path, err)
	}
	pin := Pin{Path: path, SHA256: sum}
	cfg := s.Config()
	cfg.ClientPath, cfg.ClientSHA256 = pin.Path, pin.SHA256
	if err := s.SetConfig(cfg); err != nil {
		return Pin{}, err
	}
	if s.journal != nil {
		if _, err := s.journal.Append(context.Background(), KindClientPinned, pin); err != nil {
			return pin, fmt.Errorf("tunnel-client was pinned but the pin was not recorded in the ledger: %w", err)
		}
	}
	s.log.Info("tunnel: tunnel-client pinned", "path", pin.Path, "sha256", pin.SHA256)
	return pin, nil
}

// client is a pinned tunnel-client, open and verified: Path is what to
// run. While it is open the file cannot be swapped for another one under
// the name that was verified (on Windows the handle denies writing,
// renaming and deleting it; on Linux Path runs the open file itself,
// through /proc/self/fd). Close it once the child has started.
type client struct {
	f *os.File
	// Path is what exec runs; Name is the pinned path (argv[0], messages).
	Path, Name string
}

func (c *client) Close() error { return c.f.Close() }

// openClient opens the pinned tunnel-client of cfg and checks its hash:
// ErrNotPinned, or a *ClientChangedError, or the open client.
func openClient(cfg config.Tunnel) (*client, error) {
	if cfg.ClientPath == "" || cfg.ClientSHA256 == "" {
		return nil, ErrNotPinned
	}
	changed := &ClientChangedError{Path: cfg.ClientPath, Want: cfg.ClientSHA256}
	st, err := os.Stat(cfg.ClientPath)
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		changed.Err = err
		return nil, changed
	}
	f, err := openExclusive(cfg.ClientPath)
	if err != nil {
		changed.Err = err
		return nil, changed
	}
	sum, err := hashFile(f)
	if err != nil {
		f.Close()
		changed.Err = err
		return nil, changed
	}
	if sum != cfg.ClientSHA256 {
		f.Close()
		changed.Got = sum
		return nil, changed
	}
	return &client{f: f, Path: execPath(f, cfg.ClientPath), Name: cfg.ClientPath}, nil
}

// hashFile returns the SHA-256 of f's content from its start, lowercase
// hex.
func hashFile(f *os.File) (string, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// clientName is tunnel-client's file name on this OS.
func clientName() string {
	if runtime.GOOS == "windows" {
		return "tunnel-client.exe"
	}
	return "tunnel-client"
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
