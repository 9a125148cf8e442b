// Package startup is Hearth's index of what starts by itself on this PC,
// as Sysinternals Autoruns lists it — autostart entries, Run keys,
// Startup folders, scheduled tasks, services and systemd user units,
// shell start-up files and what they source, git and ssh includes,
// Python's .pth paths, PowerShell profiles, Office start-up folders —
// and of the files each entry names: the program it runs, the scripts
// and files in its arguments, the files it includes (one level further
// where an included file includes others).
//
// Governance (internal/govern) asks before a write to any of these
// files, even in a folder the operator allowed, and the card says which
// entry runs the file. The entries are parsed as the programs that read
// them do; nothing is guessed from a file's name.
//
// The index is kept current while Hearth runs without reading it whole
// on every write check: each source keeps its stamp (a file's size and
// modification time, a folder's listing, a registry key's last write
// time), and at most once every Refresh a check looks at the stamps and
// parses again only what changed. Where the entries are (the home, the
// known folders) is asked again at the same time, so a moved Startup
// folder counts too.
package startup

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Refresh is how long a check may use the index as it was last looked
// at: an entry added, changed or removed counts at the first check
// after it. Looking costs one stat per source (tens of microseconds on
// Linux); parsing happens only for what changed.
const Refresh = 250 * time.Millisecond

// Kind is what sort of thing starts by itself.
type Kind string

// The kinds of entries.
const (
	KindAutostart  Kind = "autostart"  // an XDG autostart .desktop file
	KindUserUnit   Kind = "user_unit"  // a systemd user unit
	KindShell      Kind = "shell"      // a shell's start-up file
	KindGit        Kind = "git"        // git's settings
	KindSSH        Kind = "ssh"        // ssh's settings
	KindPython     Kind = "python"     // Python's user site-packages
	KindRun        Kind = "run"        // a Windows Run or RunOnce value
	KindStartup    Kind = "startup"    // a file in a Windows Startup folder
	KindTask       Kind = "task"       // a scheduled task
	KindService    Kind = "service"    // a Windows service
	KindPowerShell Kind = "powershell" // a PowerShell profile
	KindOffice     Kind = "office"     // Word's or Excel's start-up folder or add-ins
)

// Entry is one thing that starts by itself, and the files it names.
type Entry struct {
	Kind Kind
	// Name is the entry as a person would know it: the .desktop file's
	// Name=, a Run value's name, a unit's or a start-up file's name.
	Name string
	// Source is where the entry was read: a file, or a registry key and
	// value.
	Source string
	// Files are the files it runs or includes, absolute, as named.
	Files []string
	// Dirs are folders every file of which it runs or includes (git's
	// core.hooksPath, an ssh Include of folder/*).
	Dirs []string
}

// Hit is a file the index names: the entry that names it.
type Hit struct {
	Entry Entry
	// File is the file as the entry names it.
	File string
}

