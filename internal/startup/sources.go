package startup

import (
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
)

// OS says on which systems a source is read.
type OS string

// The systems.
const (
	OSLinux   OS = "Linux"
	OSWindows OS = "Windows"
	OSBoth    OS = "Linux and Windows"
)

// Source is one place the index reads entries from. The table of them
// (Sources) is both what the index reads and what docs/SECURITY.md
// shows (Markdown).
type Source struct {
	OS   OS
	Kind Kind
	// Where the entries are, and what of each is read, for the docs.
	Where, Reads string
	// origins are where the entries are now, on h.
	origins func(h host) []origin
}

// scriptsFurther says how a script an entry runs is read.
const scriptsFurther = "; a script it runs through a shell or PowerShell (or by its path, with a `#!` line naming a shell) is read one level further as a start-up file is"

// Sources are the places the index reads, in the order it reads them.
var Sources = []Source{
	{OS: OSLinux, Kind: KindAutostart,
		Where:   "`~/.config/autostart/*.desktop` (`$XDG_CONFIG_HOME`), `/etc/xdg/autostart/*.desktop`",
		Reads:   "`Exec=` (split by the Desktop Entry quoting, run in `Path=`) and `TryExec=`: the program and every file in its arguments; the card names the entry by its `Name=`" + scriptsFurther,
		origins: autostartOrigins},
	{OS: OSLinux, Kind: KindUserUnit,
		Where:   "systemd user units in `~/.config/systemd/user` and `~/.local/share/systemd/user`, their `.d` drop-ins and `.wants`/`.requires` links",
		Reads:   "`ExecStart=`, `ExecStartPre=`, `ExecStartPost=`, `ExecCondition=`, `ExecReload=`, `ExecStop=`, `ExecStopPost=` (`%h` resolved, run in `WorkingDirectory=`): the program and every file in its arguments; `EnvironmentFile=`" + scriptsFurther,
		origins: unitOrigins},
	{OS: OSBoth, Kind: KindShell,
		Where:   "the shells' start-up files in the home: `" + strings.Join(risk.ShellFiles, "` `") + "`",
		Reads:   "the files they `source` or `.` (`~`, `$HOME` and other set variables expanded; a relative name in the home), read one level further the same way; a command run by its path, and the files in its arguments",
		origins: shellOrigins},
	{OS: OSBoth, Kind: KindGit,
		Where:   "git's user settings: `~/.gitconfig`, `~/.config/git/config`",
		Reads:   "`[include]` and `[includeIf …]` `path =` (relative to the including file, `~` expanded), read one level further; `core.hooksPath` (the whole folder); the program and files of `" + strings.Join(gitCommandKeys, "`, `") + "`",
		origins: gitOrigins},
	{OS: OSBoth, Kind: KindSSH,
		Where:   "ssh's user settings: `~/.ssh/config`",
		Reads:   "`Include` (relative to `~/.ssh`; a glob names the files it matches and, for `folder/*`, the whole folder), read one level further; the program and files of `ProxyCommand`, `LocalCommand`, `KnownHostsCommand` and `Match exec`",
		origins: sshOrigins},
	{OS: OSBoth, Kind: KindPython,
		Where:   "Python's user site-packages: `~/.local/lib/python*/site-packages` on Linux, `%APPDATA%\\Python\\Python*\\site-packages` on Windows",
		Reads:   "the site folder's own `usercustomize.py` and `sitecustomize.py`; each `.pth` file's folder lines (not its `import` lines): the `usercustomize.py` and `sitecustomize.py` of every folder it puts on Python's path (an editable install's project folder)",
		origins: pythonOrigins},
	{OS: OSWindows, Kind: KindRun,
		Where:   "`Run` and `RunOnce` of `HKCU` and `HKLM` (`Software\\Microsoft\\Windows\\CurrentVersion`, HKLM's 32-bit view, and the policies' `Explorer\\Run`)",
		Reads:   "each value's command line (environment variables expanded, split as Windows splits it): the program and every file in its arguments; the card names the entry by the value's name" + scriptsFurther,
		origins: runOrigins},
	{OS: OSWindows, Kind: KindStartup,
		Where:   "the Startup folders, yours and all users', where the known folders say they are at each look (a folder moved while Hearth runs counts)",
		Reads:   "each file; a shortcut's (`.lnk`) target and every file in its arguments" + scriptsFurther,
		origins: startupFolderOrigins},
	{OS: OSWindows, Kind: KindTask,
		Where:   "the scheduled tasks' files in `%SystemRoot%\\System32\\Tasks`, where this user may read them",
		Reads:   "each `<Exec>` action's `Command` and `Arguments` (run in its `WorkingDirectory`): the program and every file in its arguments" + scriptsFurther,
		origins: taskOrigins},
	{OS: OSWindows, Kind: KindService,
		Where:   "the services in `HKLM\\SYSTEM\\CurrentControlSet\\Services`, where readable (read again every minute: a service can only be added by an administrator)",
		Reads:   "`ImagePath` (the program and every file in its arguments) and `Parameters\\ServiceDll`",
		origins: serviceOrigins},
	{OS: OSWindows, Kind: KindPowerShell,
		Where:   "the PowerShell profiles (`" + strings.Join(psProfiles, "`, `") + "`) in Documents' `WindowsPowerShell` and `PowerShell` folders (Documents where the known folder says it is) and in PowerShell's own folders",
		Reads:   "the scripts they dot-source (`. path`), call (`& path`) or `Import-Module` by path (`$HOME`, `$env:NAME`, `$PSScriptRoot` expanded), read one level further",
		origins: powerShellOrigins},
	{OS: OSWindows, Kind: KindOffice,
		Where:   "Excel's `XLSTART` and Word's `STARTUP` in `%APPDATA%\\Microsoft`; Excel's add-ins: the `OPEN`, `OPEN1` … values of `HKCU\\Software\\Microsoft\\Office\\<version>\\Excel\\Options`",
		Reads:   "each file in the folders; each add-in's file",
		origins: officeOrigins},
}

