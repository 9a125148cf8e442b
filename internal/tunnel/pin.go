package tunnel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hearth-dev/hearth/internal/config"
)

// Pinning. Hearth runs exactly one tunnel-client file, the one the
// operator pinned on the Setup page: its absolute path and its SHA-256 are
// kept in config.json (tunnel.client_path, tunnel.client_sha256), which the
// fs tool cannot reach. Before every start of the child, and before every
// init or doctor, Hearth opens that file, hashes it and runs what it
// hashed; a file whose hash changed is never run.
//
// Nothing found by a search is ever pinned without the operator seeing
// it: the default fs root, the user's home, holds a folder on PATH
// (%LOCALAPPDATA%\Microsoft\WindowsApps), so whatever a PATH lookup finds
// may have been planted by the model, and it would be handed the tunnel
// key. Candidates lists what there is (beside hearth-tray,
// tunnel.client_path, PATH) with each file's SHA-256 and a warning where
// the model could have written it; the operator pins one by its path and
// the hash the page showed (PinClient), so a file swapped after the page
// was drawn is refused. The only file Hearth pins by itself (PinBesideExe,
// AutoPin, PreferBesideExe) is the tunnel-client beside hearth-tray, which
// the fs tool is denied (app's deniedPaths). Every pinned file is denied to the fs tool
// from the moment it is pinned (Options.OnPinned), so that the model
// cannot stop the tunnel by rewriting it.

// KindClientPinned is the ledger entry of a pin (path, sha256 and how).
const KindClientPinned = "tunnel_client_pinned"

// ErrNotPinned: no tunnel-client is pinned; the operator pins one on the
// Setup page.
var ErrNotPinned = errors.New("tunnel-client is not pinned yet (pin it on the Setup page)")

// ErrClientChanged is what a ClientChangedError wraps.
var ErrClientChanged = errors.New("the pinned tunnel-client changed")

// ErrClientUnreadable is what a ClientUnreadableError wraps.
var ErrClientUnreadable = errors.New("the pinned tunnel-client cannot be read just now")

// ErrHashMismatch is what a HashMismatchError wraps.
var ErrHashMismatch = errors.New("tunnel-client does not have the SHA-256 shown")

// errNotRegular: the pinned path names something other than a file.
var errNotRegular = errors.New("not a regular file")

// ClientChangedError says that the pinned tunnel-client is gone, is no
// longer a file, or no longer has the pinned SHA-256. It is terminal: the
// reason of StateClientChanged, lifted only by a new pin. It names the
// file, so that the operator can check it before pinning it again.
type ClientChangedError struct {
	Path string
	// Want is the pinned SHA-256; Got the file's now ("" when Err says why
	// there is no file to hash).
	Want, Got string
	Err       error
}

func (e *ClientChangedError) Error() string {
	what := "no longer has the SHA-256 pinned on the Setup page"
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		what = "is gone"
	case e.Err != nil:
		what = "is no longer a program file"
	}
	return fmt.Sprintf("the pinned tunnel-client %s %s; Hearth will not run it until the operator checks it and pins it again on the Setup page", e.Path, what)
}

func (e *ClientChangedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrClientChanged}
	}
	return []error{ErrClientChanged, e.Err}
}

// ClientUnreadableError says that the pinned tunnel-client exists but
// could not be opened or read: most often another program holds it open
// (a backup tool or an antivirus scan: a sharing violation on Windows).
// It is not terminal: the supervisor tries again after its restart
// backoff.
type ClientUnreadableError struct {
	Path string
	Err  error
}

func (e *ClientUnreadableError) Error() string {
	return fmt.Sprintf("the pinned tunnel-client %s cannot be read just now (another program may hold it open): %v", e.Path, e.Err)
}

func (e *ClientUnreadableError) Unwrap() []error { return []error{ErrClientUnreadable, e.Err} }