// Said completes "ChatGPT wants to …" on the permit card for a write of
// the file at path: which entry runs it, and when.
func (h Hit) Said(path string) string {
	base := filepath.Base(strings.ReplaceAll(path, `\`, "/"))
	return "change " + base + ", which " + h.Entry.says()
}

// says is the part of the card's sentence after "which": who runs or
// reads the file, and when.
func (e Entry) says() string {
	n := "“" + e.Name + "”"
	switch e.Kind {
	case KindAutostart:
		return "the autostart entry " + n + " runs every time you sign in"
	case KindUserUnit:
		return "the user service " + n + " runs when it starts (usually when you sign in)"
	case KindShell:
		return "the shell start-up file " + n + " runs every time a terminal starts"
	case KindGit:
		return "git takes as its settings (through " + n + ") every time it runs"
	case KindSSH:
		return "ssh takes as its settings (through " + n + ") every time it connects"
	case KindPython:
		return "Python runs every time it starts (its folder is on Python's path through " + n + ")"
	case KindRun:
		return "the sign-in entry " + n + " runs every time you sign in"
	case KindStartup:
		return "the shortcut " + n + " in your Startup folder runs every time you sign in"
	case KindTask:
		return "the scheduled task " + n + " runs"
	case KindService:
		return "the service " + n + " runs when it starts"
	case KindPowerShell:
		return "the PowerShell profile " + n + " runs every time PowerShell starts"
	case KindOffice:
		return "Word or Excel opens every time it starts (" + n + ")"
	}
	return n + " runs by itself"
}

// Options are what an Index is built from.
type Options struct {
	// Env answers the environment variables (HOME, USERPROFILE, APPDATA,
	// PATH, …) and, on Windows, the known folders (FOLDERID_…, see
	// risk.KnownFolderEnv); it is asked again at every refresh.
	Env func(string) string
	// Real resolves a path through symlinks and junctions as far as it
	// exists, as the file system the writes are checked with does
	// (fsops.RealPrefix): a named file is matched at its real path.
	Real func(string) string
	// Refresh is how long a check may use the index as last looked at
	// (Refresh in Hearth; 0 looks at every check).
	Refresh time.Duration
}

// Index is the index of what starts by itself. It is safe for
// concurrent use.
type Index struct {
	env     func(string) string
	real    func(string) string
	refresh time.Duration
	windows bool
	// sources are where this OS's entries are (Sources filtered by OS).
	sources []Source

	mu sync.Mutex
	// checked is the last look; resolvedAt the last resolution of the
	// named files' real paths.
	checked, resolvedAt time.Time
	// cache is what each origin gave at its last stamp, by origin key.
	cache map[string]cached
	// files and dirs map a normalized path (as named, and real) to its
	// hit.
	files, dirs map[string]Hit
	entries     []Entry
}

// cached is what an origin gave when its stamp was stamp.
type cached struct {
	stamp    string
	entries  []Entry
	children []origin
}

// New builds the index of this OS; it reads the entries at the first
// check.
func New(o Options) (*Index, error) {
	return newFor(runtime.GOOS == "windows", o)
}

func newFor(windows bool, o Options) (*Index, error) {
	switch {
	case o.Env == nil:
		return nil, errors.New("build the startup index: Env is required")
	case o.Real == nil:
		return nil, errors.New("build the startup index: Real (the real-path resolver) is required")
	case o.Refresh < 0:
		return nil, errors.New("build the startup index: Refresh is negative")
	}
	x := &Index{env: o.Env, real: o.Real, refresh: o.Refresh, windows: windows, cache: map[string]cached{}}
	for _, s := range Sources {
		if s.OS == OSBoth || (s.OS == OSWindows) == windows {
			x.sources = append(x.sources, s)
		}
	}
	return x, nil
}

// Match returns the entry that names the file at real (a real, absolute
// path, as the file system resolves it), if any: the file itself, a
// folder an entry names whole (real is that folder), or such a folder on
// its way.
func (x *Index) Match(real string) (Hit, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.look(time.Now())
	key := x.norm(real)
	if h, ok := x.files[key]; ok {
		return h, true
	}
	// A folder the entry names whole, moved or made there itself.
	if h, ok := x.dirs[key]; ok {
		return h, true
	}
	for d := key; ; {
		i := strings.LastIndexByte(d, '/')
		if i <= 0 {
			return Hit{}, false
		}
		d = d[:i]
		if h, ok := x.dirs[d]; ok {
			return h, true
		}
	}
}

// Touched tells the index that Hearth itself just changed a file (a
// write, a patch, an undo, a move): the next check looks at the sources
// again instead of using the index as last looked at, so an approved
// change to .bashrc, or a new .desktop file, counts at once, not Refresh
// later. Looking costs one stat per source and parses only what changed,
// so which file changed does not matter.
func (x *Index) Touched() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.checked = time.Time{}
}

// Entries returns the entries as last read (after looking again when
// Refresh has passed).
func (x *Index) Entries() []Entry {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.look(time.Now())
	return append([]Entry(nil), x.entries...)
}

// look looks at the sources again when the last look is older than
// x.refresh, parses what changed and rebuilds the maps.
func (x *Index) look(now time.Time) {
	if x.files != nil && now.Sub(x.checked) < x.refresh {
		return
	}
	x.checked = now
	h := x.host()
	var queue []origin
	for _, s := range x.sources {
		queue = append(queue, s.origins(h)...)
	}
	seen := map[string]bool{}
	next := map[string]cached{}
	changed := x.files == nil
	var entries []Entry
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		if seen[o.key] {
			continue
		}
		seen[o.key] = true
		st := o.stamp()
		c, ok := x.cache[o.key]
		if !ok || c.stamp != st {
			changed = true
			c = cached{stamp: st}
			if st != "" {
				c.entries, c.children = o.read()
			}
		}
		next[o.key] = c
		entries = append(entries, c.entries...)
		for _, ch := range c.children {
			if ch.depth <= maxDepth {
				queue = append(queue, ch)
			}
		}
	}
	if len(next) != len(x.cache) {
		changed = true
	}
	x.cache = next
	x.entries = entries
	// The named files' real paths are resolved again when an entry
	// changed, and every resolveEvery besides: a folder on the way may
	// have become a link without any entry changing.
	if changed || now.Sub(x.resolvedAt) >= resolveEvery {
		x.build()
		x.resolvedAt = now
	}
}

// resolveEvery bounds how long the named files' real paths are reused
// (risk.Places resolves its locations as often).
const resolveEvery = 2 * time.Second

// maxDepth is how deep includes are followed: an entry's own file is
// read (0), a file it includes is read (1), and the files that one
// includes are named but not read further.
const maxDepth = 1

// build makes the maps of the named files and folders, each as named
// and at its real path.
func (x *Index) build() {
	files := make(map[string]Hit, len(x.entries)*2)
	dirs := map[string]Hit{}
	add := func(m map[string]Hit, e Entry, p string) {
		h := Hit{Entry: e, File: p}
		for _, k := range append([]string{x.norm(p), x.norm(x.real(p))}, x.linkTargets(p)...) {
			if _, dup := m[k]; !dup && k != "" {
				m[k] = h
			}
		}
	}
	for _, e := range x.entries {
		for _, f := range e.Files {
			add(files, e, f)
		}
		for _, d := range e.Dirs {
			add(dirs, e, d)
		}
	}
	x.files, x.dirs = files, dirs
}

// maxLinks bounds how many links in a row linkTargets follows.
const maxLinks = 8

// linkTargets are the keys of what the named file p leads to when it is
// a link whose target does not exist yet (a dotfile manager's link to a
// file not yet made): Real stops at the link, so the target a write
// would create is keyed too, at its own real prefix.
func (x *Index) linkTargets(p string) []string {
	var out []string
	for range maxLinks {
		r := x.real(p)
		info, err := os.Lstat(r)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			return out
		}
		t, err := os.Readlink(r)
		if err != nil || t == "" {
			return out
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(r), t)
		}
		p = filepath.Clean(t)
		out = append(out, x.norm(p), x.norm(x.real(p)))
	}
	return out
}

// norm is a path as the maps key it: slash-separated, without a
// trailing slash, lower case on Windows.
func (x *Index) norm(p string) string {
	if p == "" {
		return ""
	}
	if x.windows {
		p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	}
	return strings.TrimSuffix(p, "/")
}
