package risk

import (
	"slices"
	"strings"
)

// What an operator's allow-rule pins: the card showed a program, its
// arguments and a folder, and the rule covers exactly what the card
// showed — the program's file, the files its arguments named, each by
// its real path and its content (SHA-256) when the operator approved —
// in that folder by its real path. A call whose pinned file changed
// since asks again, and the card says which file changed. A build
// program's rule pins nothing: it builds and tests the code of its
// folder, which changes with every edit, so it trusts the folder.
// internal/govern (rulepins.go) takes and checks the pins.

// BuildPrograms are the programs whose rule trusts its folder and pins
// nothing: the code they build, test or run (Makefile, package.json,
// go.mod, Cargo.toml and the sources) is the folder's.
var BuildPrograms = []string{"make", "gmake", "nmake", "mingw32-make", "npm", "pnpm", "yarn", "go", "cargo"}

// TrustsFolder reports whether a rule for command pins nothing and trusts
// its folder (BuildPrograms).
func TrustsFolder(command string) bool {
	return slices.Contains(BuildPrograms, ProgramName(command))
}

// ArgFileCandidates are the texts of an argument that may name a file: the
// argument itself and, for an option, its value after "=" ("--file=x.sh").
func ArgFileCandidates(arg string) []string {
	if arg == "" {
		return nil
	}
	out := []string{arg}
	if strings.HasPrefix(arg, "-") {
		if _, v, ok := strings.Cut(arg, "="); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// ArgRunnerWhy returns the first of args that names, by its name, a
// program that asks every time in a place where the call would run it
// (ArgRunnerCounts: `taskset -c 0 bash x.sh`, `flock f sh -c …`), and why
// that program asks; "" when none does. An argument counts by its first
// word (`bash x.sh` given as one argument) and by an option's value
// (`--shell=bash`). A rule then covers the call no more than that
// program.
func ArgRunnerWhy(args []string) (string, string) {
	for _, a := range args {
		for _, c := range ArgFileCandidates(a) {
			first, _, _ := strings.Cut(strings.TrimSpace(c), " ")
			if first == "" {
				continue
			}
			if why := AsksEveryTimeWhy(first); why != "" && ArgRunnerCounts(a, c, why) {
				return a, why
			}
		}
	}
	return "", ""
}

// ArgRunnerCounts reports whether candidate (one of ArgFileCandidates(arg))
// naming a program that asks every time for why puts the call under no
// rule. A shell or an interpreter (WhyRunsCode) always does: any program
// may hand its arguments to one. A launcher, a scheduler or a terminal
// multiplexer does only where the call would run it — as the first word
// of a command string (`"env bash"`), as an option's value (`--exec=env`)
// or as a path to the file (`./tool`, `/usr/bin/env`) — never as a bare
// word the program merely prints or matches (`echo start`, `grep time`):
// the words start, open, time and env are common in text.
func ArgRunnerCounts(arg, candidate, why string) bool {
	if why == WhyRunsCode {
		return true
	}
	bare := candidate == arg && !strings.HasPrefix(arg, "-") && !strings.ContainsAny(arg, " \t/\\")
	return !bare
}

// RulePinsMarkdown is the table of what a rule pins, as docs/SECURITY.md
// shows it.
func RulePinsMarkdown() string {
	var b strings.Builder
	b.WriteString("| a rule for | pins (a change asks again, naming the file) |\n|---|---|\n")
	b.WriteString("| `" + strings.Join(BuildPrograms, "` `") + "` | nothing: it builds, tests and runs the code of its folder, which changes with every edit, so the rule trusts that folder (by its real path) |\n")
	b.WriteString("| any other program | the program's file, and every argument the card showed that names an existing file (a script, an archive, a patch, an `.ahk`; an option's `=value` too), each by its real path and SHA-256 when the operator approved; the folder by its real path |\n")
	b.WriteString("\nA call whose arguments name a program that asks every time — by its name (`taskset -c 0 bash x.sh`, " +
		"`flock f sh -c …`) or by what the file is (a copy of bash under another name) — asks as that program: no rule covers it. " +
		"A launcher counts only where the call would run it (a command string's first word, an option's value, a path to it), " +
		"so a rule for `echo start` may be made; a shell or interpreter counts as any argument. " +
		"A rule made before rules pinned files pins nothing, so a call under it whose arguments name an existing file asks. " +
		"`tar` and `unzip` calls that would extract through a symbolic link in the folder ask.\n")
	return b.String()
}
