package startup

import (
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// host is this PC as one look at the sources sees it: its OS and its
// environment (the known folders included), asked at each look.
type host struct {
	windows bool
	env     func(string) string
	home    string
}

func (x *Index) host() host {
	h := host{windows: x.windows, env: x.env}
	if x.windows {
		h.home = x.env("USERPROFILE")
	} else {
		h.home = x.env("HOME")
	}
	return h
}

// sep is the path separator of the host.
func (h host) sep() string {
	if h.windows {
		return `\`
	}
	return "/"
}

// join joins parts onto base with the host's separator; "" when base
// is unknown.
func (h host) join(base string, parts ...string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, `/\`) + h.sep() + strings.Join(parts, h.sep())
}

// dir is the folder of a path of the host.
func (h host) dir(p string) string {
	i := strings.LastIndexAny(p, h.seps())
	if i <= 0 {
		return h.sep()
	}
	if h.windows && i == 2 && p[1] == ':' {
		return p[:3]
	}
	return p[:i]
}

// base is the last name of a path of the host.
func (h host) base(p string) string {
	return p[strings.LastIndexAny(p, h.seps())+1:]
}

func (h host) seps() string {
	if h.windows {
		return `/\`
	}
	return "/"
}

// abs reports whether p is an absolute path of the host.
func (h host) abs(p string) bool {
	if !h.windows {
		return strings.HasPrefix(p, "/")
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
}

// clean cleans an absolute path of the host ("." and ".." removed).
func (h host) clean(p string) string {
	if !h.windows {
		return path.Clean(p)
	}
	unc := strings.HasPrefix(p, `\\`)
	c := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
	c = strings.ReplaceAll(strings.TrimPrefix(c, "/"), "/", `\`)
	if unc {
		return `\\` + c
	}
	if len(c) == 2 && c[1] == ':' {
		c += `\`
	}
	return c
}

// expand expands what a start-up file's reader expands in a path: a
// leading ~ (the home), $NAME and ${NAME} and, on Windows, %NAME% and
// $env:NAME. ok is false when a name is unknown or not plain (the path
// cannot be told).
func (h host) expand(s string) (string, bool) {
	if s == "~" || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, `~\`) {
		if h.home == "" {
			return "", false
		}
		s = h.home + s[1:]
	}
	ok := true
	get := func(name string) string {
		if strings.EqualFold(name, "HOME") && h.windows && h.env("HOME") == "" {
			return h.home
		}
		v := h.env(name)
		if v == "" {
			ok = false
		}
		return v
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$' && h.windows && strings.HasPrefix(strings.ToLower(s[i:]), "$env:"):
			j := i + 5
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			b.WriteString(get(s[i+5 : j]))
			i = j - 1
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return "", false
			}
			name := s[i+2 : i+j]
			if !plainName(name) {
				return "", false
			}
			b.WriteString(get(name))
			i += j
		case c == '$' && i+1 < len(s) && isNameByte(s[i+1]):
			j := i + 1
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			b.WriteString(get(s[i+1 : j]))
			i = j - 1
		case c == '%' && h.windows:
			j := strings.IndexByte(s[i+1:], '%')
			if j <= 0 || !plainName(s[i+1:i+1+j]) {
				b.WriteByte(c)
				continue
			}
			b.WriteString(get(s[i+1 : i+1+j]))
			i += j + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ok
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// plainName reports whether s is a plain variable name (the ( and ) of
// ProgramFiles(x86) included), not an expression like ${X:-y}.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) && s[i] != '(' && s[i] != ')' {
			return false
		}
	}
	return true
}

// pathIn is p (expanded) as an absolute path, relative ones taken in
// dir; "" when it cannot be told.
func (h host) pathIn(p, dir string) string {
	p, ok := h.expand(p)
	if !ok || p == "" {
		return ""
	}
	if !h.abs(p) {
		if dir == "" {
			return ""
		}
		p = h.join(dir, p)
	}
	return h.clean(p)
}

// isDir reports whether a folder is at p.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// isFile reports whether a file (not a folder) is at p.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// shells are the programs whose -c (or /c, -Command) argument is a
// command line of its own.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "cmd", "powershell", "pwsh"}

// commandFiles are the files a command line names: its program (found
// on PATH when it is a bare name), every argument (or --option=value's
// value) that is a path — absolute, or relative to wd when such a file
// is there — and, for a shell's -c, the files of the command it runs.
// A path that is a folder is left out.
func (h host) commandFiles(args []string, wd string) []string {
	return h.commandFilesDepth(args, wd, 0)
}

func (h host) commandFilesDepth(args []string, wd string, depth int) []string {
	if len(args) == 0 {
		return nil
	}
	var out []string
	if p := h.program(args[0], wd); p != "" {
		out = append(out, p)
	}
	shell := h.isShell(args[0])
	for i := 1; i < len(args); i++ {
		a := args[i]
		if shell && depth == 0 && i+1 < len(args) && h.commandFlag(a) {
			var inner []string
			if h.windows {
				inner = windowsArgs(strings.Join(args[i+1:], " "))
			} else {
				inner = shellWords(args[i+1])
			}
			for _, c := range splitCommands(inner) {
				out = append(out, h.commandFilesDepth(c, wd, depth+1)...)
			}
			break
		}
		if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "/") && h.windows {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		}
		if p := h.argFile(a, wd); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// commandFlag reports whether a shell's argument a says the next one is
// a command line.
func (h host) commandFlag(a string) bool {
	switch strings.ToLower(a) {
	case "-c", "/c", "/k", "-command", "-c:":
		return true
	}
	return false
}

// splitCommands splits words at the ; && || & | words of a shell.
func splitCommands(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case ";", "&&", "||", "&", "|":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
		default:
			cur = append(cur, w)
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func (h host) isShell(prog string) bool {
	b := strings.ToLower(h.base(prog))
	b = strings.TrimSuffix(b, ".exe")
	for _, s := range shells {
		if b == s {
			return true
		}
	}
	return false
}

// program is the file a command's program name names: a path as
// written (expanded), or a bare name found on PATH (with PATHEXT's
// extensions on Windows); "" when it cannot be found.
func (h host) program(name, wd string) string {
	if strings.ContainsAny(name, h.seps()) {
		return h.pathIn(name, wd)
	}
	sep := ":"
	if h.windows {
		sep = ";"
	}
	exts := []string{""}
	if h.windows && !strings.Contains(name, ".") {
		exts = strings.Split(strings.ToLower(h.env("PATHEXT")), ";")
	}
	for _, d := range strings.Split(h.env("PATH"), sep) {
		if d == "" || !h.abs(d) {
			continue
		}
		for _, e := range exts {
			if p := h.join(d, name+e); isFile(p) {
				return h.clean(p)
			}
		}
	}
	return ""
}

// argFile is the file an argument names: an absolute path (expanded)
// that is not a folder and not a list of paths, or a path relative to
// wd where such a file is; "" otherwise.
func (h host) argFile(a, wd string) string {
	if a == "" {
		return ""
	}
	e, ok := h.expand(a)
	if !ok {
		return ""
	}
	if h.abs(e) {
		list := ":"
		if h.windows {
			list = ";"
		}
		if strings.Contains(e[2:], list) {
			return ""
		}
		p := h.clean(e)
		if isDir(p) {
			return ""
		}
		return p
	}
	if wd == "" || strings.ContainsAny(e, "*?") {
		return ""
	}
	if p := h.clean(h.join(wd, e)); isFile(p) {
		return p
	}
	return ""
}

// tilde is p with the home written ~, for a name on the card.
func (h host) tilde(p string) string {
	if h.home != "" && strings.HasPrefix(p, h.home) && len(p) > len(h.home) && strings.ContainsRune(h.seps(), rune(p[len(h.home)])) {
		return "~" + p[len(h.home):]
	}
	return p
}

// maxRead bounds what is read of one source file.
const maxRead = 1 << 20

// readFile reads at most maxRead bytes of the file at p.
func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxRead))
}

// fileStamp is a file's size and modification time, "" when there is no
// file (or a folder) at p.
func fileStamp(p string) string {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return ""
	}
	return strconv.FormatInt(fi.Size(), 10) + "@" + racy(fi.ModTime())
}

// dirStamp is a folder's modification time (it changes when a name in
// it is added, removed or renamed), "" when there is no folder at p.
func dirStamp(p string) string {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return ""
	}
	return "d@" + racy(fi.ModTime())
}

// racyWindow is how recent a modification time is not trusted: file
// systems keep coarse times (a few milliseconds on Linux, more on some),
// so two changes within one tick may leave the same time and size.
const racyWindow = 2 * time.Second

// racy is a modification time as a stamp; within racyWindow of now it
// is made unique, so the source is read again at every look until its
// time is old enough to tell a later change (as git does with racily
// clean files).
func racy(mod time.Time) string {
	s := strconv.FormatInt(mod.UnixNano(), 10)
	if now := time.Now(); now.Sub(mod) < racyWindow {
		s += "~" + strconv.FormatInt(now.UnixNano(), 10)
	}
	return s
}

// windowsCommand splits a Windows command line as CreateProcess reads
// it: an unquoted program path with spaces (C:\Program Files\App\app.exe
// -x) is the longest run of words that names a file, with .exe added
// as CreateProcess adds it.
func (h host) windowsCommand(s string) []string {
	s = strings.TrimSpace(s)
	args := windowsArgs(s)
	if len(args) == 0 || strings.HasPrefix(s, `"`) {
		return args
	}
	if p, ok := h.expand(args[0]); ok && (isFile(p) || isFile(p+".exe")) {
		return args
	}
	for i := len(s); i > 0; i = strings.LastIndexByte(s[:i], ' ') {
		prog := s[:i]
		p, ok := h.expand(prog)
		if !ok {
			continue
		}
		for _, cand := range []string{p, p + ".exe"} {
			if isFile(cand) {
				return append([]string{cand}, windowsArgs("x " + s[i:])[1:]...)
			}
		}
	}
	return args
}

// readHead reads at most n bytes of the start of the file at p.
func readHead(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
