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
	// GitRepo: anything inside any git repository's own folder (a path
	// with a component ".git") or a ".git" file itself (a submodule's or
	// worktree's pointer to its repository): hooks run by themselves,
	// config can name programs git runs (core.hooksPath, core.fsmonitor,
	// core.sshCommand), and the other files (commondir, gitdir, info,
	// modules) point git at a config or hooks the writer chose. The
	// user's and the system's git config files are ExactFile entries of
	// each table.
	GitRepo
	// InAnyDir: a file in any folder named Path (site-packages, .vscode)
	// wherever it is, with one of Exts, named one of Names or beginning
	// with one of Prefixes; any file there when none of these is set.
	InAnyDir
	// AnyName: a file named one of Names or with one of Exts, in any
	// folder (.envrc, a VS Code workspace file).
	AnyName
)

// Place is one persistence location.
type Place struct {
	// ID names the group in the ledger and in tests (autostart, shell,
	// powershell, git, service, scheduled, ssh, shortcut).
	ID   string
	Kind PlaceKind
	// Path is the location, absolute (unused for GitRepo).
	Path string
	// Exts, when set, limits UnderDir and InAnyDir to files with one of
	// these extensions (lower case, with the dot).
	Exts []string
	// Names, when set, are the file names (lower case) AnyName matches,
	// and InAnyDir matches besides Exts.
	Names []string
	// Prefixes, when set, are beginnings of file names (lower case)
	// InAnyDir matches besides Exts and Names.
	Prefixes []string
	// Sentence completes "ChatGPT wants to …" on the permit card.
	Sentence string
}

// ScriptExts are the extensions of files that run a program when opened:
// programs, scripts, installers, shortcuts (which may point at a
// program), add-ins and settings files that change the system. It is
// the one list both the allowlist of ordinary writes (Windows; PATHEXT
// adds the machine's own) and ui.open (internal/desktop: opening one is
// running it, on every OS) use.
var ScriptExts = []string{".exe", ".com", ".scr", ".pif", ".bat", ".cmd", ".ps1", ".psm1", ".psd1", ".vbs", ".vbe", ".vb",
	".js", ".jse", ".wsf", ".wsh", ".wsc", ".hta", ".lnk", ".url", ".website", ".appref-ms", ".application",
	".reg", ".msi", ".msp", ".mst", ".msix", ".msixbundle", ".appx", ".appxbundle", ".appinstaller", ".cpl", ".msc",
	".jar", ".inf", ".scf", ".settingcontent-ms", ".library-ms", ".search-ms", ".searchconnector-ms", ".gadget",
	".xbap", ".chm", ".dll", ".sys", ".drv", ".ocx", ".py", ".pyw", ".pyz", ".pyzw", ".pyc", ".pyo", ".pl", ".rb",
	".xll", ".xlam", ".dotm", ".sh", ".bash", ".zsh", ".fish", ".ksh", ".csh", ".command", ".desktop", ".appimage",
	".run", ".bin", ".deb", ".rpm"}

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
	sayPython    = "change what runs every time Python starts"
	sayEditor    = "change what a code editor or terminal app runs by itself"
	sayDirenv    = "change what runs every time a terminal enters a folder"
	sayOffice    = "add a macro that Word or Excel runs every time it starts"
	sayPyEnv     = "change what runs every time a Python environment is switched on (activated)"
)

// anywhere are the places of both tables that are not in one folder: a
// Python .pth or customize file in any site-packages (a virtual
// environment's too), a project's VS Code tasks and settings (run when
// the folder is opened) and VS Code workspace files (the same tasks and
// settings, run when the workspace is opened), direnv's .envrc, and
// Python's customize files by name anywhere.
func anywhere() []Place {
	py := []string{"sitecustomize.py", "usercustomize.py"}
	return []Place{
		{ID: "python", Kind: InAnyDir, Path: "site-packages", Exts: []string{".pth"}, Names: py, Sentence: sayPython},
		{ID: "python", Kind: InAnyDir, Path: "dist-packages", Exts: []string{".pth"}, Names: py, Sentence: sayPython},
		{ID: "editor", Kind: InAnyDir, Path: ".vscode", Names: []string{"tasks.json", "settings.json", "launch.json"}, Sentence: sayEditor},
		{ID: "editor", Kind: AnyName, Exts: []string{".code-workspace"}, Sentence: sayEditor},
		// A virtual environment's activation scripts (bin on Unix,
		// Scripts on Windows; plain 0644 files a shell sources) and
		// conda's per-environment scripts, which conda activate sources.
		{ID: "python", Kind: InAnyDir, Path: "bin", Prefixes: []string{"activate"}, Sentence: sayPyEnv},
		{ID: "python", Kind: InAnyDir, Path: "Scripts", Prefixes: []string{"activate", "deactivate"}, Sentence: sayPyEnv},
		{ID: "python", Kind: InAnyDir, Path: "activate.d", Sentence: sayPyEnv},
		{ID: "python", Kind: InAnyDir, Path: "deactivate.d", Sentence: sayPyEnv},
		// The Google Cloud SDK's installer has the shell's start-up file
		// source its path.bash.inc (and completion, zsh, fish).
		{ID: "shell", Kind: InAnyDir, Path: "google-cloud-sdk", Exts: []string{".inc"}, Sentence: sayShell},
		{ID: "shell", Kind: AnyName, Names: []string{".envrc"}, Sentence: sayDirenv},
		// Python runs sitecustomize.py and usercustomize.py from any
		// folder on its path at every start, and an editable install or
		// a .pth file puts a project's own folder there: by name,
		// wherever they are.
		{ID: "python", Kind: AnyName, Names: py, Sentence: sayPython},
	}
}

