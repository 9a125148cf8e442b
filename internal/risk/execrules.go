package risk

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// What an operator's "always allow" rule for a program never covers. A
// rule covers the program and the arguments the permit card showed, in a
// folder; a call under it still asks when it sets an environment variable
// outside HarmlessEnv, when the program runs any code it is given
// (AsksEveryTime), or when it adds arguments after the rule's own: for a
// program in ArgTable, one the table lists (it names a program to run,
// changes the program's settings or names a file to write) or, for git,
// another place to send to or fetch from (gitPlaceAsks); for any other
// program, any at all, as the card showed none of them (ExactOnly names
// the programs where that matters most). The tables are documented in
// docs/SECURITY.md, made from here (ExecRulesMarkdown) and held equal to
// it by a test.

// HarmlessEnv are the environment variables a call may set and still be
// covered by a rule: they change how output looks, never what runs. A
// name ending in "*" stands for every name it begins.
var HarmlessEnv = []string{"LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR",
	"CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES"}

// IsHarmlessEnv reports whether setting the variable name leaves a call
// covered by a rule (compared without case, as Windows does).
func IsHarmlessEnv(name string) bool {
	up := strings.ToUpper(name)
	for _, h := range HarmlessEnv {
		if p, ok := strings.CutSuffix(h, "*"); ok {
			if strings.HasPrefix(up, p) {
				return true
			}
		} else if up == h {
			return true
		}
	}
	return false
}

// AsksEveryTime are the programs no rule covers: interpreters and shells
// run any code they are given, and launchers run the program their
// arguments name, or start one that outlives Hearth (tmux, screen, the
// schedulers). A program is named by its base name without case, without
// ".exe" and without a version ("python3.12" is python).
var AsksEveryTime = []ProgramGroup{
	{Why: WhyRunsCode, Programs: []string{"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox",
		"cmd", "powershell", "pwsh", "wsl", "python", "pythonw", "py", "pyw", "ipython", "node", "deno", "bun", "perl", "ruby", "irb",
		"php", "lua", "luajit", "tclsh", "wish", "rscript", "julia", "java", "jshell", "groovy", "awk", "gawk", "mawk", "nawk",
		"osascript", "cscript", "wscript", "mshta", "expect"}},
	{Why: "runs the program its arguments name", Programs: []string{"env", "sudo", "doas", "pkexec", "su", "runas", "nohup",
		"setsid", "timeout", "nice", "ionice", "stdbuf", "time", "watch", "xargs", "parallel", "npx", "pnpx", "bunx", "uvx",
		"pipx", "chroot", "unshare", "nsenter", "strace", "ltrace", "gdb", "script", "firejail", "bwrap", "xvfb-run",
		"taskset", "flock", "prlimit", "setpriv", "chrt", "sg", "newgrp", "runuser", "numactl", "cgexec", "setarch", "linux32",
		"linux64", "systemd-inhibit", "dbus-run-session", "valgrind", "faketime", "torsocks", "proxychains", "fakeroot",
		"eatmydata", "schroot", "catchsegv", "ssh-agent", "start", "rundll32", "regsvr32", "wmic", "xdg-open", "open"}},
	{Why: "starts programs that keep running after Hearth stops them", Programs: []string{"tmux", "screen", "byobu",
		"at", "batch", "crontab", "systemd-run", "systemctl", "launchctl", "schtasks", "sc"}},
}

// WhyRunsCode is why shells and interpreters ask every time: a program
// whose arguments name one by its bare name may well run it, so such an
// argument puts the call under no rule wherever it stands
// (ArgRunnerCounts).
const WhyRunsCode = "runs any code it is given"

// ProgramGroup is programs that share a reason.
type ProgramGroup struct {
	Why      string
	Programs []string
}

