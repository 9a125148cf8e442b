package fsops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// Rule names one containment rule. Rules are stable strings so callers and
// models can branch on them.
type Rule string

// The containment rules a path can break.
const (
	RuleEmpty           Rule = "empty_path"
	RuleNULByte         Rule = "nul_byte"
	RuleNotAbsolute     Rule = "not_absolute"
	RuleParentRef       Rule = "parent_reference"
	RuleVerbatim        Rule = "verbatim_prefix"       // \\?\ and \??\ (Windows)
	RuleDevice          Rule = "device_namespace"      // \\.\ (Windows)
	RuleUNC             Rule = "unc_path"              // \\server\share (Windows)
	RuleStream          Rule = "alternate_data_stream" // a.txt:b, a.txt::$DATA (Windows)
	RuleInvalidChar     Rule = "invalid_character"     // < > " | ? * and control characters (Windows)
	RuleTrailingDot     Rule = "trailing_dot_or_space" // Windows silently strips them (Windows)
	RuleReservedName    Rule = "reserved_device_name"  // CON, NUL, COM1, nul.txt… (Windows)
	RuleShortName       Rule = "short_name"            // PROGRA~1 naming another file (Windows)
	RuleOutsideRoots    Rule = "outside_roots"
	RuleSymlinkEscape   Rule = "symlink_escape" // lexically under a root, really elsewhere
	RuleDanglingSymlink Rule = "dangling_symlink"
	RuleDenied          Rule = "denied_directory"
	RuleTempName        Rule = "hearth_temp_name" // names Hearth uses for its own temporary files
)

// ErrContainment matches every *ContainmentError with errors.Is.
var ErrContainment = errors.New("path refused by containment")

// ContainmentError reports a path refused by a containment rule.
type ContainmentError struct {
	Path   string `json:"path"`
	Rule   Rule   `json:"rule"`
	Detail string `json:"detail,omitempty"`
}

func (e *ContainmentError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("path %q refused (%s)", e.Path, e.Rule)
	}
	return fmt.Sprintf("path %q refused (%s): %s", e.Path, e.Rule, e.Detail)
}

// Is makes errors.Is(err, ErrContainment) true for every containment error.
func (e *ContainmentError) Is(target error) bool { return target == ErrContainment }