// HashMismatchError is PinClient's refusal: the file does not have the
// SHA-256 the operator was shown (it changed since the page was drawn),
// so nothing was pinned.
type HashMismatchError struct {
	Path string
	// Want is the SHA-256 the operator saw; Got the file's now.
	Want, Got string
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("tunnel-client %s now has SHA-256 %s, not the %s you were shown; it changed since, so nothing was pinned (check the file, then pin it with its new SHA-256)", e.Path, e.Got, e.Want)
}

func (e *HashMismatchError) Unwrap() error { return ErrHashMismatch }

// Pin is a pinned tunnel-client.
type Pin struct {
	// Path is the absolute path of the file.
	Path string `json:"path"`
	// SHA256 is its content's SHA-256, lowercase hex.
	SHA256 string `json:"sha256"`
}

// pinRecord is the ledger entry of a pin.
type pinRecord struct {
	Pin
	// How says who pinned it: the operator on the Setup page, or Hearth
	// by itself (the copy beside hearth-tray).
	How string `json:"how"`
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
// its pinned SHA-256, ErrNotPinned, a *ClientChangedError or a
// *ClientUnreadableError.
func (s *Supervisor) VerifyClient() error {
	c, err := s.openClient(s.Config())
	if err != nil {
		return err
	}
	return c.Close()
}

// checkClientPath refuses what cannot be pinned, naming
// tunnel.client_path.
func checkClientPath(path string) error {
	if !filepath.IsAbs(path) {
		return &config.Error{Key: "tunnel.client_path", Msg: fmt.Sprintf("%q is not an absolute path", path)}
	}
	if !isFile(path) {
		return &config.Error{Key: "tunnel.client_path", Msg: fmt.Sprintf("%q is not a program file", path)}
	}
	return nil
}

// PinClient pins the tunnel-client at path, which must be absolute and
// must still have sha256, the hash the operator was shown (Candidates,
// Inspect): it hashes the file again and refuses with a
// *HashMismatchError when it differs, pinning nothing. It saves path and
// hash as tunnel.client_path and tunnel.client_sha256 (persisted like
// SetConfig) and records tunnel_client_pinned in the ledger. Only the
// operator may call it (the Setup page); pinning again after updating
// tunnel-client is how the new file is allowed to run. A running
// tunnel-client keeps running; its next start runs the new pin.
func (s *Supervisor) PinClient(path, sha256 string) (Pin, error) {
	if err := checkClientPath(path); err != nil {
		return Pin{}, err
	}
	want := strings.ToLower(strings.TrimSpace(sha256))
	if !config.IsSHA256(want) {
		return Pin{}, &config.Error{Key: "tunnel.client_sha256", Msg: "is not a SHA-256 (64 hexadecimal digits); pin tunnel-client from the Setup page, which shows its SHA-256"}
	}
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	path = filepath.Clean(path)
	got, err := hashPath(path)
	if err != nil {
		return Pin{}, err
	}
	if got != want {
		return Pin{}, &HashMismatchError{Path: path, Want: want, Got: got}
	}
	return s.savePin(Pin{Path: path, SHA256: got}, "the operator, on the Setup page")
}

// PinBesideExe pins the tunnel-client beside hearth-tray when nothing is
// pinned yet, and reports whether it did. That file is the one Hearth may
// pin by itself: the fs tool is denied it, so the model cannot have put
// it there. It pins nothing when a pin exists, when there is no
// tunnel-client beside hearth-tray, or when tunnel.client_path names
// another file (the operator chose that one; only the operator pins it).
// how goes into the ledger entry and the log.
func (s *Supervisor) PinBesideExe(how string) (Pin, bool, error) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if _, ok := s.Pinned(); ok {
		return Pin{}, false, nil
	}
	beside := s.besideExe()
	if beside == "" || !isFile(beside) {
		return Pin{}, false, nil
	}
	if p := s.Config().ClientPath; p != "" && !samePath(p, beside) {
		s.log.Info("tunnel: not pinning the tunnel-client beside hearth-tray: tunnel.client_path names another file", "client_path", p)
		return Pin{}, false, nil
	}
	sum, err := hashPath(beside)
	if err != nil {
		return Pin{}, false, err
	}
	pin, err := s.savePin(Pin{Path: beside, SHA256: sum}, how)
	return pin, err == nil, err
}