// ExactOnly are programs whose further arguments name a file to write, a
// command to run or files to send, so a rule covers only the exact call
// the card showed.
// Every program without a row in ArgTable is covered only so; these are
// named for the documentation and the card, and a test keeps them out of
// ArgTable.
var ExactOnly = []ProgramGroup{
	{Why: "writes where its arguments say", Programs: []string{"cp", "mv", "ln", "install", "tee", "dd", "chmod", "chown",
		"chgrp", "touch", "mkdir", "rm", "unzip", "tar", "bsdtar", "7z", "7za", "gzip", "gunzip", "patch", "split", "csplit",
		"robocopy", "xcopy", "rsync", "scp"}},
	{Why: "runs the commands its script holds, and writes the files it names", Programs: []string{"sed", "gsed", "ed", "ex"}},
	{Why: "can send your files or save over them, depending on its arguments", Programs: []string{"curl", "wget"}},
	{Why: "runs on the other computer whatever follows the computer's name", Programs: []string{"ssh"}},
}

// ExactOnlyWhy says why a rule for command covers only the exact call
// the card showed ("writes where its arguments say"), or "" when it is
// not one of ExactOnly.
func ExactOnlyWhy(command string) string {
	name := ProgramName(command)
	for _, g := range ExactOnly {
		if slices.Contains(g.Programs, name) {
			return g.Why
		}
	}
	return ""
}

// ArgRule is the arguments of some programs that ask even under a rule:
// they set the program's configuration, name a program for it to run, or
// write a file of the caller's choice. An entry is matched by its shape:
//
//   - "-x" (one letter): an argument that begins with one "-" and holds
//     the letter anywhere ("-x", "-vx", "-xVALUE"); in a WordFlags row,
//     "-x", "--x", with or without "=…", only;
//   - "--name": "--name", "--name=…", or an abbreviation of it of at
//     least two letters ("--na"), as many programs accept;
//   - "-name": "-name", "--name", with or without "=…";
//   - "word…": an argument that begins with word (any case);
//   - "…=…": an argument that is not an option and holds "=" (a make
//     variable);
//   - "word": exactly that argument (any case).
type ArgRule struct {
	Programs []string
	Ask      []string
	// WordFlags: the programs' flags are words after one dash (Go's
	// `-count=1`, `-o file`), so a one-letter entry such as `-o` is that
	// flag only, never a letter inside a cluster of others.
	WordFlags bool
}

// ArgTable is the per-program table of arguments that ask.
var ArgTable = []ArgRule{
	{Programs: []string{"git"}, Ask: []string{"-c", "--config-env", "--exec-path", "-C", "--git-dir", "--work-tree",
		"--upload-pack", "-u", "--receive-pack", "--exec", "-x", "--ext-diff", "--extcmd", "--textconv", "-O",
		"--open-files-in-pager", "--output", "--template", "--separate-git-dir", "--config", "--remote",
		"config", "difftool", "mergetool", "submodule", "bisect", "filter-branch", "daemon", "instaweb", "credential",
		"hook", "ext::…", "fd::…", "archive", "bundle", "format-patch", "apply", "am", "worktree", "--prefix", "merge-file"}},
	{Programs: []string{"hg"}, Ask: []string{"--config", "--cwd", "-R", "--repository", "--debugger"}},
	{Programs: []string{"sftp"}, Ask: []string{"-o", "-F", "-S", "-J", "-D", "-b"}},
	{Programs: []string{"find"}, Ask: []string{"-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf",
		"-fls", "-delete"}},
	{Programs: []string{"rg"}, Ask: []string{"--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z"}},
	{Programs: []string{"fd", "fdfind"}, Ask: []string{"-x", "--exec", "-X", "--exec-batch"}},
	{Programs: []string{"sort"}, Ask: []string{"--compress-program", "-o", "--output", "-T", "--temporary-directory"}},
	{Programs: []string{"zip"}, Ask: []string{"-TT", "--unzip-command", "-O", "--output-file"}},
	{Programs: []string{"npm", "pnpm", "yarn"}, Ask: []string{"exec", "x", "dlx", "explore", "init", "create",
		"--script-shell", "--node-options", "--userconfig", "--globalconfig", "--prefix", "--git", "--shell",
		"--editor", "--browser", "--viewer", "--call", "-c", "-C", "--dir", "--cwd"}},
	{Programs: []string{"go"}, Ask: []string{"-exec", "-toolexec", "-overlay", "-modfile", "-C", "-o", "generate", "tool"}, WordFlags: true},
	{Programs: []string{"cargo"}, Ask: []string{"--config", "-Z", "--manifest-path", "-C", "--target-dir", "--out-dir",
		"--artifact-dir"}},
	{Programs: []string{"make", "gmake", "nmake", "mingw32-make"}, Ask: []string{"-f", "--file", "--makefile", "-C",
		"--directory", "-I", "--include-dir", "-E", "--eval", "…=…"}},
	{Programs: []string{"vim", "nvim", "vi", "gvim"}, Ask: []string{"-c", "--cmd", "-S", "+…"}},
	{Programs: []string{"reg"}, Ask: []string{"add", "import", "load", "restore", "copy"}},
}

