package tunnel

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Sources of a Candidate: where it was found.
const (
	SourceBesideExe  = "beside hearth-tray"
	SourceConfigured = "tunnel.client_path"
	SourcePath       = "PATH"
	SourceTyped      = "the path you gave"
)

// Candidate is a tunnel-client the operator may pin, as the Setup page
// shows it.
type Candidate struct {
	// Path is the absolute path of the file.
	Path string
	// Source is where it was found (SourceBesideExe, …).
	Source string
	// SHA256 is its content's SHA-256 now; "" when Err says why not.
	SHA256 string
	// Root is the fs root it lies in, "" when none: the model can write
	// there, so it may have planted this file. The copy beside
	// hearth-tray is never flagged: the fs tool is denied it.
	Root string
	Err  error
}

// Risky reports whether the model could have put this file there: it
// was found on PATH or lies in an fs root.
func (c Candidate) Risky() bool { return c.Source == SourcePath || c.Root != "" }

// ProgramFolder is the folder of hearth-tray, where its own tunnel-client
// belongs (the one copy Hearth trusts by itself).
func (s *Supervisor) ProgramFolder() string { return filepath.Dir(s.besideExe()) }

// HasBesideExe reports whether a tunnel-client lies beside hearth-tray:
// the copy Connect trusts by itself (PinBesideExe) when nothing is pinned.
func (s *Supervisor) HasBesideExe() bool { return isFile(s.besideExe()) }

// besideExe is where hearth-tray's own tunnel-client would be.
func (s *Supervisor) besideExe() string {
	dir := s.exeDir
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return ""
		}
		dir = filepath.Dir(exe)
	}
	return filepath.Join(dir, ClientName())
}

// Candidates lists the tunnel-client files the operator could pin, each
// hashed now: the one beside hearth-tray, the one tunnel.client_path
// names, and the one PATH finds (never in the current directory), each
// path once, in that order. Nothing is pinned or run; the Setup page shows
// them so that the operator pins the one they checked.
func (s *Supervisor) Candidates() []Candidate {
	cfg := s.Config()
	var out []Candidate
	add := func(path, source string) {
		if path == "" || !filepath.IsAbs(path) || !isFile(path) {
			return
		}
		path = filepath.Clean(path)
		for _, c := range out {
			if samePath(c.Path, path) {
				return
			}
		}
		out = append(out, s.inspect(path, source))
	}
	add(s.besideExe(), SourceBesideExe)
	add(cfg.ClientPath, SourceConfigured)
	if p, err := exec.LookPath(ClientName()); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			add(abs, SourcePath)
		}
	}
	return out
}

// FilesStamp is a short fingerprint of the tunnel-client files Hearth
// would look at: the pin, the one beside hearth-tray, the one
// tunnel.client_path names and the one PATH finds, each by its path, size
// and modification time, read without opening them. It changes when one
// of them appears, goes or is written: the Setup page, waiting for the
// person to put the program in place, polls it and reloads (and hashes
// again) only then, so that a refresh never hashes a file.
func (s *Supervisor) FilesStamp() string {
	cfg := s.Config()
	h := sha256.New()
	look := func(path string) {
		fmt.Fprintf(h, "%s\x00", path)
		if path == "" {
			return
		}
		if st, err := os.Stat(path); err == nil {
			fmt.Fprintf(h, "%d %d %v\x00", st.Size(), st.ModTime().UnixNano(), st.Mode().IsRegular())
		}
	}
	look(s.besideExe())
	look(cfg.ClientPath)
	if p, err := exec.LookPath(ClientName()); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			look(abs)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Inspect hashes the file at path, which the operator typed, so that the
// Setup page can show its SHA-256 before the operator pins it. path must
// be the absolute path of a file (a *config.Error for
// tunnel.client_path otherwise); a file that cannot be read comes back
// with Err set.
func (s *Supervisor) Inspect(path string) (Candidate, error) {
	if err := checkClientPath(path); err != nil {
		return Candidate{}, err
	}
	return s.inspect(filepath.Clean(path), SourceTyped), nil
}

func (s *Supervisor) inspect(path, source string) Candidate {
	c := Candidate{Path: path, Source: source}
	if source != SourceBesideExe || !samePath(path, s.besideExe()) {
		c.Root = s.rootOf(path)
	}
	f, err := openExclusive(path)
	if err != nil {
		c.Err = err
		return c
	}
	defer f.Close()
	c.SHA256, c.Err = hashFile(f)
	return c
}

// rootOf returns the fs root path lies in (lexically or once symbolic
// links are resolved), or "".
func (s *Supervisor) rootOf(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	for _, root := range s.roots {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			realRoot = root
		}
		if within(root, path) || within(realRoot, real) {
			return root
		}
	}
	return ""
}

// within reports whether p is dir or lies below it (filepath.Rel compares
// case-insensitively on Windows, as the file system does).
func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// samePath reports whether a and b name the same file: the same file on
// disk when both exist, else the same cleaned path.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	a, b = filepath.Clean(a), filepath.Clean(b)
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}
