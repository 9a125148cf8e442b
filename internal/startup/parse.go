package startup

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"github.com/hearth-dev/hearth/internal/risk"
)

// The parsers of the entry files, each reading a file as the program
// that runs it does.

// eachLine calls f with each line of b, without its line ending.
func eachLine(b []byte, f func(string)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxRead)
	for sc.Scan() {
		f(strings.TrimSuffix(sc.Text(), "\r"))
	}
}

// parseDesktop reads an XDG autostart .desktop file: the [Desktop
// Entry] group's Exec= (run in Path= when set) and TryExec=.
func parseDesktop(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	e := Entry{Kind: KindAutostart, Name: strings.TrimSuffix(h.base(p), ".desktop"), Source: p}
	var exec, try, wd string
	group := ""
	eachLine(b, func(l string) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			group = strings.Trim(l, "[]")
			return
		}
		if group != "Desktop Entry" || strings.HasPrefix(l, "#") {
			return
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return
		}
		v = desktopString(strings.TrimSpace(v))
		switch strings.TrimSpace(k) {
		case "Name":
			e.Name = v
		case "Exec":
			exec = v
		case "TryExec":
			try = v
		case "Path":
			wd = h.pathIn(v, "")
		}
	})
	args := desktopExec(exec)
	e.Files = h.commandFiles(args, wd)
	if try != "" {
		if f := h.program(try, wd); f != "" {
			e.Files = append(e.Files, f)
		}
	}
	return []Entry{e}, h.scriptOrigins(e, args, wd, depth)
}

// unitExecKeys are the keys of a systemd unit whose values are command
// lines it runs.
var unitExecKeys = []string{"ExecStart", "ExecStartPre", "ExecStartPost", "ExecCondition", "ExecReload", "ExecStop", "ExecStopPost"}

