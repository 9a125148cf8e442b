package govern

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
	"sync"

	"github.com/hearth-dev/hearth/internal/risk"
)

// What an allow-rule pins (the table is internal/risk's, rulepins.go):
// when the operator approves, the program's file and every argument of
// the card that names an existing file are pinned by real path and
// SHA-256, and the folder by its real path; a call whose pinned file
// changed since is not covered, and its card names the file.

// RulePins are the files a rule pinned when it was made. A rule made
// before rules pinned files has none (nil): it covers no call whose
// arguments name an existing file.
type RulePins struct {
	// Folder is the real path of the rule's folder when it was made.
	Folder string `json:"folder,omitempty"`
	// Program is the program's file; nil for a build program's rule
	// (risk.TrustsFolder) and a rule that names no one file (a glob).
	Program *Pin `json:"program,omitempty"`
	// Files are the files the card's arguments named.
	Files []Pin `json:"files,omitempty"`
}

// Pin is one pinned file: its real path and content then.
type Pin struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Paths lists the pinned files, the program first.
func (p *RulePins) Paths() []string {
	if p == nil {
		return nil
	}
	var out []string
	if p.Program != nil {
		out = append(out, p.Program.Path)
	}
	for _, f := range p.Files {
		out = append(out, f.Path)
	}
	return out
}

// maxPinned bounds the size of a file a rule pins (a larger one is
// hashed at every call under the rule): 1 GiB.
const maxPinned = 1 << 30

// digests keeps the SHA-256 of files by path, size, modification and
// change time (fileStamp), so that a call under a rule hashes a large
// archive or program only after it changed.
type digests struct {
	mu sync.Mutex
	m  map[digestKey]string
}

type digestKey struct {
	path       string
	size       int64
	mod, stamp int64
}

// maxDigests bounds the digests kept; past it they are forgotten.
const maxDigests = 1024

// sum returns the SHA-256 of the regular file at path (after links), or
// an error naming it.
func (d *digests) sum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a file", path)
	}
	if fi.Size() > maxPinned {
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxPinned)
	}
	key := digestKey{path: path, size: fi.Size(), mod: fi.ModTime().UnixNano(), stamp: fileStamp(fi)}
	d.mu.Lock()
	h, ok := d.m[key]
	d.mu.Unlock()
	if ok {
		return h, nil
	}
	sh := sha256.New()
	if _, err := io.Copy(sh, f); err != nil {
		return "", err
	}
	h = hex.EncodeToString(sh.Sum(nil))
	d.mu.Lock()
	if d.m == nil || len(d.m) >= maxDigests {
		d.m = map[digestKey]string{}
	}
	d.m[key] = h
	d.mu.Unlock()
	return h, nil
}

// realFile returns the real path of the regular file text names, relative
// to cwd when not absolute, and whether there is one.
func realFile(text, cwd string) (string, bool) {
	p := text
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return "", false
		}
		p = filepath.Join(cwd, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

// realDir returns the real path of the folder dir, or dir cleaned when it
// cannot be resolved (it does not exist: then nothing runs in it).
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// argFiles returns the real paths of the files args name, resolved from
// cwd, in order, each once.
func argFiles(args []string, cwd string) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		for _, c := range risk.ArgFileCandidates(a) {
			if real, ok := realFile(c, cwd); ok && !seen[real] {
				seen[real] = true
				out = append(out, real)
			}
		}
	}
	return out
}

// takePins pins what a rule for program with args in the folder root
// ("" for anywhere) covers, as the operator approves it, resolving them
// in cwd (the card's folder): nothing but the folder for a build
// program; else the program's file (when program names one, as exec
// would find it in cwd) and the files the arguments name.
func (g *Governor) takePins(program string, args []string, cwd, root string) (*RulePins, error) {
	p := &RulePins{}
	if root != "" {
		p.Folder = realDir(root)
	}
	if risk.TrustsFolder(program) {
		return p, nil
	}
	if prog, ok := resolveProgram(program, cwd); ok {
		if real, ok := realFile(prog, ""); ok {
			h, err := g.digests.sum(real)
			if err != nil {
				return nil, fmt.Errorf("pin the program %s: %w", real, err)
			}
			p.Program = &Pin{Path: real, SHA256: h}
		}
	}
	for _, f := range argFiles(args, cwd) {
		h, err := g.digests.sum(f)
		if err != nil {
			return nil, fmt.Errorf("pin the file %s: %w", f, err)
		}
		p.Files = append(p.Files, Pin{Path: f, SHA256: h})
	}
	return p, nil
}

// PinsFor lists the files a rule for program with args in cwd would pin
// now (for the card, before the operator approves).
func (g *Governor) PinsFor(program string, args []string, cwd string) []string {
	p, err := g.takePins(program, args, cwd, cwd)
	if err != nil {
		return nil
	}
	return p.Paths()
}

// pinsHold reports whether the files u's call would use are the ones r
// pinned: its program (resolved to prog) is the pinned file with the
// pinned content, and every file the arguments r covers name (resolved
// from u.Cwd) is one of r's pinned files, unchanged. Otherwise it returns
// the file that is not (changed, replaced or never pinned). A build
// program's rule pins nothing; a rule made before pins (r.Pins nil) holds
// only for a call whose arguments name no existing file.
func (g *Governor) pinsHold(r Rule, u ProgramUse, prog string) (string, bool) {
	if risk.TrustsFolder(r.Program) && risk.TrustsFolder(prog) {
		return "", true
	}
	files := argFiles(u.Args[:min(len(r.Args), len(u.Args))], u.Cwd)
	if r.Pins == nil {
		if len(files) > 0 {
			return files[0], false
		}
		return "", true
	}
	if pin := r.Pins.Program; pin != nil {
		real, ok := realFile(prog, "")
		if !ok || real != pin.Path {
			return pin.Path, false
		}
		if h, err := g.digests.sum(real); err != nil || h != pin.SHA256 {
			return pin.Path, false
		}
	}
	for _, f := range files {
		i := -1
		for j, p := range r.Pins.Files {
			if p.Path == f {
				i = j
				break
			}
		}
		if i < 0 {
			return f, false
		}
		if h, err := g.digests.sum(f); err != nil || h != r.Pins.Files[i].SHA256 {
			return f, false
		}
	}
	// A pinned file that is gone or no longer named the same way.
	for _, p := range r.Pins.Files {
		if _, err := os.Stat(p.Path); errors.Is(err, fs.ErrNotExist) {
			return p.Path, false
		}
	}
	return "", true
}

// SaidPinChanged is what a call whose rule's pinned file changed would do,
// as its permit records it (its subject is the file): the card says the
// file changed since the operator chose Always allow.
const SaidPinChanged = "run a program whose rule pinned a file that changed since"

// pinsOfPermit pins what the rule r, made from permit permitID's card,
// covers: resolved in the folder the card showed when r is for the
// card's program, else in r's folder.
func (g *Governor) pinsOfPermit(ctx context.Context, permitID string, r Rule) (*RulePins, error) {
	cwd := r.CwdRoot
	if prim, input, err := g.PermitCall(ctx, permitID); err == nil {
		if f := g.Programs[prim]; f != nil {
			for _, u := range f([]byte(input)) {
				if u.Command == r.Program {
					cwd = u.Cwd
					break
				}
			}
		}
	}
	return g.takePins(r.Program, r.Args, cwd, r.CwdRoot)
}
