package risk

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Ordinary writes: the allowlist. In ask mode a write runs without asking
// only when every file it changes is an ordinary file (Writes.Classify):
// under a root; no folder or file below the home or the root hidden; not
// in the system's program and settings folders; and not a program. Any
// other write is CaseUnusual (it asks), and a persistence place
// (places.go) is CasePersist whatever the allowlist says: the table of
// places names what would happen, it no longer decides what is ordinary.
// docs/SECURITY.md shows the rules (AllowlistMarkdown), and a test holds
// the two together.

// FileFacts is what a write would do to one file, as the allowlist needs
// it: gathered by the file system's primitive at admission, and again
// when it opens the file for the replace.
type FileFacts struct {
	// Path is the real absolute path (links resolved).
	Path string
	// Root is the real path of the root Path is under; "" when none.
	Root string
	// Exists is set when the file is there now.
	Exists bool
	// Executable is set when the existing file has an execute bit.
	Executable bool
	// Head is the start of the existing file (up to HeadSize bytes).
	Head []byte
	// NewHead is the start of the content the file has after the call,
	// up to HeadSize bytes (for a patch or an undo, of the content it
	// leaves); nil when the call writes no content (an undo that removes
	// the file).
	NewHead []byte
	// NewMacros is set when the content the file has after the call is
	// not an Office or OpenDocument package free of macros
	// (PackageMacros); gathered only for such files (NeedsPackageCheck).
	NewMacros bool
	// Folder is set when Path is a folder the call makes, carries (a
	// move, a copy) or removes, not a file's content: it is judged by
	// where it is (a root, hidden names, the system's folders, a program
	// area), never by kind; the files it holds count each on their own.
	Folder bool
	// Marked are the existing folders and file on the way to Path (real
	// absolute paths) that carry the Hidden or System attribute (Windows).
	Marked []string
}

// HeadSize is how much of a file's start the allowlist looks at.
const HeadSize = 4

// Why names a reason a write is not ordinary.
type Why string

// The reasons, in the order Classify looks for them.
const (
	// WhySystem: in the system's program and settings folders.
	WhySystem Why = "system"
	// WhyHidden: a hidden file or folder below the home or the root.
	WhyHidden Why = "hidden"
	// WhyProgram: the replacement of a program (an execute bit, or a
	// program's content: PE, ELF).
	WhyProgram Why = "program"
	// WhyNewProgram: a new file whose content is a program (PE; on Unix
	// also ELF or a #! script).
	WhyNewProgram Why = "new_program"
	// WhyOpens: a file that runs a program when opened (Opens: the
	// runs-when-opened table, PATHEXT, a CLSID name, a handler that
	// runs code; an Office file with macros).
	WhyOpens Why = "opens"
	// WhyNotDocument: a file that is not a document (the documents
	// table): code, settings, a kind Hearth does not know, no
	// extension, or content that is not what its name says.
	WhyNotDocument Why = "not_document"
	// WhyOutside: not under a root (such a call is refused when it runs).
	WhyOutside Why = "outside"
	// WhyPythonEnv: inside a Python environment (a folder on the way
	// holds pyvenv.cfg or conda-meta): its modules, scripts and
	// activation run whenever it is used.
	WhyPythonEnv Why = "python_env"
	// WhyInstalled: inside a tool installed in the home whose files a
	// shell start-up file loads (Perl's local::lib, the Google Cloud
	// SDK).
	WhyInstalled Why = "installed"
)

// Said completes "ChatGPT wants to …" on the permit card, in plain words.
func (w Why) Said() string {
	switch w {
	case WhySystem:
		return "change a file in the computer's program and settings folders"
	case WhyHidden:
		return "change a hidden settings file"
	case WhyProgram:
		return "change a program that other programs start"
	case WhyNewProgram:
		return "write a new program"
	case WhyOpens:
		return "write a file that runs a program when opened"
	case WhyNotDocument:
		return "write a file that is not a document (code, settings or a kind of file Hearth does not know)"
	case WhyOutside:
		return "change a file outside your folders"
	case WhyPythonEnv:
		return "change a file that a Python environment runs"
	case WhyInstalled:
		return "change a file of a program installed in your home, which a terminal loads when it starts"
	}
	return "write a file that is not an ordinary file"
}

