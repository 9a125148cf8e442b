package fsops

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxIgnoreFileSize bounds the ignore files a search reads.
const maxIgnoreFileSize = 1 << 20

// The ignore files a search reads in every directory, in increasing
// priority (ripgrep's order: .ignore overrides .gitignore).
var ignoreFileNames = [...]string{".gitignore", ".ignore"}

// ignoreDir is what a search knows about one directory it walks: its path
// relative to the ignore base (the enclosing git work tree, or the searched
// directory outside one) and the patterns that apply in it, inherited ones
// first, so later ones win as in git.
type ignoreDir struct {
	comps    []string
	patterns []gitignore.Pattern
}

// ignored reports whether the entry name of this directory is excluded.
func (d *ignoreDir) ignored(name string, isDir bool) bool {
	if len(d.patterns) == 0 {
		return false
	}
	p := append(d.comps[:len(d.comps):len(d.comps)], name)
	for i := len(d.patterns) - 1; i >= 0; i-- {
		if r := d.patterns[i].Match(p, isDir); r != gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

// enter returns the state of the subdirectory dir (named name) of d,
// reading its ignore files. buf is scratch space for reading them.
func (d *ignoreDir) enter(dir, name string, buf *[]byte) *ignoreDir {
	comps := append(d.comps[:len(d.comps):len(d.comps)], name)
	return &ignoreDir{comps: comps, patterns: readIgnoreFiles(dir, comps, d.patterns, buf)}
}

// readIgnoreFiles appends the patterns of dir's ignore files to inherited,
// copying it only when there are some.
func readIgnoreFiles(dir string, domain []string, inherited []gitignore.Pattern, buf *[]byte) []gitignore.Pattern {
	out := inherited
	for _, name := range ignoreFileNames {
		ps := readIgnoreFile(filepath.Join(dir, name), domain, buf)
		if len(ps) == 0 {
			continue
		}
		if len(out) == len(inherited) {
			out = append(inherited[:len(inherited):len(inherited)], ps...)
		} else {
			out = append(out, ps...)
		}
	}
	return out
}

// readIgnoreFile parses one ignore file (git's syntax) whose patterns are
// relative to domain. A missing, unreadable, oversized or non-regular file
// (a symlink is never followed) has no patterns.
func readIgnoreFile(file string, domain []string, buf *[]byte) []gitignore.Pattern {
	data, status := readSearchFile(file, buf, maxIgnoreFileSize)
	if status != readOK {
		return nil
	}
	var ps []gitignore.Pattern
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, newline)
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(string(line), domain))
	}
	return ps
}

// searchIgnoreRoot builds the state of the searched directory abs: when abs
// lies in a git work tree within its configured root, the ignore files of
// the directories from the work tree's top down to abs's parent and
// .git/info/exclude apply too, as git applies them. Nothing above the
// configured root is read.
func (e *Engine) searchIgnoreRoot(abs string, buf *[]byte) *ignoreDir {
	root := ""
	for _, d := range e.Roots.roots {
		if hasPathPrefix(abs, d.real, filepath.Separator, e.Roots.fold) && len(d.real) > len(root) {
			root = d.real
		}
	}
	base := abs
	for dir := abs; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			base = dir
			break
		}
		parent := filepath.Dir(dir)
		if root == "" || dir == root || parent == dir || !hasPathPrefix(parent, root, filepath.Separator, e.Roots.fold) {
			break
		}
		dir = parent
	}
	var comps []string
	if rel, err := filepath.Rel(base, abs); err == nil && rel != "." {
		comps = strings.Split(rel, string(filepath.Separator))
	}
	state := &ignoreDir{comps: comps}
	if info, err := os.Lstat(filepath.Join(base, ".git")); err == nil && info.IsDir() {
		state.patterns = readIgnoreFile(filepath.Join(base, ".git", "info", "exclude"), nil, buf)
	}
	// The directories from base down to abs's parent.
	dir := base
	for i := range comps {
		state.patterns = readIgnoreFiles(dir, comps[:i], state.patterns, buf)
		dir = filepath.Join(dir, comps[i])
	}
	return state
}