// Markdown is the table of Sources for docs/SECURITY.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| on | what starts by itself | where Hearth reads it | the files it names |\n|---|---|---|---|\n")
	for _, s := range Sources {
		b.WriteString("| " + string(s.OS) + " | " + kindWords[s.Kind] + " | " + s.Where + " | " + s.Reads + " |\n")
	}
	return b.String()
}

// kindWords say each kind in a few words, for the docs.
var kindWords = map[Kind]string{
	KindAutostart:  "autostart entries (at sign-in)",
	KindUserUnit:   "systemd user services",
	KindShell:      "shell start-up files (every terminal)",
	KindGit:        "git's settings (every git command)",
	KindSSH:        "ssh's settings (every connection)",
	KindPython:     "Python's start-up (every `python`)",
	KindRun:        "sign-in entries of the registry",
	KindStartup:    "Startup folders (at sign-in)",
	KindTask:       "scheduled tasks",
	KindService:    "services",
	KindPowerShell: "PowerShell profiles (every PowerShell)",
	KindOffice:     "Word's and Excel's start-up files and add-ins",
}

func autostartOrigins(h host) []origin {
	cfg := h.env("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = h.join(h.home, ".config")
	}
	var out []origin
	for _, d := range []string{h.join(cfg, "autostart"), "/etc/xdg/autostart"} {
		if d != "" {
			out = append(out, filesIn(h, d, parseDesktop, ".desktop"))
		}
	}
	return out
}

// unitSuffixes are the unit files a user's systemd runs something from.
var unitSuffixes = []string{".service", ".socket", ".timer", ".path", ".mount"}

func unitOrigins(h host) []origin {
	cfg := h.env("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = h.join(h.home, ".config")
	}
	data := h.env("XDG_DATA_HOME")
	if data == "" {
		data = h.join(h.home, ".local", "share")
	}
	var out []origin
	for _, d := range []string{h.join(cfg, "systemd", "user"), h.join(data, "systemd", "user")} {
		if d == "" {
			continue
		}
		var unitDir func(p string, depth int) origin
		unitDir = func(p string, depth int) origin {
			return dirOrigin(h, p, 0, func(name string, dir bool) (origin, bool) {
				switch {
				case dir && depth == 0 && (strings.HasSuffix(name, ".d") || strings.HasSuffix(name, ".wants") || strings.HasSuffix(name, ".requires")):
					return unitDir(h.join(p, name), 1), true
				case !dir && (hasSuffix(name, unitSuffixes) || depth == 1 && strings.HasSuffix(name, ".conf")):
					return fileOrigin(h, h.join(p, name), 0, parseUnit), true
				}
				return origin{}, false
			})
		}
		out = append(out, unitDir(d, 0))
	}
	return out
}