// Coverable reports whether a workspace ("ChatGPT may change code and
// settings in this folder") may cover a write of this reason: code,
// settings, hidden files, programs and kinds that are not documents;
// never the system's folders or a program installed in the person's
// folders (nor a persistence place, which is another case).
func (w Why) Coverable() bool {
	return w == WhyHidden || w == WhyProgram || w == WhyNewProgram || w == WhyOpens || w == WhyNotDocument
}

// Writes is the allowlist of one OS, its folders resolved. It is safe
// for concurrent use.
type Writes struct {
	windows bool
	// home is the user's home as written (HOME, USERPROFILE).
	home string
	// areas are the system's program and settings folders as written.
	areas []string
	// opens is the runs-when-opened test.
	opens *Opens
	real  func(string) string
	now   func() time.Time
	// exists reports whether a file or folder is at a path (os.Lstat);
	// the check of Python environments on the way to a written file.
	exists func(string) bool

	mu         sync.Mutex
	resolved   []string // home, then areas: real paths, normalized
	resolvedAt time.Time
}

// NewWrites returns this OS's allowlist, its folders taken from env
// (KnownFolderEnv(os.Getenv) in Hearth) and resolved by real, which
// must resolve links as the file system the caller checks writes with
// does.
func NewWrites(env func(string) string, real func(string) string) *Writes {
	w := NewWritesFor(runtime.GOOS == "windows", env, real)
	w.opens = NewOpens(env)
	return w
}

// NewWritesFor returns the allowlist of either OS (windows selects the
// Windows rules), for tests of both on one: its runs-when-opened test
// does not ask the registry (NewOpensFor); real may be nil.
func NewWritesFor(windows bool, env func(string) string, real func(string) string) *Writes {
	w := &Writes{windows: windows, real: real, now: time.Now, exists: lstatExists, opens: NewOpensFor(windows, env)}
	if windows {
		w.home = env("USERPROFILE")
		w.areas = WindowsAreas(env)
	} else {
		w.home = env("HOME")
		w.areas = slices.Clone(UnixAreas)
	}
	return w
}

