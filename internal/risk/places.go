package risk

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Persistence locations: where writing a file makes a program run by
// itself later (at sign-in, when a shell or PowerShell starts, when git
// runs a hook, as a service or scheduled task, when SSH lets someone in).
// A write there is CasePersist. The tables are one per OS
// (placeslinux.go's LinuxPlaces, placeswindows.go's WindowsPlaces), both
// built on every OS so that each entry is tested everywhere; a path is
// matched after real-path resolution of both the path (the caller's) and
// the location (here), so a symlink or junction into a Startup folder
// counts, and case-insensitively for Windows.

// PlaceKind is how a Place matches a path.
type PlaceKind int

// The place kinds.
const (
	// UnderDir: anything under Path (with one of Exts, when set).
	UnderDir PlaceKind = iota
	// ExactFile: the file Path itself.
	ExactFile
	// GitRepo: a hook or the config file of any git repository (a
	// component ".git" followed by a component "hooks", or by a file
	// "config"), or a ".git" file itself (a submodule's or worktree's
	// pointer to its repository): hooks run by themselves, and config can
	// name programs git runs (core.hooksPath, core.fsmonitor,
	// core.sshCommand). The user's and the system's git config files are
	// ExactFile entries of each table.
	GitRepo
)

// Place is one persistence location.
type Place struct {
	// ID names the group, for tests and the ledger (autostart, shell,
	// powershell, git, service, scheduled, ssh, shortcut).
	ID   string
	Kind PlaceKind
	// Path is the location, absolute (unused for GitRepo).
	Path string
	// Exts, when set, limits UnderDir to files with one of these
	// extensions (lower case, with the dot).
	Exts []string
	// Sentence completes "ChatGPT wants to …" on the permit card.
	Sentence string
}

// ScriptExts are the shortcut and script files that run a program when
// opened, on Windows.
var ScriptExts = []string{".lnk", ".url", ".bat", ".cmd", ".ps1", ".vbs", ".js", ".wsf", ".hta", ".reg"}

// Sentences of the groups.
const (
	sayAutostart = "make a program start every time you sign in"
	sayShell     = "change what runs every time a terminal (shell) starts"
	sayPS        = "change what runs every time a command window starts"
	sayGit       = "change what git runs by itself in a repository (a hook or its settings)"
	sayService   = "add or change a service that starts by itself"
	sayScheduled = "add or change a scheduled task that runs by itself"
	saySSH       = "change who can sign in to this computer over SSH, or what SSH runs"
	sayShortcut  = "add or change a shortcut or script that starts a program when it is opened"
)

// Places is a persistence table ready to match real paths. It is safe for
// concurrent use.
type Places struct {
	list []Place
	// windows compares case-insensitively with either separator.
	windows bool
	// real resolves a location through symlinks and junctions (the
	// longest existing prefix); nil leaves locations as written.
	real func(string) string
	// now is the clock of the resolved locations' refresh.
	now func() time.Time

	mu sync.Mutex
	// resolved are the locations' real paths (normalized), by index in
	// list, made at most refreshEvery ago: resolving every location costs
	// milliseconds, and almost every write is of an ordinary file.
	resolved   []string
	resolvedAt time.Time
}

// refreshEvery bounds how long a location's real path is reused: a
// location that becomes a link (a home's .config moved elsewhere and
// linked back) is seen within this time. The path being written is
// always resolved by the caller at the call itself.
const refreshEvery = 2 * time.Second

// NewPlaces returns the table for this OS, its locations taken from env
// (os.Getenv in Hearth) and resolved by RealPrefix.
func NewPlaces(env func(string) string) *Places { return NewPlacesResolved(env, RealPrefix) }

// NewPlacesResolved is NewPlaces with the locations resolved by real,
// which must resolve links as the file system the caller checks writes
// with does (Hearth's fs resolves junctions too, which
// filepath.EvalSymlinks no longer follows on Windows): a location and the
// path being written are then compared resolved the same way.
func NewPlacesResolved(env func(string) string, real func(string) string) *Places {
	if runtime.GOOS == "windows" {
		return &Places{list: WindowsPlaces(env), windows: true, real: real, now: time.Now}
	}
	return &Places{list: LinuxPlaces(env), real: real, now: time.Now}
}