// Places is a persistence table ready to match real paths. It is safe for
// concurrent use.
type Places struct {
	// table makes the entries from where the locations are now (the
	// environment, the known folders); it is called again at each
	// refresh, so a known folder moved while Hearth runs (a Startup
	// folder redirected through User Shell Folders) counts.
	table func() []Place
	// stamp changes when a known folder may have moved (the User Shell
	// Folders key's last write time on Windows); nil never. It is read
	// at most every stampEvery, and a change refreshes at once.
	stamp func() string
	// windows compares case-insensitively with either separator.
	windows bool
	// real resolves a location through symlinks and junctions (the
	// longest existing prefix); nil leaves locations as written.
	real func(string) string
	// now is the clock of the resolved locations' refresh.
	now func() time.Time
	// exists reports whether a file or folder is at a path (nil:
	// os.Lstat), for the folders a write makes look like git's own.
	exists func(string) bool

	mu sync.Mutex
	// list are the entries table made at the last refresh, and resolved
	// their locations' real paths (normalized), by index in list, made
	// at most refreshEvery ago: resolving every location costs
	// milliseconds, and almost every write is of an ordinary file.
	list       []Place
	resolved   []string
	resolvedAt time.Time
	// stamped is the last stamp read, at stampedAt.
	stamped   string
	stampedAt time.Time
}

// stampEvery bounds how often the known folders' stamp is read: a
// Startup folder moved while Hearth runs counts within this time.
const stampEvery = 250 * time.Millisecond

// refreshEvery bounds how long a location's real path is reused: a
// location that becomes a link (a home's .config moved elsewhere and
// linked back) is seen within this time. The path being written is
// always resolved by the caller at the call itself.
const refreshEvery = 2 * time.Second

// NewPlaces returns the table for this OS, its locations taken from env
// (os.Getenv in Hearth) and the known folders (KnownFolderEnv), and
// resolved by RealPrefix.
func NewPlaces(env func(string) string) *Places {
	return NewPlacesResolved(KnownFolderEnv(env), RealPrefix)
}

// NewPlacesResolved is NewPlaces with the locations resolved by real,
// which must resolve links as the file system the caller checks writes
// with does (Hearth's fs resolves junctions too, which
// filepath.EvalSymlinks no longer follows on Windows): a location and the
// path being written are then compared resolved the same way.
func NewPlacesResolved(env func(string) string, real func(string) string) *Places {
	p := NewPlacesFor(runtime.GOOS == "windows", env, real)
	p.stamp = knownFoldersStamp
	return p
}

// NewPlacesFor returns a table for tests of either OS's entries: windows
// selects WindowsPlaces and Windows matching; real may be nil.
func NewPlacesFor(windows bool, env func(string) string, real func(string) string) *Places {
	p := &Places{windows: windows, real: real, now: time.Now}
	if windows {
		p.table = func() []Place { return WindowsPlaces(env) }
	} else {
		p.table = func() []Place { return LinuxPlaces(env) }
	}
	return p
}

// List returns the table's entries.
func (p *Places) List() []Place {
	list, _ := p.locations()
	return slices.Clone(list)
}

// Match returns the persistence location real (a real, absolute path, as
// fs resolves it) is in, if any.
func (p *Places) Match(real string) (Place, bool) {
	path := p.norm(real)
	list, resolved := p.locations()
	for i, pl := range list {
		if p.matches(pl, path, resolved[i]) {
			return pl, true
		}
	}
	if p.gitDirAfter(real) {
		for _, pl := range list {
			if pl.Kind == GitRepo {
				return pl, true
			}
		}
	}
	return Place{}, false
}