// AutoPin is Hearth's start-up step for a config.json written before
// pinning existed: a tunnel ID and a runtime key but no
// tunnel.client_sha256, so the tunnel could not start unattended. It pins
// the tunnel-client beside hearth-tray (PinBesideExe), never one on PATH
// or elsewhere; otherwise the tunnel stays not set up until the operator
// pins one on the Setup page. It reports whether it pinned.
func (s *Supervisor) AutoPin() (Pin, bool, error) {
	if _, ok := s.Pinned(); ok || s.Config().TunnelID == "" {
		return Pin{}, false, nil
	}
	if ok, err := s.KeyPresent(); err != nil || !ok {
		return Pin{}, false, err
	}
	return s.PinBesideExe("Hearth at start: the tunnel was set up but nothing was pinned (an upgrade); only the tunnel-client beside hearth-tray is pinned this way")
}

// PreferBesideExe is Hearth's start-up step after a new version was
// unpacked into a folder of its own: the pin names the tunnel-client
// beside an older copy of hearth-tray (another folder that holds
// hearth-tray), while this hearth-tray has its package's own beside it.
// It pins the one beside this hearth-tray, the copy Hearth trusts by
// itself (as on first run), records that in the ledger and the log, and
// remembers the old path for the Setup page (PinMovedFrom). A pin of a
// file elsewhere (not beside any hearth-tray) is the operator's choice and
// stays. So does the old pin when this hearth-tray's folder lies in an fs
// root (a new version unzipped in Downloads, say): the model could write
// there before this start denied the file, so only the operator trusts
// it, on the Setup page (HeldBeside). It reports the old path and whether
// it pinned.
func (s *Supervisor) PreferBesideExe() (from string, pinned bool, err error) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	cur, ok := s.Pinned()
	beside := s.besideExe()
	if !ok || beside == "" || !isFile(beside) || samePath(cur.Path, beside) {
		return "", false, nil
	}
	oldDir := filepath.Dir(cur.Path)
	if !isFile(filepath.Join(oldDir, hearthName())) {
		return "", false, nil
	}
	if root := s.rootOf(beside); root != "" {
		s.log.Warn("tunnel: not switching to the tunnel-client beside this hearth-tray: it lies in an fs root, which the model can write to; the operator trusts it on the Setup page", "path", beside, "root", root, "pinned", cur.Path)
		s.mu.Lock()
		s.heldBeside, s.heldRoot = beside, root
		s.mu.Unlock()
		return "", false, nil
	}
	sum, err := hashPath(beside)
	if err != nil {
		return "", false, err
	}
	how := "Hearth at start: the tunnel-client beside this hearth-tray, in place of the one beside an older hearth-tray in " + oldDir
	if _, err := s.savePin(Pin{Path: beside, SHA256: sum}, how); err != nil {
		return "", false, err
	}
	s.mu.Lock()
	s.movedFrom = cur.Path
	s.mu.Unlock()
	return cur.Path, true, nil
}

// PinMovedFrom is the tunnel-client PreferBesideExe replaced at this
// start ("" when it replaced none): the Setup page says which file Hearth
// runs now instead.
func (s *Supervisor) PinMovedFrom() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.movedFrom
}

// HeldBeside is the tunnel-client beside this hearth-tray that
// PreferBesideExe left unpinned at this start, and the fs root it lies in
// ("" when none, or once it is the pin): the Setup page offers it to
// trust and says why Hearth did not switch to it by itself.
func (s *Supervisor) HeldBeside() (path, root string) {
	s.mu.Lock()
	path, root = s.heldBeside, s.heldRoot
	s.mu.Unlock()
	if pin, ok := s.Pinned(); path == "" || ok && samePath(pin.Path, path) {
		return "", ""
	}
	return path, root
}