// ProgramName is how the tables name a program: the base name of command
// (either slash), without case, ".exe" and a trailing version (unless the
// tables name it with its digits, as rundll32).
func ProgramName(command string) string {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(command, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	if isTableName(base) {
		return base
	}
	if trimmed := strings.TrimRight(base, "0123456789.-"); trimmed != "" {
		base = trimmed
	}
	return base
}

// tableNames are the program names the tables know (AsksEveryTime,
// ExactOnly and ArgTable), made once: the tables do not change.
var tableNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, g := range slices.Concat(AsksEveryTime, ExactOnly) {
		for _, p := range g.Programs {
			names[p] = true
		}
	}
	for _, r := range ArgTable {
		for _, p := range r.Programs {
			names[p] = true
		}
	}
	return names
})

// isTableName reports whether the tables name a program name.
func isTableName(name string) bool { return tableNames()[name] }

// AsksEveryTimeWhy says why no rule covers command ("runs any code it is
// given"), or "" when a rule may.
func AsksEveryTimeWhy(command string) string {
	name := ProgramName(command)
	for _, g := range AsksEveryTime {
		if slices.Contains(g.Programs, name) {
			return g.Why
		}
	}
	return ""
}

// RunsOthers reports whether command has rows in ArgTable: a program that
// can run others or change what it runs, which a rule covers only as far
// as the card showed.
func RunsOthers(command string) bool {
	_, ok := argRule(ProgramName(command))
	return ok
}

func argRule(name string) (ArgRule, bool) {
	for _, r := range ArgTable {
		if slices.Contains(r.Programs, name) {
			return r, true
		}
	}
	return ArgRule{}, false
}

// ArgAsks returns the first of args (the arguments after a rule's own)
// that asks for command by ArgTable, or false.
func ArgAsks(command string, args []string) (string, bool) {
	r, ok := argRule(ProgramName(command))
	if !ok {
		return "", false
	}
	for _, a := range args {
		for _, e := range r.Ask {
			if argMatches(e, a, r.WordFlags) {
				return a, true
			}
		}
	}
	return "", false
}

// ExtraArgAsks returns the first argument a call adds after a rule's own
// (args from index shown on) that makes it ask, or false: for a program
// with a row in ArgTable, the first the table lists, or, for git, one
// that names another place than a plain remote or branch name
// (gitPlaceAsks); for any other program, the first of them, as a rule
// covers only the call the card showed.
func ExtraArgAsks(command string, args []string, shown int) (string, bool) {
	if shown > len(args) {
		shown = len(args)
	}
	rest := args[shown:]
	if len(rest) == 0 {
		return "", false
	}
	name := ProgramName(command)
	if _, ok := argRule(name); !ok {
		return rest[0], true
	}
	if a, ok := ArgAsks(command, rest); ok {
		return a, true
	}
	if name == "git" {
		return gitPlaceAsks(args, shown)
	}
	return "", false
}

// GitPlaceSubcommands are git's subcommands that send to or fetch from
// another repository or address, which their arguments name.
var GitPlaceSubcommands = []string{"push", "fetch", "pull", "ls-remote", "clone", "remote", "send-email", "request-pull"}

// gitOptionsWithValue are git's options before the subcommand that take
// the next argument as their value.
var gitOptionsWithValue = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--list-cmds", "--attr-source"}