func shellOrigins(h host) []origin {
	if h.home == "" {
		return nil
	}
	out := make([]origin, 0, len(risk.ShellFiles))
	for _, f := range risk.ShellFiles {
		out = append(out, fileOrigin(h, h.join(h.home, f), 0, parseShell))
	}
	return out
}

func gitOrigins(h host) []origin {
	if h.home == "" {
		return nil
	}
	cfg := h.env("XDG_CONFIG_HOME")
	if cfg == "" || h.windows {
		cfg = h.join(h.home, ".config")
	}
	return []origin{fileOrigin(h, h.join(h.home, ".gitconfig"), 0, parseGit), fileOrigin(h, h.join(cfg, "git", "config"), 0, parseGit)}
}

func sshOrigins(h host) []origin {
	if h.home == "" {
		return nil
	}
	return []origin{fileOrigin(h, h.join(h.home, ".ssh", "config"), 0, parseSSH)}
}

// pythonOrigins are the user site-packages folders: Python's own
// lib/pythonX.Y (Linux) or PythonXY (Windows) folders, each read for
// its site-packages.
func pythonOrigins(h host) []origin {
	base := h.join(h.home, ".local", "lib")
	prefix := "python"
	if h.windows {
		base = h.join(h.env("APPDATA"), "Python")
		prefix = "Python"
	}
	if base == "" {
		return nil
	}
	return []origin{dirOrigin(h, base, 0, func(name string, dir bool) (origin, bool) {
		if !dir || !strings.HasPrefix(name, prefix) {
			return origin{}, false
		}
		site := h.join(base, name, "site-packages")
		o := filesIn(h, site, parsePth, ".pth")
		read := o.read
		o.read = func() ([]Entry, []origin) {
			_, more := read()
			own := Entry{Kind: KindPython, Name: "the user site-packages", Source: site}
			for _, f := range customizeFiles {
				own.Files = append(own.Files, h.join(site, f))
			}
			return []Entry{own}, more
		}
		return o, true
	})}
}

func startupFolderOrigins(h host) []origin {
	var out []origin
	for _, k := range []string{"FOLDERID_Startup", "FOLDERID_CommonStartup"} {
		if d := h.env(k); d != "" {
			out = append(out, filesIn(h, d, parseStartupItem))
		}
	}
	return out
}

func taskOrigins(h host) []origin {
	var tasks func(p string) origin
	tasks = func(p string) origin {
		return dirOrigin(h, p, 0, func(name string, dir bool) (origin, bool) {
			if dir {
				return tasks(h.join(p, name)), true
			}
			return fileOrigin(h, h.join(p, name), 0, parseTask), true
		})
	}
	return []origin{tasks(strings.TrimSuffix(h.taskRoot(), h.sep()))}
}

// psProfiles are the names of PowerShell's profile scripts.
var psProfiles = []string{"profile.ps1", "Microsoft.PowerShell_profile.ps1", "Microsoft.PowerShellISE_profile.ps1", "Microsoft.VSCode_profile.ps1"}

func powerShellOrigins(h host) []origin {
	var dirs []string
	for _, docs := range []string{h.env("FOLDERID_Documents"), h.join(h.home, "Documents"), h.join(h.env("OneDrive"), "Documents")} {
		if docs != "" {
			dirs = append(dirs, h.join(docs, "WindowsPowerShell"), h.join(docs, "PowerShell"))
		}
	}
	dirs = append(dirs, h.join(h.systemRoot(), "System32", "WindowsPowerShell", "v1.0"))
	if pf := h.env("ProgramFiles"); pf != "" {
		dirs = append(dirs, h.join(pf, "PowerShell", "7"))
	}
	var out []origin
	for _, d := range dirs {
		for _, f := range psProfiles {
			out = append(out, fileOrigin(h, h.join(d, f), 0, parsePowerShell))
		}
	}
	return out
}

func officeOrigins(h host) []origin {
	var out []origin
	if app := h.env("APPDATA"); app != "" {
		out = append(out, filesIn(h, h.join(app, "Microsoft", "Excel", "XLSTART"), parseOfficeItem),
			filesIn(h, h.join(app, "Microsoft", "Word", "STARTUP"), parseOfficeItem))
	}
	return append(out, excelAddinOrigins(h)...)
}