// parseUnit reads a systemd user unit or drop-in: its Exec*= command
// lines (specifiers %h and %% resolved, prefixes @-:+! dropped, ;
// separating commands), run in WorkingDirectory=, and its
// EnvironmentFile=.
func parseUnit(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	name := h.base(p)
	if d := h.base(h.dir(p)); strings.HasSuffix(d, ".d") {
		name = strings.TrimSuffix(d, ".d")
	}
	e := Entry{Kind: KindUserUnit, Name: name, Source: p}
	spec := strings.NewReplacer("%h", h.home, "%%", "%")
	var cmds []string
	var wd string
	var cont strings.Builder
	eachLine(b, func(l string) {
		// A line ending in a backslash continues on the next.
		if t := strings.TrimRight(l, " \t"); strings.HasSuffix(t, `\`) {
			cont.WriteString(strings.TrimSuffix(t, `\`) + " ")
			return
		}
		l = strings.TrimSpace(cont.String() + l)
		cont.Reset()
		if l == "" || l[0] == '#' || l[0] == ';' {
			return
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return
		}
		k, v = strings.TrimSpace(k), spec.Replace(strings.TrimSpace(v))
		switch {
		case containsString(unitExecKeys, k):
			cmds = append(cmds, v)
		case k == "WorkingDirectory":
			v = strings.TrimPrefix(v, "-")
			if v == "~" {
				v = h.home
			}
			wd = h.pathIn(v, "")
		case k == "EnvironmentFile":
			if f := h.pathIn(strings.TrimPrefix(v, "-"), ""); f != "" {
				e.Files = append(e.Files, f)
			}
		}
	})
	var more []origin
	for _, c := range cmds {
		for _, words := range splitCommands(unitWords(c)) {
			args := unitCommand(words)
			e.Files = append(e.Files, h.commandFiles(args, wd)...)
			more = append(more, h.scriptOrigins(e, args, wd, depth)...)
		}
	}
	return []Entry{e}, more
}

// unitWords splits a unit's command line; a lone ; separates commands.
func unitWords(s string) []string {
	var out []string
	// shellCommands reads quotes and backslashes as systemd does; its ;
	// is systemd's command separator too.
	for i, c := range shellCommands(s) {
		if i > 0 {
			out = append(out, ";")
		}
		out = append(out, c...)
	}
	return out
}

// unitCommand drops a unit command's prefixes (@ - : + !) and, after
// @, the argument that is the program's zeroth name.
func unitCommand(words []string) []string {
	if len(words) == 0 {
		return nil
	}
	first := words[0]
	at := false
	for first != "" && strings.IndexByte("@-:+!", first[0]) >= 0 {
		at = at || first[0] == '@'
		first = first[1:]
	}
	out := append([]string{first}, words[1:]...)
	if at && len(out) > 1 {
		out = append(out[:1], out[2:]...)
	}
	return out
}

// containsFold reports whether list holds s, without case.
func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shellKeywords are the words a shell reads before a command's own
// (if . ~/x; then …).
var shellKeywords = []string{"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "exec", "command", "builtin"}

// parseShell reads a shell start-up file: the files it sources (. or
// source, ~ and $HOME expanded, a relative name taken in the home) are
// named and read one level further, and every other command names its
// program and the files in its arguments, as an autostart entry's does.
func parseShell(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	e := Entry{Kind: KindShell, Name: h.tilde(p), Source: p}
	var more []origin
	// Variables the file sets (export NVM_DIR="$HOME/.nvm") expand in
	// the lines after, and in the files it sources.
	vars := map[string]string{}
	sh := h
	sh.env = func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return h.env(k)
	}
	eachLine(b, func(l string) {
		for _, c := range shellCommands(l) {
			for len(c) > 0 && containsString(shellKeywords, c[0]) {
				c = c[1:]
			}
			if len(c) == 0 {
				continue
			}
			switch {
			case (c[0] == "." || c[0] == "source") && len(c) > 1:
				f := sh.pathIn(c[1], h.home)
				if f == "" {
					continue
				}
				e.Files = append(e.Files, f)
				more = append(more, fileOrigin(sh, f, depth+1, parseShell))
			case assigns(c):
				for _, w := range c {
					name, val, ok := strings.Cut(w, "=")
					if !ok {
						continue
					}
					if v, ok := sh.expand(val); ok {
						vars[name] = v
					}
				}
			case !strings.Contains(c[0], "="):
				// Any command, as an autostart entry's: the program
				// (by path, or found on PATH) and the files in its
				// arguments (python3 ~/proj/motd.py, bash run.sh).
				e.Files = append(e.Files, sh.commandFiles(c, h.home)...)
			}
		}
	})
	return []Entry{e}, more
}

// assigns reports whether a command only sets variables (X=1, export
// X=1 Y=2), dropping export's own word.
func assigns(c []string) bool {
	if c[0] == "export" {
		c = c[1:]
	}
	if len(c) == 0 {
		return false
	}
	for _, w := range c {
		name, _, ok := strings.Cut(w, "=")
		if !ok || !plainName(name) || strings.ContainsAny(name, "()") {
			return false
		}
	}
	return true
}

// gitCommandKeys are git settings (section.key, lower case) whose value
// is a command git runs by itself; gitDirKeys name a folder of programs
// git runs (hooks).
var (
	gitCommandKeys = []string{"core.fsmonitor", "core.sshCommand", "core.pager", "core.editor", "credential.helper",
		"gpg.program", "diff.external", "sequence.editor"}
	gitDirKeys = []string{"core.hooksPath"}
)

// parseGit reads a git config file: [include] and [includeIf …] path=
// (relative to the file's folder, ~ expanded) are named and read one
// level further; the settings that name a program git runs name it,
// core.hooksPath its folder.
func parseGit(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	e := Entry{Kind: KindGit, Name: h.tilde(p), Source: p}
	var more []origin
	section := ""
	eachLine(b, func(l string) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			head := strings.TrimPrefix(l, "[")
			if i := strings.IndexByte(head, ']'); i >= 0 {
				head = head[:i]
			}
			name, _, _ := strings.Cut(strings.TrimSpace(head), " ")
			name, _, _ = strings.Cut(name, "\"")
			section = strings.ToLower(name)
			if i := strings.IndexByte(l, ']'); i >= 0 {
				l = strings.TrimSpace(l[i+1:])
			} else {
				return
			}
		}
		if l == "" || l[0] == '#' || l[0] == ';' {
			return
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return
		}
		key := section + "." + strings.ToLower(strings.TrimSpace(k))
		v = gitValue(strings.TrimSpace(v))
		switch {
		case (section == "include" || section == "includeif") && strings.EqualFold(strings.TrimSpace(k), "path"):
			f := h.pathIn(v, h.dir(p))
			if f == "" {
				return
			}
			e.Files = append(e.Files, f)
			more = append(more, fileOrigin(h, f, depth+1, parseGit))
		case containsFold(gitDirKeys, key):
			if d := h.pathIn(v, ""); d != "" {
				e.Dirs = append(e.Dirs, d)
			}
		case containsFold(gitCommandKeys, key):
			if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
				return
			}
			e.Files = append(e.Files, h.commandFiles(shellWords(strings.TrimPrefix(v, "!")), "")...)
		}
	})
	return []Entry{e}, more
}

// gitValue is a git config value with its quotes and escapes undone and
// a trailing comment dropped.
func gitValue(v string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			in = !in
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case !in && (c == '#' || c == ';'):
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// parseSSH reads an ssh client config file: Include's files (relative
// ones in ~/.ssh, globs matched, a glob's folder named whole) are named
// and read one level further; ProxyCommand, LocalCommand,
// KnownHostsCommand and Match exec name the programs and files they run.
func parseSSH(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	e := Entry{Kind: KindSSH, Name: h.tilde(p), Source: p}
	var more []origin
	dotSSH := h.join(h.home, ".ssh")
	eachLine(b, func(l string) {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			return
		}
		i := strings.IndexAny(l, " \t=")
		if i < 0 {
			return
		}
		key, rest := strings.ToLower(l[:i]), strings.TrimLeft(l[i:], " \t=")
		switch key {
		case "include":
			for _, w := range shellWords(rest) {
				f := h.pathIn(w, dotSSH)
				if f == "" {
					continue
				}
				if !strings.ContainsAny(f, "*?[") {
					e.Files = append(e.Files, f)
					more = append(more, fileOrigin(h, f, depth+1, parseSSH))
					continue
				}
				if strings.ContainsAny(h.base(f), "*?[") && !strings.ContainsAny(h.dir(f), "*?[") {
					e.Dirs = append(e.Dirs, h.dir(f))
				}
				matches, _ := filepath.Glob(f)
				for _, m := range matches {
					if isFile(m) {
						e.Files = append(e.Files, m)
						more = append(more, fileOrigin(h, m, depth+1, parseSSH))
					}
				}
			}
		case "proxycommand", "localcommand", "knownhostscommand":
			if !strings.EqualFold(rest, "none") {
				e.Files = append(e.Files, h.commandFiles(shellWords(rest), "")...)
			}
		case "match":
			w := shellWords(rest)
			for j := 0; j+1 < len(w); j++ {
				if strings.EqualFold(w[j], "exec") {
					e.Files = append(e.Files, h.commandFiles(shellWords(w[j+1]), "")...)
				}
			}
		}
	})
	return []Entry{e}, more
}

// customizeFiles are the modules Python imports at start-up from any
// folder on its path.
var customizeFiles = []string{"usercustomize.py", "sitecustomize.py"}

// parsePth reads a .pth file of the user site-packages: each line that
// is a folder (not a comment, not an import line) puts that folder on
// Python's path, so its usercustomize.py and sitecustomize.py run at
// every start of Python.
func parsePth(h host, p string, _ int, b []byte) ([]Entry, []origin) {
	e := Entry{Kind: KindPython, Name: h.base(p), Source: p}
	site := h.dir(p)
	eachLine(b, func(l string) {
		l = strings.TrimRight(l, " \t")
		if l == "" || l[0] == '#' || strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "import\t") {
			return
		}
		d := h.pathIn(l, site)
		if d == "" {
			return
		}
		for _, f := range customizeFiles {
			e.Files = append(e.Files, h.join(d, f))
		}
	})
	return []Entry{e}, nil
}

// parsePowerShell reads a PowerShell profile: the scripts it dot-sources
// (. path), calls (& path) or imports (Import-Module path), $HOME,
// $env:NAME and $PSScriptRoot expanded, are named and read one level
// further.
func parsePowerShell(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	e := Entry{Kind: KindPowerShell, Name: h.base(p), Source: p}
	var more []origin
	root := strings.NewReplacer("$PSScriptRoot", h.dir(p), "$psscriptroot", h.dir(p))
	eachLine(b, func(l string) {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			return
		}
		for _, c := range psCommands(root.Replace(l)) {
			if len(c) < 2 {
				continue
			}
			switch strings.ToLower(c[0]) {
			case ".", "&", "import-module", "ipmo":
			default:
				continue
			}
			arg := c[1]
			if strings.HasPrefix(arg, "-") && len(c) > 2 {
				arg = c[2]
			}
			f := h.pathIn(arg, h.dir(p))
			if f == "" || !strings.ContainsAny(arg, `/\`) {
				continue
			}
			e.Files = append(e.Files, f)
			if strings.HasSuffix(strings.ToLower(f), ".ps1") {
				more = append(more, fileOrigin(h, f, depth+1, parsePowerShell))
			}
		}
	})
	return []Entry{e}, more
}

// parseStartupItem reads a file in a Windows Startup folder: a shortcut
// names its target and the files in its arguments; any other file runs
// itself.
func parseStartupItem(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	name := h.base(p)
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	e := Entry{Kind: KindStartup, Name: name, Source: p, Files: []string{p}}
	if !strings.HasSuffix(strings.ToLower(p), ".lnk") {
		return []Entry{e}, nil
	}
	target, args, ok := risk.ShellLink(b)
	if !ok {
		return []Entry{e}, nil
	}
	words := append([]string{target}, windowsArgs("x " + args)[1:]...)
	e.Files = append(e.Files, h.commandFiles(words, "")...)
	return []Entry{e}, h.scriptOrigins(e, words, "", depth)
}

// parseTask reads a scheduled task's XML file (UTF-16 as Windows writes
// it, or UTF-8): each Exec action's Command and Arguments, run in its
// WorkingDirectory.
func parseTask(h host, p string, depth int, b []byte) ([]Entry, []origin) {
	s := decodeText(b)
	var more []origin
	e := Entry{Kind: KindTask, Name: strings.TrimPrefix(p, h.taskRoot()), Source: p}
	for {
		i := strings.Index(s, "<Exec>")
		if i < 0 {
			break
		}
		s = s[i+6:]
		j := strings.Index(s, "</Exec>")
		if j < 0 {
			j = len(s)
		}
		ex := s[:j]
		cmd, args, wd := xmlText(ex, "Command"), xmlText(ex, "Arguments"), xmlText(ex, "WorkingDirectory")
		if cmd != "" {
			wdPath := h.pathIn(wd, "")
			words := append([]string{cmd}, windowsArgs("x " + args)[1:]...)
			e.Files = append(e.Files, h.commandFiles(words, wdPath)...)
			more = append(more, h.scriptOrigins(e, words, wdPath, depth)...)
		}
		s = s[j:]
	}
	return []Entry{e}, more
}

// taskRoot is the folder of the scheduled tasks' files, with its
// trailing separator.
func (h host) taskRoot() string {
	return h.join(h.systemRoot(), "System32", "Tasks") + h.sep()
}

func (h host) systemRoot() string {
	if r := h.env("SystemRoot"); r != "" {
		return r
	}
	return `C:\Windows`
}

// xmlText is the text of the first element named name in s, its
// entities undone.
func xmlText(s, name string) string {
	i := strings.Index(s, "<"+name+">")
	if i < 0 {
		return ""
	}
	s = s[i+len(name)+2:]
	j := strings.Index(s, "</"+name+">")
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&apos;", "'").Replace(s[:j]))
}

// decodeText is b as text: UTF-16 when it starts with a byte-order mark
// (or looks like UTF-16 without one), else UTF-8.
func decodeText(b []byte) string {
	le := len(b) >= 2 && b[0] == 0xff && b[1] == 0xfe
	be := len(b) >= 2 && b[0] == 0xfe && b[1] == 0xff
	if !le && !be && len(b) >= 4 && b[1] == 0 && b[3] == 0 {
		le = true
	} else if le || be {
		b = b[2:]
	}
	if !le && !be {
		return string(b)
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		if le {
			u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		} else {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
	}
	return string(utf16.Decode(u))
}

// parseOfficeItem reads a file in Word's or Excel's start-up folder:
// the program opens it, and runs its macros, at every start.
func parseOfficeItem(h host, p string, _ int, _ []byte) ([]Entry, []origin) {
	return []Entry{{Kind: KindOffice, Name: h.base(h.dir(p)) + `\` + h.base(p), Source: p, Files: []string{p}}}, nil
}

// scriptOrigins are the scripts a command line runs through a shell or
// PowerShell (the interpreter's first argument that is not an option,
// or a script run by its own path whose #! line names a shell), read one
// level further as a start-up file is: the files they source are named
// too, as run by the entry e.
func (h host) scriptOrigins(e Entry, args []string, wd string, depth int) []origin {
	if len(args) == 0 {
		return nil
	}
	var parse parser
	switch strings.TrimSuffix(strings.ToLower(h.base(args[0])), ".exe") {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh":
		parse = parseShell
	case "powershell", "pwsh":
		parse = parsePowerShell
	default:
		p := h.program(args[0], wd)
		if p == "" || !shellScript(p) {
			return nil
		}
		return []origin{fileOrigin(h, p, depth+1, as(e, parseShell))}
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			if h.commandFlag(a) {
				return nil
			}
			continue
		}
		if f := h.argFile(a, wd); f != "" {
			return []origin{fileOrigin(h, f, depth+1, as(e, parse))}
		}
		return nil
	}
	return nil
}

// shellScript reports whether the file at p starts with a #! line that
// names a shell.
func shellScript(p string) bool {
	b, err := readHead(p, 128)
	if err != nil || !bytes.HasPrefix(b, []byte("#!")) {
		return false
	}
	line, _, _ := bytes.Cut(b[2:], []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return false
	}
	prog := f[0]
	if strings.HasSuffix(prog, "/env") && len(f) > 1 {
		prog = f[1]
	}
	switch prog[strings.LastIndexByte(prog, '/')+1:] {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh":
		return true
	}
	return false
}

// as is parse with the entries it reads said as e's: a script an entry
// runs is run by that entry, whatever the script is.
func as(e Entry, parse parser) parser {
	return func(h host, p string, depth int, b []byte) ([]Entry, []origin) {
		es, more := parse(h, p, depth, b)
		for i := range es {
			es[i].Kind, es[i].Name = e.Kind, e.Name
		}
		return es, more
	}
}