func refuse(p string, rule Rule, format string, args ...any) error {
	return &ContainmentError{Path: p, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

// Roots is the set of directories fs may touch, minus denied paths. The
// roots are fixed once built (build a new Roots when the configuration
// changes); the denied list can only grow, through Deny, and is shared by
// every copy of a Roots, so an Engine holding a copy sees a path denied
// after it was built.
type Roots struct {
	roots   []rootDir
	denied  *deniedList
	fold    bool // compare case-insensitively (Windows)
	longFor func(string) (string, error)
}

// deniedList is the denied paths: readers load the current slice without
// locking (Resolve, every entry of a search walk); Deny replaces it with a
// longer copy under mu.
type deniedList struct {
	mu   sync.Mutex
	dirs atomic.Pointer[[]rootDir]
}

// load returns the denied paths now; nil for a Roots not built by
// NewRoots.
func (d *deniedList) load() []rootDir {
	if d == nil {
		return nil
	}
	if p := d.dirs.Load(); p != nil {
		return *p
	}
	return nil
}

// rootDir keeps both spellings of a configured directory: the cleaned one
// (to tell a symlink escape from a plain outside path) and the real one.
type rootDir struct {
	clean, real string
}

// NewRoots builds Roots from absolute root directories, which must exist,
// and denied directories (Hearth's own data directory, at least), which are
// refused even when they lie under a root and need not exist yet.
func NewRoots(roots, denied []string) (Roots, error) {
	r := Roots{fold: pathFold, denied: &deniedList{}}
	if hasShortNames {
		r.longFor = longPathName
	}
	for _, d := range roots {
		rd, err := configuredDir(d)
		if err != nil {
			return Roots{}, fmt.Errorf("root %q: %w", d, err)
		}
		info, err := os.Stat(rd.real)
		if err != nil {
			return Roots{}, fmt.Errorf("root %q: %w", d, err)
		}
		if !info.IsDir() {
			return Roots{}, fmt.Errorf("root %q: not a directory", d)
		}
		r.roots = append(r.roots, rd)
	}
	var dirs []rootDir
	for _, d := range denied {
		rd, err := configuredDir(d)
		if err != nil {
			return Roots{}, fmt.Errorf("denied directory %q: %w", d, err)
		}
		dirs = append(dirs, rd)
	}
	r.denied.dirs.Store(&dirs)
	return r, nil
}

// Deny refuses the absolute path p (a file or a directory, which need not
// exist yet) from now on, to every copy of r: Hearth calls it when the
// operator pins a tunnel-client while it runs. It is safe to call while
// fs operations run; an operation that resolved its path before Deny
// returned is not stopped. Denying a path already denied does nothing.
func (r Roots) Deny(p string) error {
	if r.denied == nil {
		return errors.New("deny a path: these Roots were not built by NewRoots")
	}
	rd, err := configuredDir(p)
	if err != nil {
		return fmt.Errorf("denied path %q: %w", p, err)
	}
	r.denied.mu.Lock()
	defer r.denied.mu.Unlock()
	old := r.denied.load()
	if slices.Contains(old, rd) {
		return nil
	}
	next := append(slices.Clip(old), rd)
	r.denied.dirs.Store(&next)
	return nil
}

func configuredDir(d string) (rootDir, error) {
	if rule, detail := platformPathProblem(d); rule != "" {
		return rootDir{}, fmt.Errorf("%s: %s", rule, detail)
	}
	if !filepath.IsAbs(d) {
		return rootDir{}, errors.New("not an absolute path")
	}
	clean := filepath.Clean(d)
	real, err := realPath(clean)
	if err != nil {
		return rootDir{}, err
	}
	return rootDir{clean: clean, real: real}, nil
}

// List returns the real paths of the configured roots.
func (r Roots) List() []string {
	out := make([]string, len(r.roots))
	for i, d := range r.roots {
		out[i] = d.real
	}
	return out
}

// Resolve checks p against every containment rule and returns the real
// absolute path to operate on. The longest existing prefix of p is resolved
// through symlinks (and junctions), so a file that does not exist yet can be
// resolved for writing; the result is under a root and under no denied
// directory. The caller must use the returned path, not p.
//
// A symlink swapped in between Resolve and the operation is not caught;
// fs itself never creates links, so that needs another way to write here.
func (r Roots) Resolve(p string) (string, error) {
	real, _, err := r.resolveInfo(p, false)
	return real, err
}

// ResolveOwn is Resolve of p's folder joined with p's own name, not
// followed: the real path of a link itself (a symlink, a junction), for a
// move or trash that carries the link and never what it points to, which
// may be anywhere. The link's own path is under a root and under no
// denied directory, as Resolve's result is.
func (r Roots) ResolveOwn(p string) (string, error) {
	clean := filepath.Clean(p)
	dir, err := r.Resolve(filepath.Dir(clean))
	if err != nil {
		var ce *ContainmentError
		if errors.As(err, &ce) {
			ce.Path = p
		}
		return "", err
	}
	if rule, detail := platformPathProblem(p); rule != "" {
		return "", refuse(p, rule, "%s", detail)
	}
	own := filepath.Join(dir, filepath.Base(clean))
	switch {
	case !r.underAny(r.roots, own, true):
		return "", refuse(p, RuleOutsideRoots, "allowed roots: %s", strings.Join(r.List(), ", "))
	case r.underAny(r.denied.load(), own, true):
		return "", refuse(p, RuleDenied, "Hearth's own data is not reachable through fs")
	case strings.HasPrefix(filepath.Base(own), atomicfile.TempPrefix):
		return "", refuse(p, RuleTempName, "names starting with %q are Hearth's temporary files", atomicfile.TempPrefix)
	}
	return own, nil
}

// resolveInfo is Resolve, with (when stat is set) what a stat of the path
// says when it exists and resolving it gave that on the way (else nil:
// stat it).
func (r Roots) resolveInfo(p string, stat bool) (string, fs.FileInfo, error) {
	if p == "" {
		return "", nil, refuse(p, RuleEmpty, "give an absolute path under one of the roots")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", nil, refuse(p, RuleNULByte, "paths cannot contain NUL bytes")
	}
	if rule, detail := platformPathProblem(p); rule != "" {
		return "", nil, refuse(p, rule, "%s", detail)
	}
	if !filepath.IsAbs(p) {
		return "", nil, refuse(p, RuleNotAbsolute, "give an absolute path under one of the roots: %s", strings.Join(r.List(), ", "))
	}
	if hasParentRef(p) {
		return "", nil, refuse(p, RuleParentRef, "'..' components are not accepted; give the path without them")
	}
	clean := filepath.Clean(p)
	real, info, err := realPathInfo(clean, stat)
	if err != nil {
		var ce *ContainmentError
		if errors.As(err, &ce) {
			ce.Path = p
			return "", nil, ce
		}
		return "", nil, fmt.Errorf("resolve %s: %w", p, err)
	}
	if r.longFor != nil {
		if bad := checkShortNames(clean, r.longFor, r.fold); bad != "" {
			return "", nil, refuse(p, RuleShortName, "component %q is an 8.3 short name for another file; use the long name", bad)
		}
	}
	if !r.underAny(r.roots, real, true) {
		if r.underAny(r.roots, clean, false) {
			return "", nil, refuse(p, RuleSymlinkEscape, "it resolves to %s, outside every root", real)
		}
		if len(r.roots) == 0 {
			return "", nil, refuse(p, RuleOutsideRoots, "no roots are configured")
		}
		return "", nil, refuse(p, RuleOutsideRoots, "allowed roots: %s", strings.Join(r.List(), ", "))
	}
	if denied := r.denied.load(); r.underAny(denied, real, true) || r.underAny(denied, clean, false) {
		return "", nil, refuse(p, RuleDenied, "Hearth's own data is not reachable through fs")
	}
	if strings.HasPrefix(filepath.Base(real), atomicfile.TempPrefix) {
		return "", nil, refuse(p, RuleTempName, "names starting with %q are Hearth's temporary files", atomicfile.TempPrefix)
	}
	return real, info, nil
}

func (r Roots) underAny(dirs []rootDir, p string, real bool) bool {
	for _, d := range dirs {
		root := d.clean
		if real {
			root = d.real
		}
		if hasPathPrefix(p, root, filepath.Separator, r.fold) {
			return true
		}
	}
	return false
}

// isDenied reports whether the real path p lies in a denied directory; the
// search walk uses it to prune.
func (r Roots) isDenied(p string) bool { return r.underAny(r.denied.load(), p, true) }

// hasPathPrefix reports whether p is root or lies under it, comparing whole
// components. With fold, runes compare by simple upper case, as NTFS does
// (so the Kelvin sign is not the letter k).
func hasPathPrefix(p, root string, sep byte, fold bool) bool {
	var rest string
	if !fold {
		if !strings.HasPrefix(p, root) {
			return false
		}
		rest = p[len(root):]
	} else {
		i, j := 0, 0
		for i < len(root) {
			if j >= len(p) {
				return false
			}
			r1, n1 := utf8.DecodeRuneInString(root[i:])
			r2, n2 := utf8.DecodeRuneInString(p[j:])
			if r1 != r2 && unicode.ToUpper(r1) != unicode.ToUpper(r2) {
				return false
			}
			i += n1
			j += n2
		}
		rest = p[j:]
	}
	return rest == "" || rest[0] == sep || (root != "" && root[len(root)-1] == sep)
}

func hasParentRef(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || isPlatformSep(p[i]) {
			if p[start:i] == ".." {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func splitComponents(p string, isSep func(byte) bool) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || isSep(p[i]) {
			if i > start {
				out = append(out, p[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func isPlatformSep(c byte) bool { return os.IsPathSeparator(c) }

// realPath resolves symlinks (and on Windows junctions) in the longest
// existing prefix of the clean absolute path p and appends the rest
// unchanged. A component that exists only as a dangling link is refused:
// where it points cannot be checked.
func realPath(p string) (string, error) {
	real, _, err := realPathInfo(p, false)
	return real, err
}

// realPathInfo is realPath, with (when stat is set) what a stat of p says
// when p exists and resolving it gave that on the way (else nil: the
// caller stats it).
func realPathInfo(p string, stat bool) (string, fs.FileInfo, error) {
	var tail []string
	cur := p
	for again := 0; ; {
		resolved, info, err := evalExisting(cur, stat)
		if err == nil {
			if len(tail) > 0 {
				info = nil // an ancestor's
			}
			for i := len(tail) - 1; i >= 0; i-- {
				resolved = filepath.Join(resolved, tail[i])
			}
			return resolved, info, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, err
		}
		if li, lerr := processSeams.lstat(cur); lerr == nil {
			if li.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
				return "", nil, &ContainmentError{Path: p, Rule: RuleDanglingSymlink,
					Detail: fmt.Sprintf("%s is a link to something that does not exist", cur)}
			}
			// A plain file or directory, made since the walk found nothing
			// (a concurrent write creating it): walk again; one that keeps
			// coming and going is taken as missing, as the walk found it.
			if again < maxAppeared {
				again++
				continue
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", nil, err
		}
		tail = append(tail, filepath.Base(cur))
		cur = parent
	}
}

// maxAppeared is how many times realPathInfo walks again when a component
// the walk found missing is a plain file or directory when it looks at it.
const maxAppeared = 3

// checkShortNames returns the first component of the clean path p that looks
// like an 8.3 short name (PROGRA~1) and exists under a different long name,
// or "" when there is none. longFor returns the long form of an existing path
// (GetLongPathName on Windows). A name that does not exist yet, or whose long
// name is itself, is fine: it aliases nothing.
func checkShortNames(p string, longFor func(string) (string, error), fold bool) string {
	comps := splitComponents(p, isPlatformSep)
	for i, c := range comps {
		if !looksShortName(c) {
			continue
		}
		prefix := prefixThrough(p, i)
		long, err := longFor(prefix)
		if err != nil {
			continue // does not exist: cannot alias anything
		}
		lb := long
		if k := strings.LastIndexAny(long, `\/`); k >= 0 {
			lb = long[k+1:]
		}
		if !sameName(lb, c, fold) {
			return c
		}
	}
	return ""
}

// sameName compares two path components, by simple upper case with fold.
func sameName(a, b string, fold bool) bool {
	if !fold {
		return a == b
	}
	for a != "" && b != "" {
		r1, n1 := utf8.DecodeRuneInString(a)
		r2, n2 := utf8.DecodeRuneInString(b)
		if r1 != r2 && unicode.ToUpper(r1) != unicode.ToUpper(r2) {
			return false
		}
		a, b = a[n1:], b[n2:]
	}
	return a == "" && b == ""
}

// prefixThrough returns p up to and including its i-th component.
func prefixThrough(p string, i int) string {
	n := -1
	inComp := false
	for k := 0; k < len(p); k++ {
		if isPlatformSep(p[k]) {
			if inComp && n == i {
				return p[:k]
			}
			inComp = false
			continue
		}
		if !inComp {
			inComp = true
			n++
		}
	}
	return p
}

// looksShortName reports whether a path component could be a generated
// 8.3 name, so checkShortNames asks Windows for its long form: it fits 8.3
// (a base of at most 8 characters, then at most one dot and 3 more) and
// its base has a '~' before its last character. Windows makes names like
// PROGRA~1 and PR1D3A~1, Wine names like A_RA~OFN; a wider net than either
// costs only a lookup for the rare name with a tilde.
func looksShortName(c string) bool {
	base, ext, _ := strings.Cut(c, ".")
	if len(base) > 8 || len(ext) > 3 || strings.Contains(ext, ".") {
		return false
	}
	i := strings.IndexByte(base, '~')
	return i >= 0 && i < len(base)-1
}

// RealPrefix resolves p as this package resolves a path it acts on (on
// Windows through junctions too, which filepath.EvalSymlinks no longer
// follows), as far as it exists, keeping the part that does not exist yet
// as written. Governance resolves the persistence locations with it, so a
// location and a path written there compare resolved the same way.
func RealPrefix(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if r, _, err := evalExisting(p, false); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}