// gitPlaceAsks returns the first of args from index shown on that, in a
// git call whose subcommand is one of GitPlaceSubcommands, could name
// another place than the card showed, or false. Where an argument is the
// repository cannot be told from its shape (host:path is also a refspec's
// shape), so every argument and every option's "=value" after the
// subcommand must be a plain name (origin, main, feature/x, v1.2); a
// URL, host:path, user@host, a path (./x, ../x, /x, ~/x, C:\x) or a
// \\server share asks. send-email asks for any argument the card did not
// show: its arguments are the files it mails.
func gitPlaceAsks(args []string, shown int) (string, bool) {
	sub := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			sub = i
			break
		}
		if slices.Contains(gitOptionsWithValue, a) {
			i++
		}
	}
	if sub < 0 || !slices.Contains(GitPlaceSubcommands, strings.ToLower(args[sub])) {
		return "", false
	}
	mails := strings.EqualFold(args[sub], "send-email")
	for i := max(sub+1, shown); i < len(args); i++ {
		a := args[i]
		if mails {
			return a, true
		}
		v := a
		if strings.HasPrefix(a, "-") {
			_, val, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			v = val
		}
		if !plainGitName(v) {
			return a, true
		}
	}
	return "", false
}

// plainGitName reports whether v is a plain remote, branch or tag name
// (origin, main, feature/x, v1.2): never a URL, host:path, user@host, a
// path or a share.
func plainGitName(v string) bool {
	if v == "" || strings.ContainsAny(v, ":\\@~") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "/") {
		return false
	}
	return true
}

// argMatches reports whether the argument a matches the table entry e
// (shapes in ArgRule); words says the program's flags are words after
// one dash (ArgRule.WordFlags).
func argMatches(e, a string, words bool) bool {
	switch {
	case words && strings.HasPrefix(e, "-") && !strings.HasPrefix(e, "--"):
		name, _, _ := strings.Cut(a, "=")
		return name == e || name == "-"+e
	case e == "…=…":
		return !strings.HasPrefix(a, "-") && strings.Contains(a, "=")
	case strings.HasSuffix(e, "…"):
		return strings.HasPrefix(strings.ToLower(a), strings.ToLower(strings.TrimSuffix(e, "…")))
	case strings.HasPrefix(e, "--"):
		if !strings.HasPrefix(a, "--") {
			return false
		}
		name, _, _ := strings.Cut(a, "=")
		return name == e || (len(name) >= 4 && strings.HasPrefix(e, name))
	case strings.HasPrefix(e, "-") && len(e) == 2:
		return strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], rune(e[1]))
	case strings.HasPrefix(e, "-"):
		name, _, _ := strings.Cut(a, "=")
		return name == e || name == "-"+e
	}
	return strings.EqualFold(a, e)
}

// ExecRulesMarkdown is the documentation of what a rule never covers, as
// docs/SECURITY.md shows it.
func ExecRulesMarkdown() string {
	var b strings.Builder
	b.WriteString("Environment variables a covered call may set (any other asks): `" + strings.Join(HarmlessEnv, "`, `") + "`.\n\n")
	b.WriteString("| programs no rule covers | why |\n|---|---|\n")
	for _, g := range AsksEveryTime {
		fmt.Fprintf(&b, "| `%s` | %s |\n", strings.Join(g.Programs, "` `"), g.Why)
	}
	b.WriteString("\nA rule for any program without a row in the argument table below covers only the exact call the card showed: " +
		"a call that adds any argument asks. These programs in particular:\n\n")
	b.WriteString("| programs a rule covers only exactly | why |\n|---|---|\n")
	for _, g := range ExactOnly {
		fmt.Fprintf(&b, "| `%s` | %s |\n", strings.Join(g.Programs, "` `"), g.Why)
	}
	b.WriteString("\n| program | arguments after the rule's that ask (any other may follow) |\n|---|---|\n")
	for _, r := range ArgTable {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", strings.Join(r.Programs, "` `"), strings.Join(r.Ask, "` `"))
	}
	b.WriteString("\nFor `git " + strings.Join(GitPlaceSubcommands, "`, `git ") + "`, which send to or fetch from another place: " +
		"an argument after the subcommand that the card did not show, or an option's `=value`, asks unless it is a plain remote, " +
		"branch or tag name (`origin`, `main`, `feature/x`). A URL, `host:path`, `user@host`, a path or a `\\\\server` share asks " +
		"(the repository cannot be told from a refspec by its shape, so `main:release` asks too); for `git send-email` any " +
		"argument the card did not show asks.\n")
	b.WriteString("\nWhat a rule pins:\n\n")
	b.WriteString(RulePinsMarkdown())
	return b.String()
}