// gitDirAfter reports whether writing the file at real (a real absolute
// path) leaves a folder on its way looking like a git repository's own
// folder to git: holding a HEAD file and objects/ and refs/ (or a
// commondir file in their place), one of them the file written, the
// others already there. git, started in such a folder, takes it for a
// bare repository and runs what its config names (core.fsmonitor), so
// such a write is one inside .git, whichever of the parts comes last.
// It reads at most three names per folder whose next name on the way is
// HEAD, objects, refs or commondir, and nothing for any other write.
func (p *Places) gitDirAfter(real string) bool {
	seps := "/"
	if p.windows {
		seps = `/\`
	}
	exists := p.exists
	if exists == nil {
		exists = lstatExists
	}
	norm := func(s string) string {
		if p.windows {
			return strings.ToLower(s)
		}
		return s
	}
	parts := []string{"HEAD", "objects", "refs", "commondir"}
	for at := len(real); ; {
		i := strings.LastIndexAny(real[:at], seps)
		if i < 0 {
			return false
		}
		name := norm(real[i+1 : at])
		at = i
		if !slices.ContainsFunc(parts, func(s string) bool { return norm(s) == name }) {
			continue
		}
		has := func(part string) bool { return norm(part) == name || exists(real[:i+1]+part) }
		if has("HEAD") && (has("objects") && has("refs") || has("commondir")) {
			return true
		}
	}
}

// locations returns the entries and their locations' real paths, made
// again from where the locations are now when the last refresh is older
// than refreshEvery or the known folders' stamp changed.
func (p *Places) locations() ([]Place, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	moved := false
	if p.stamp != nil && now.Sub(p.stampedAt) >= stampEvery {
		st := p.stamp()
		moved = p.stampedAt != (time.Time{}) && st != p.stamped
		p.stamped, p.stampedAt = st, now
	}
	if p.resolved != nil && now.Sub(p.resolvedAt) < refreshEvery && !moved {
		return p.list, p.resolved
	}
	list := p.table()
	out := make([]string, len(list))
	for i, pl := range list {
		if (pl.Kind == UnderDir || pl.Kind == ExactFile) && p.real != nil {
			out[i] = p.norm(p.real(pl.Path))
		}
	}
	p.list, p.resolved, p.resolvedAt = list, out, now
	return list, out
}

func (p *Places) norm(s string) string {
	if p.windows {
		s = strings.ToLower(strings.ReplaceAll(s, `\`, "/"))
	}
	return strings.TrimSuffix(s, "/")
}

func (p *Places) matches(pl Place, path, resolved string) bool {
	switch pl.Kind {
	case GitRepo:
		return gitPlace(path)
	case InAnyDir:
		dir, _ := splitLast(path)
		_, parent := splitLast(dir)
		return p.sameName(parent, pl.Path) && (len(pl.Exts)+len(pl.Names)+len(pl.Prefixes) == 0 || pl.named(path))
	case AnyName:
		return pl.named(path)
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
			if len(pl.Exts) == 0 && len(pl.Names) == 0 || pl.named(path) {
				return true
			}
		}
	}
	return false
}

// named reports whether the last component of path has one of pl's
// Exts, Names or Prefixes.
func (pl Place) named(path string) bool {
	_, base := splitLast(path)
	base = strings.ToLower(base)
	return slices.Contains(pl.Exts, strings.ToLower(extOf(path))) || slices.Contains(pl.Names, base) ||
		slices.ContainsFunc(pl.Prefixes, func(p string) bool { return strings.HasPrefix(base, p) })
}

// extOf is the extension of a slash-separated path's last component.
func extOf(path string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[i:]
	}
	return ""
}

// gitPlace reports whether a slash-separated path (lower case on
// Windows) is inside a git repository's own folder, or is a ".git" file
// (a submodule's or worktree's "gitdir: …" pointer): every file there can
// make git run a program (hooks, config, and commondir or gitdir pointing
// at a config the writer chose).
func gitPlace(path string) bool {
	return strings.HasSuffix(path, "/.git") || strings.Contains(path, "/.git/")
}

// splitLast splits a slash-separated path at its last separator.
func splitLast(path string) (dir, base string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// sameName compares a path component with a folder name of the table
// (lower case on Windows, where the path is lower case already).
func (p *Places) sameName(component, name string) bool {
	if p.windows {
		return component == strings.ToLower(name)
	}
	return component == name
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
		if p.Kind == GitRepo || p.Kind == AnyName || p.Path != "" {
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
