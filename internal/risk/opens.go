package risk

import (
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Runs when opened: one test decides both whether writing a file asks as
// "a file that runs a program when opened" (Writes.Classify) and whether
// ui.open of it is running a program, which asks every time
// (internal/desktop). A file runs when opened when its extension is in
// the table (OpensGroups), or in PATHEXT (Windows), or, on Windows, the
// program the extension is registered to open with is one that runs
// code (an interpreter, a shell, a launcher, a script host: the handler
// test in opens_windows.go); when its name ends in a class id (a
// CLSID name such as notes.txt.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B},
// which Explorer opens with that class, an HTML Application here);
// and, off Windows, when it has an execute bit, and on every OS when
// its content is a program (PE, ELF, a #! script).

// OpensGroup is one row of the runs-when-opened table.
type OpensGroup struct {
	// What names the kind in plain words.
	What string
	// Exts are its extensions, lower case, with the dot.
	Exts []string
}

// OpensGroups is the runs-when-opened table by extension.
var OpensGroups = []OpensGroup{
	{What: "programs, scripts, installers, shortcuts, add-ins and settings files that change the system", Exts: ScriptExts},
	{What: "automation scripts (AutoHotkey, AutoIt)", Exts: []string{".ahk", ".au3", ".a3x"}},
	{What: "Office files that may hold macros", Exts: MacroOfficeExts},
	{What: "desktop themes, which name programs and files Windows loads", Exts: []string{".theme", ".themepack", ".deskthemepack"}},
	{What: "other files Windows runs, or hands to a program that runs what they say", Exts: []string{".diagcab", ".sct", ".slk",
		".iqy", ".job", ".psc1", ".ps1xml", ".mof", ".hlp", ".ins", ".isp"}},
}

// opensExts are all the table's extensions, made once.
var opensExts = sync.OnceValue(func() []string {
	var out []string
	for _, g := range OpensGroups {
		out = append(out, g.Exts...)
	}
	return out
})

// clsidName matches a name ending in a class id.
var clsidName = regexp.MustCompile(`(?i)\.?\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$`)

// IsCLSIDName reports whether the last name of p (either separator) ends
// in a class id.
func IsCLSIDName(p string) bool {
	return clsidName.MatchString(strings.TrimRight(p[strings.LastIndexAny(p, `/\`)+1:], ". "))
}

// Opens is the runs-when-opened test of one OS. It is safe for
// concurrent use.
type Opens struct {
	windows bool
	// exts are the table's extensions and, on Windows, PATHEXT's.
	exts []string
	// handler names the program an extension is registered to open with
	// ("" when none or unknown); nil off Windows and in tests of the
	// Windows rules on another OS.
	handler func(ext string) handlerInfo
	now     func() time.Time

	mu       sync.Mutex
	handlers map[string]handlerAnswer
}

// handlerInfo is what the registry says opens an extension: its program
// (a path or a name) and the whole command.
type handlerInfo struct {
	program, command string
}

type handlerAnswer struct {
	runs bool
	at   time.Time
}

// handlerRefresh is how long an extension's handler answer is kept.
const handlerRefresh = time.Minute

// NewOpens returns this OS's runs-when-opened test, with PATHEXT from env
// and, on Windows, the registered handlers.
func NewOpens(env func(string) string) *Opens {
	o := NewOpensFor(runtime.GOOS == "windows", env)
	o.handler = registeredHandler
	return o
}

// NewOpensFor returns the test of either OS (windows selects PATHEXT and
// the Windows rules), without the registry: for tests of both on one.
func NewOpensFor(windows bool, env func(string) string) *Opens {
	o := &Opens{windows: windows, exts: slices.Clone(opensExts()), now: time.Now, handlers: map[string]handlerAnswer{}}
	if windows {
		for _, e := range strings.Split(strings.ToLower(env("PATHEXT")), ";") {
			if strings.HasPrefix(e, ".") && !slices.Contains(o.exts, e) {
				o.exts = append(o.exts, e)
			}
		}
	}
	return o
}

// ByName reports whether a file named p runs a program when opened by its
// name alone: the table, PATHEXT, a CLSID name, the registered handler.
func (o *Opens) ByName(p string) bool {
	if IsCLSIDName(p) {
		return true
	}
	ext := extOfName(p)
	if ext == "" {
		return false
	}
	if slices.Contains(o.exts, ext) {
		return true
	}
	return o.handlerRuns(ext)
}

// Runs reports whether the file named p, with an execute bit or not and
// starting with head, runs a program when opened.
func (o *Opens) Runs(p string, executable bool, head []byte) bool {
	if o.ByName(p) {
		return true
	}
	if !o.windows && executable {
		return true
	}
	return programKind(head, true) != ""
}

// handlerRuns reports whether the program ext is registered to open
// with runs code (runnerHandler), asking the registry at most once a
// minute per extension.
func (o *Opens) handlerRuns(ext string) bool {
	if o.handler == nil {
		return false
	}
	o.mu.Lock()
	a, ok := o.handlers[ext]
	o.mu.Unlock()
	now := o.now()
	if ok && now.Sub(a.at) < handlerRefresh {
		return a.runs
	}
	runs := runnerHandler(o.handler(ext))
	o.mu.Lock()
	if len(o.handlers) > 1024 {
		clear(o.handlers)
	}
	o.handlers[ext] = handlerAnswer{runs: runs, at: now}
	o.mu.Unlock()
	return runs
}

// scriptHosts are programs that run the script they open, besides the
// interpreters and launchers of the exec table (AsksEveryTime), as
// ProgramName names them.
var scriptHosts = []string{"autohotkey", "autohotkeyu", "autohotkeya", "autoit", "autoit3_x", "msiexec", "hh", "javaw"}

// viewerLibraries are the libraries rundll32 opens documents with (the
// Windows Photo Viewer): a handler that is rundll32 with one of these is
// a viewer, any other rundll32 runs code.
var viewerLibraries = []string{"photoviewer.dll", "shimgvw.dll"}

// runnerHandler reports whether the registered handler h runs code: an
// interpreter, shell or launcher of the exec table or a script host. A
// handler not known (none registered, or the registry did not say) is
// not one: the extension's own table decides.
func runnerHandler(h handlerInfo) bool {
	if h.program == "" {
		return false
	}
	name := ProgramName(h.program)
	if name == "rundll32" {
		cmd := strings.ToLower(h.command)
		for _, l := range viewerLibraries {
			if strings.Contains(cmd, l) {
				return false
			}
		}
		return true
	}
	return AsksEveryTimeWhy(name) != "" || slices.Contains(scriptHosts, name)
}

// OpensMarkdown is the runs-when-opened table as docs/SECURITY.md shows
// it (a test holds the two together).
func OpensMarkdown() string {
	var b strings.Builder
	b.WriteString("| kind | extensions |\n|---|---|\n")
	for _, g := range OpensGroups {
		b.WriteString("| " + g.What + " | " + codeList(g.Exts) + " |\n")
	}
	b.WriteString("\nBesides the table: on Windows the extensions of `PATHEXT`, and an extension whose registered handler (AssocQueryString, the `open` verb) is a program that runs code: an interpreter, shell or launcher of the exec table above (rundll32 only with a library that is not the Photo Viewer's) or " + codeList(scriptHosts) + "; a name ending in a class id (`name.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B}`); on Linux a file with an execute bit; on every OS content that is a program (`MZ`, ELF, `#!`).\n")
	return b.String()
}