// UnixAreas are the system's program and settings folders on Linux and
// other Unix-like systems (the dot-folders of a home are hidden ones).
var UnixAreas = []string{"/etc", "/usr", "/opt", "/var", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/snap", "/srv", "/sys", "/proc", "/dev", "/run"}

// WindowsAreaVars are the environment variables and known folders
// (FOLDERID_…, see KnownFolderEnv) naming the system's program and
// settings folders on Windows.
var WindowsAreaVars = []string{"APPDATA", "LOCALAPPDATA", "ProgramData", "SystemRoot", "windir", "ProgramFiles",
	"ProgramFiles(x86)", "ProgramW6432", "CommonProgramFiles", "CommonProgramFiles(x86)",
	"FOLDERID_RoamingAppData", "FOLDERID_LocalAppData", "FOLDERID_LocalAppDataLow", "FOLDERID_ProgramData",
	"FOLDERID_Windows", "FOLDERID_System", "FOLDERID_SystemX86", "FOLDERID_ProgramFiles", "FOLDERID_ProgramFilesX86",
	"FOLDERID_ProgramFilesCommon", "FOLDERID_UserProgramFiles", "FOLDERID_Startup", "FOLDERID_CommonStartup",
	"FOLDERID_StartMenu", "FOLDERID_CommonStartMenu", "FOLDERID_Programs", "FOLDERID_CommonPrograms",
	"FOLDERID_SendTo", "FOLDERID_Templates", "FOLDERID_CommonTemplates"}

// WindowsAreas are the system's program and settings folders on
// Windows, from env.
func WindowsAreas(env func(string) string) []string {
	var out []string
	for _, k := range WindowsAreaVars {
		if v := env(k); v != "" {
			out = append(out, v)
		}
	}
	if env("LOCALAPPDATA") == "" && env("USERPROFILE") != "" {
		out = append(out, join(`\`, env("USERPROFILE"), "AppData"))
	}
	return out
}

// Classify says whether the write f describes is of an ordinary file,
// and when not, why (the first reason found).
func (w *Writes) Classify(f FileFacts) (Why, bool) {
	return w.classify(f, w.exists)
}

// CallWrites is the allowlist for the files of one call. Each file is
// classified on its own, as Classify does; what the classification looks
// at on the way to a file (the marks of a Python environment, in every
// folder above it) is looked at once per path for all of the call's
// files, so a batch of 1,000 files in one folder walks the folders above
// it once, not 1,000 times. It lives for one call (one admission, one
// run) and is not safe for concurrent use: a folder changed after it
// looked counts at the next call.
type CallWrites struct {
	w    *Writes
	seen map[string]bool
}

// ForCall returns the allowlist for the files of one call.
func (w *Writes) ForCall() *CallWrites {
	return &CallWrites{w: w, seen: map[string]bool{}}
}

// Classify is Writes.Classify.
func (c *CallWrites) Classify(f FileFacts) (Why, bool) {
	if c.w.exists == nil {
		return c.w.classify(f, nil)
	}
	return c.w.classify(f, c.exists)
}

// exists is Writes.exists, asked once per path.
func (c *CallWrites) exists(p string) bool {
	v, ok := c.seen[p]
	if !ok {
		v = c.w.exists(p)
		c.seen[p] = v
	}
	return v
}

// classify is Classify, looking at paths with exists (nil: not at all).
func (w *Writes) classify(f FileFacts, exists func(string) bool) (Why, bool) {
	path := w.norm(f.Path)
	res := w.folders()
	home, areas := res[0], res[1:]
	for _, a := range areas {
		if a != "" && under(path, a) {
			return WhySystem, false
		}
	}
	if f.Root == "" {
		// Not under a root: the call is refused when it runs.
		return WhyOutside, false
	}
	// Before the hidden names: a folder rule covers a hidden file, never
	// a program area (a project's .venv).
	if why := w.programArea(f.Path, exists); why != "" {
		return why, false
	}
	base := w.norm(f.Root)
	if home != "" && under(path, home) && under(base, home) {
		// Below the home, even where the root is deeper in it.
		base = home
	}
	if rel, ok := strings.CutPrefix(path, base+"/"); ok {
		for _, c := range strings.Split(rel, "/") {
			if strings.HasPrefix(c, ".") {
				return WhyHidden, false
			}
		}
	}
	for _, m := range f.Marked {
		if m := w.norm(m); under(m, base) && m != base {
			return WhyHidden, false
		}
	}
	if f.Folder {
		return "", true
	}
	if f.Exists && (f.Executable || isProgram(f.Head, !w.windows)) {
		return WhyProgram, false
	}
	if k := programKind(f.NewHead, !w.windows); k != "" && (!f.Exists || k != programKind(f.Head, !w.windows)) {
		// The content written makes the file a program it was not: a
		// new one, or an existing file whose start becomes a program's
		// (a patch or an undo counts by the content it leaves).
		return WhyNewProgram, false
	}
	if w.opens.ByName(f.Path) {
		return WhyOpens, false
	}
	g, ok := documentGroup(f.Path)
	if !ok {
		return WhyNotDocument, false
	}
	return documentContent(f, g, w.windows)
}

// Opens is the allowlist's runs-when-opened test (ui.open uses the same).
func (w *Writes) Opens() *Opens { return w.opens }

// programArea is the reason a file at the real path p is inside an
// environment or tool installed in a folder of the person's (a program
// area like the system's, found where it is): WhyPythonEnv when p is a
// pyvenv.cfg or inside a conda-meta folder, or a folder on the way to it
// (up to the file system's root) holds pyvenv.cfg or conda-meta;
// WhyInstalled when p is inside perl5/lib (local::lib) or a
// google-cloud-sdk folder; "" otherwise. It reads two names per folder
// on the way, nothing else.
func (w *Writes) programArea(p string, exists func(string) bool) Why {
	seps := "/"
	if w.windows {
		seps = `/\`
	}
	parts := strings.FieldsFunc(p, func(r rune) bool { return strings.ContainsRune(seps, r) })
	for i, c := range parts {
		if w.windows {
			c = strings.ToLower(c)
		}
		switch {
		case c == "conda-meta" || i == len(parts)-1 && c == "pyvenv.cfg":
			return WhyPythonEnv
		case c == "google-cloud-sdk" || c == "perl5" && i+1 < len(parts) && strings.EqualFold(parts[i+1], "lib"):
			return WhyInstalled
		}
	}
	if exists == nil {
		return ""
	}
	for dir := p; strings.ContainsAny(dir, seps); {
		i := strings.LastIndexAny(dir, seps)
		sep := dir[i : i+1]
		// dir becomes the folder: "" for / and "C:" for C:\ (the roots).
		dir = dir[:i]
		if exists(dir+sep+"pyvenv.cfg") || exists(dir+sep+"conda-meta") {
			return WhyPythonEnv
		}
	}
	return ""
}

// lstatExists reports whether something is at p, without following a
// last link.
func lstatExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// isProgram reports whether a file starting with head is a program: a
// PE file ("MZ") on every OS, and an ELF file where elf is set.
func isProgram(head []byte, elf bool) bool {
	return bytes.HasPrefix(head, []byte("MZ")) || elf && bytes.HasPrefix(head, []byte("\x7fELF"))
}

// programKind names the kind of program a file starting with head is:
// "pe" on every OS, and where unix is set "elf" or "script" (#!); "" for
// none.
func programKind(head []byte, unix bool) string {
	switch {
	case bytes.HasPrefix(head, []byte("MZ")):
		return "pe"
	case unix && bytes.HasPrefix(head, []byte("\x7fELF")):
		return "elf"
	case unix && bytes.HasPrefix(head, []byte("#!")):
		return "script"
	}
	return ""
}

// under reports whether the normalized path p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func (w *Writes) norm(s string) string {
	if w.windows {
		s = strings.ToLower(strings.ReplaceAll(s, `\`, "/"))
	}
	return strings.TrimSuffix(s, "/")
}

// folders returns the home and the areas, resolved and normalized,
// resolved again when the last resolution is older than refreshEvery.
func (w *Writes) folders() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if w.resolved != nil && now.Sub(w.resolvedAt) < refreshEvery {
		return w.resolved
	}
	all := append([]string{w.home}, w.areas...)
	out := make([]string, len(all))
	for i, p := range all {
		if p != "" && w.real != nil {
			p = w.real(p)
		}
		if p != "" {
			out[i] = w.norm(p)
		}
	}
	w.resolved, w.resolvedAt = out, now
	return out
}

// AllowlistMarkdown is the allowlist in plain words, as docs/SECURITY.md
// shows it (a test holds the two together).
func AllowlistMarkdown() string {
	var b strings.Builder
	b.WriteString("A write, patch or undo (and every scatter item, recipe step and job that writes) is of an ordinary file, and runs without asking in ask mode, only when the file's real path (links resolved, at admission and again when the file is opened for the replace):\n\n")
	b.WriteString("1. is under a root;\n")
	b.WriteString("2. has no folder or file name below the home (or the root, outside the home) beginning with `.`, nor on Windows one with the Hidden or System attribute;\n")
	b.WriteString("3. is not in the system's program and settings folders: on Linux " + codeList(UnixAreas) + "; on Windows " + codeList(WindowsAreaVars) + " (known folders through SHGetKnownFolderPath, so a moved folder counts where it really is);\n")
	b.WriteString("4. is not in a program installed in the person's folders: a Python environment (a folder on the way to the file, up to the file system's root, holds `pyvenv.cfg` or `conda-meta`, or the file is one of these), Perl's `perl5/lib` (local::lib) or a `google-cloud-sdk` folder, whose files a terminal or Python loads when it starts;\n")
	b.WriteString("5. does not replace a program: an existing file with an execute bit, or one starting with `MZ` (PE), or on Linux with ELF;\n")
	b.WriteString("6. does not run a program when opened (the runs-when-opened table below, the one `ui.open` uses too);\n")
	b.WriteString("7. does not make a file a program: content starting with `MZ`, or on Linux with ELF or `#!`, in a new file or in one that did not start so before (a patch or an undo counts by the content it leaves);\n")
	b.WriteString("8. is a document by its extension (the documents table below) and its content agrees;\n")
	b.WriteString("9. is not a persistence place (the tables below), which asks as its own case whatever the rest says.\n\n")
	b.WriteString("A workspace (\"ChatGPT may change code and settings in this folder\", made from a card, listed and removable on the Safety page) covers, in its folder and below, the reasons marked below; never a persistence place, a file inside `.git`, the system's folders or a program installed in the person's folders.\n\n")
	b.WriteString("Why a write that is not ordinary asks, as the card says it (\"ChatGPT wants to …\"):\n\n| reason | the card says | a workspace covers it |\n|---|---|---|\n")
	for _, w := range []Why{WhySystem, WhyPythonEnv, WhyInstalled, WhyHidden, WhyProgram, WhyOpens, WhyNewProgram, WhyNotDocument} {
		cover := "no"
		if w.Coverable() {
			cover = "yes"
		}
		b.WriteString("| `" + string(w) + "` | " + w.Said() + " | " + cover + " |\n")
	}
	return b.String()
}

func codeList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, " ")
}

// WhyOf is the reason whose Said is said (a permit keeps the card's
// sentence), and false for a sentence of no reason.
func WhyOf(said string) (Why, bool) {
	for _, w := range []Why{WhySystem, WhyHidden, WhyProgram, WhyNewProgram, WhyOpens, WhyOutside, WhyPythonEnv, WhyInstalled, WhyNotDocument} {
		if w.Said() == said {
			return w, true
		}
	}
	return "", false
}

// projectMarks are the names whose presence makes a folder a project's
// (its root), nearest first: a repository, then a build file.
var projectMarks = [][]string{{".git", ".hg", ".svn"}, {"go.mod", "package.json", "pyproject.toml", "setup.py", "Cargo.toml",
	"pom.xml", "build.gradle", "build.gradle.kts", "CMakeLists.txt", "Makefile", "composer.json", "Gemfile", ".gitignore"}}

// maxProjectDepth bounds how many folders above a file FolderFor looks
// at for a project's marks.
const maxProjectDepth = 16

// FolderFor is the folder a card offers a workspace for, for the file
// at the real path p that is not ordinary for why: the project the file
// is in (the nearest folder on the way holding a repository — .git, .hg,
// .svn — else the nearest holding a build file or .gitignore), so that
// a project asks once; else the folder holding the first hidden name
// below the home, else the file's own folder. There is none (false) for
// a reason no workspace may cover, or when the folder would be the home
// itself or a folder above it, or one of the system's folders.
func (w *Writes) FolderFor(p string, why Why) (string, bool) {
	if !why.Coverable() || p == "" {
		return "", false
	}
	sep := "/"
	if w.windows {
		sep = `\`
		p = strings.ReplaceAll(p, "/", `\`)
	}
	res := w.folders()
	home, areas := res[0], res[1:]
	folder := p[:max(strings.LastIndex(p, sep), 0)]
	start := 0
	if home != "" && under(w.norm(p), home) {
		start = len(home) + 1
	}
	if start < len(p) {
		parts := strings.Split(p[start:], sep)
		at := start
		for _, c := range parts[:len(parts)-1] {
			if strings.HasPrefix(c, ".") {
				folder = strings.TrimSuffix(p[:at], sep)
				break
			}
			at += len(c) + 1
		}
	}
	if proj, ok := w.projectOf(p, sep, home); ok {
		folder = proj
	}
	f := w.norm(folder)
	if f == "" || home != "" && under(home, f) {
		return "", false
	}
	for _, a := range areas {
		if a != "" && under(f, a) {
			return "", false
		}
	}
	return folder, true
}

// projectOf is the project folder the file p is in (FolderFor): the
// nearest folder on the way, below the home (home is normalized) and
// at most maxProjectDepth up, holding one of the first marks, else one
// of the second.
func (w *Writes) projectOf(p, sep, home string) (string, bool) {
	if w.exists == nil {
		return "", false
	}
	var dirs []string
	for dir := p; len(dirs) < maxProjectDepth; {
		i := strings.LastIndex(dir, sep)
		if i <= 0 {
			break
		}
		dir = dir[:i]
		n := w.norm(dir)
		if !strings.Contains(strings.TrimPrefix(n, "/"), "/") || home != "" && under(home, n) {
			break // the file system's root, a volume's or the home
		}
		dirs = append(dirs, dir)
	}
	for _, marks := range projectMarks {
		for _, d := range dirs {
			for _, m := range marks {
				if w.exists(d + sep + m) {
					return d, true
				}
			}
		}
	}
	return "", false
}

// Covers reports whether a folder rule for folder covers the real path
// p: p is inside it (compared without case on Windows).
func (w *Writes) Covers(folder, p string) bool {
	f := w.norm(folder)
	return f != "" && strings.HasPrefix(w.norm(p), f+"/")
}