// hearthName is hearth-tray's file name on this OS.
func hearthName() string {
	if runtime.GOOS == "windows" {
		return "hearth-tray.exe"
	}
	return "hearth-tray"
}

// savePin saves pin as the configuration (changing only the pin's two
// settings of those in effect, so that a tunnel ID Init saves meanwhile
// stays), denies the file to the fs tool (Options.OnPinned), journals and
// logs it.
func (s *Supervisor) savePin(pin Pin, how string) (Pin, error) {
	err := s.UpdateConfig(func(t *config.Tunnel) error {
		t.ClientPath, t.ClientSHA256 = pin.Path, pin.SHA256
		return nil
	})
	if err != nil {
		return Pin{}, err
	}
	if s.onPinned != nil {
		s.onPinned(pin.Path)
	}
	if s.journal != nil {
		if _, err := s.journal.Append(context.Background(), KindClientPinned, pinRecord{Pin: pin, How: how}); err != nil {
			return pin, fmt.Errorf("tunnel-client was pinned but the pin was not recorded in the ledger: %w", err)
		}
	}
	s.log.Info("tunnel: tunnel-client pinned", "path", pin.Path, "sha256", pin.SHA256, "by", how)
	return pin, nil
}

// hashPath hashes the file at path, opened as for a run.
func hashPath(path string) (string, error) {
	f, err := openExclusive(path)
	if err != nil {
		return "", fmt.Errorf("open tunnel-client %s: %w", path, err)
	}
	defer f.Close()
	sum, err := hashFile(f)
	if err != nil {
		return "", fmt.Errorf("hash tunnel-client %s: %w", path, err)
	}
	return sum, nil
}

// client is a pinned tunnel-client, open and verified. While it is open
// the file cannot be swapped for another one under the name that was
// verified: on Windows the handle denies writing, renaming and deleting
// it, and Path is the handle's final path; on Linux what runs is the open
// file itself, through /proc/self/fd (see pin_other.go). Close it once
// the child has started.
type client struct {
	f *os.File
	// Path is what a setup command runs; Name is the pinned path
	// (argv[0], messages).
	Path, Name string
}

func (c *client) Close() error { return c.f.Close() }

// openClient opens the pinned tunnel-client of cfg and checks its hash:
// ErrNotPinned; a *ClientChangedError (gone, not a file, another hash:
// terminal); a *ClientUnreadableError (it could not be opened or read
// just now: worth another try); or the open client.
func (s *Supervisor) openClient(cfg config.Tunnel) (*client, error) {
	if cfg.ClientPath == "" || cfg.ClientSHA256 == "" {
		return nil, ErrNotPinned
	}
	changed := &ClientChangedError{Path: cfg.ClientPath, Want: cfg.ClientSHA256}
	unreadable := func(err error) error { return &ClientUnreadableError{Path: cfg.ClientPath, Err: err} }
	st, err := os.Stat(cfg.ClientPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		changed.Err = err
		return nil, changed
	case err != nil:
		return nil, unreadable(err)
	case !st.Mode().IsRegular():
		changed.Err = errNotRegular
		return nil, changed
	}
	open := openExclusive
	if s.seams.open != nil {
		open = s.seams.open
	}
	f, err := open(cfg.ClientPath)
	if errors.Is(err, fs.ErrNotExist) {
		changed.Err = err
		return nil, changed
	}
	if err != nil {
		return nil, unreadable(err)
	}
	sum, err := hashFile(f)
	if err != nil {
		f.Close()
		return nil, unreadable(err)
	}
	if sum != cfg.ClientSHA256 {
		f.Close()
		changed.Got = sum
		return nil, changed
	}
	path, err := execPath(f, cfg.ClientPath)
	if err != nil {
		f.Close()
		return nil, unreadable(err)
	}
	return &client{f: f, Path: path, Name: cfg.ClientPath}, nil
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

// ClientName is tunnel-client's file name on this OS.
func ClientName() string {
	if runtime.GOOS == "windows" {
		return "tunnel-client.exe"
	}
	return "tunnel-client"
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