// NewPlacesFor returns a table for tests of either OS's entries: windows
// selects WindowsPlaces and Windows matching; real may be nil.
func NewPlacesFor(windows bool, env func(string) string, real func(string) string) *Places {
	p := &Places{windows: windows, real: real, now: time.Now}
	if windows {
		p.list = WindowsPlaces(env)
	} else {
		p.list = LinuxPlaces(env)
	}
	return p
}

// List returns the table's entries.
func (p *Places) List() []Place { return slices.Clone(p.list) }

// Match returns the persistence location real (a real, absolute path, as
// fs resolves it) is in, if any.
func (p *Places) Match(real string) (Place, bool) {
	path := p.norm(real)
	resolved := p.locations()
	for i, pl := range p.list {
		if p.matches(pl, path, resolved[i]) {
			return pl, true
		}
	}
	return Place{}, false
}

// locations returns the locations' real paths, resolved again when the
// last resolution is older than refreshEvery.
func (p *Places) locations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.resolved != nil && now.Sub(p.resolvedAt) < refreshEvery {
		return p.resolved
	}
	out := make([]string, len(p.list))
	for i, pl := range p.list {
		if pl.Kind != GitRepo && p.real != nil {
			out[i] = p.norm(p.real(pl.Path))
		}
	}
	p.resolved, p.resolvedAt = out, now
	return out
}

func (p *Places) norm(s string) string {
	if p.windows {
		s = strings.ToLower(strings.ReplaceAll(s, `\`, "/"))
	}
	return strings.TrimSuffix(s, "/")
}

func (p *Places) matches(pl Place, path, resolved string) bool {
	if pl.Kind == GitRepo {
		return gitPlace(path)
	}
	locs := []string{p.norm(pl.Path)}
	if resolved != "" && resolved != locs[0] {
		locs = append(locs, resolved)
	}
	for _, loc := range locs {
		switch pl.Kind {
		case ExactFile:
			if path == loc {
				return true
			}
		case UnderDir:
			if !strings.HasPrefix(path, loc+"/") {
				continue
			}
			if len(pl.Exts) == 0 || slices.Contains(pl.Exts, strings.ToLower(extOf(path))) {
				return true
			}
		}
	}
	return false
}

// extOf is the extension of a slash-separated path's last component.
func extOf(path string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[i:]
	}
	return ""
}

// gitPlace reports whether a slash-separated path is a hook or the config
// of a git repository: after a ".git" component, a "hooks" component, or
// a last component "config".
func gitPlace(path string) bool {
	if strings.HasSuffix(path, "/.git") {
		// A .git file of a submodule or worktree ("gitdir: …") points git
		// at a repository whose hooks and config the writer chose.
		return true
	}
	if !strings.Contains(path, "/.git/") {
		return false
	}
	parts := strings.Split(path, "/")
	for i, c := range parts {
		if c != ".git" {
			continue
		}
		rest := parts[i+1:]
		if slices.Contains(rest, "hooks") {
			return true
		}
		if len(rest) > 0 && rest[len(rest)-1] == "config" {
			return true
		}
	}
	return false
}

// RealPrefix resolves p through symlinks and junctions as far as it
// exists, keeping the part that does not exist yet as written.
func RealPrefix(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
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

// join joins a location from env onto base with the table's separator,
// or "" when base is unknown (the entry is then left out).
func join(sep string, base string, parts ...string) string {
	if base == "" {
		return ""
	}
	base = strings.TrimRight(base, `/\`)
	return base + sep + strings.Join(parts, sep)
}

// build drops entries whose location is unknown.
func build(ps []Place) []Place {
	out := ps[:0]
	for _, p := range ps {
		if p.Kind == GitRepo || p.Path != "" {
			out = append(out, p)
		}
	}
	return out
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
