package govern

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
)

// What an operator's allow-rule for a program covers: the program, the
// arguments the permit card showed and the folder, nothing the card did
// not show (more arguments only for a program of the argument table, and
// never a session: see risk.KindSessionStart). The tables of what asks anyway (environment variables,
// programs that run any code, arguments that name a program to run) are
// internal/risk's (execrules.go), documented in docs/SECURITY.md.

// ProgramUse is one program a call would start, for allow-rule matching.
type ProgramUse struct {
	Command string
	Args    []string `json:",omitempty"`
	// Cwd is the folder it would run in, absolute, also for a call that
	// names none (the extractor resolves it: internal/app's programsOf),
	// so that the card shows it and a rule made from the card covers
	// only it.
	Cwd string
	// EnvKeys are the environment variables the call sets.
	EnvKeys []string `json:",omitempty"`
}

// RuleRefusal says why no rule may be made for program ("" when one may):
// interpreters, shells and launchers ask every time. It goes by the name;
// Governor.RuleRefusal also by what the file is.
func RuleRefusal(program string) string {
	if why := risk.AsksEveryTimeWhy(program); why != "" {
		return filepath.Base(program) + " " + why + ": Hearth asks every time"
	}
	return ""
}

// RuleRefusal says why no rule may be made for program ("" when one may):
// by its name, and by what the file it names is (a base name as PATH
// finds it, a path as it is; a glob names no one file): a copy of bash
// saved as ~/bin/tool asks every time as bash does.
func (g *Governor) RuleRefusal(program string) string {
	if strings.ContainsAny(program, "*?[") {
		return RuleRefusal(program)
	}
	if why := g.AsksEveryTimeWhy(program, ""); why != "" {
		return filepath.Base(program) + " " + why + ": Hearth asks every time"
	}
	return ""
}

// AsksEveryTimeWhy says why no rule covers command started in the folder
// cwd, by its name or by what its file is ("runs any code it is given",
// "is a copy of bash, which runs any code it is given"), or "" when a
// rule may.
func (g *Governor) AsksEveryTimeWhy(command, cwd string) string {
	if why := risk.AsksEveryTimeWhy(command); why != "" {
		return why
	}
	prog, ok := resolveProgram(command, cwd)
	if !ok {
		return ""
	}
	names, err := g.identities().Names(prog)
	if err != nil {
		return "cannot be read, so Hearth cannot tell which program it is"
	}
	for _, n := range names {
		if why := risk.AsksEveryTimeWhy(n); why != "" {
			return "is a copy of " + n + ", which " + why
		}
	}
	return ""
}

// resolveProgram returns the absolute path of the file exec would start
// for command in the folder cwd (a relative path is from cwd, a base name
// as PATH finds it), and whether there is one.
func resolveProgram(command, cwd string) (string, bool) {
	prog := command
	if strings.ContainsAny(prog, `/\`) && !filepath.IsAbs(prog) && cwd != "" {
		prog = filepath.Join(cwd, prog)
	}
	resolved, err := exec.LookPath(prog)
	if err != nil {
		return command, false
	}
	abs, err := filepath.Abs(resolved)
	if err != nil {
		return command, false
	}
	return abs, true
}

// identities returns the recogniser of the tables' programs: the
// Governor's, or this OS's from the process environment when none was
// given.
func (g *Governor) identities() *risk.Identities {
	g.identitiesOnce.Do(func() {
		if g.Identities == nil {
			g.Identities = risk.NewIdentities(os.Getenv)
		}
	})
	return g.Identities
}

// ruleCovers reports whether r covers running u: the call sets no
// environment variable outside risk.HarmlessEnv; its program is r's
// (resolved the way exec resolves it: a base-name rule matches the
// resolved file's base name, a path or glob rule the resolved absolute
// path) and not one that asks every time, by its name or by what the
// file is (a renamed copy of a shell is the shell); no argument names
// such a program either (`taskset -c 0 bash x.sh`: by its name, or by
// what the file it names is), unless the program's own row of
// risk.ArgTable decides its arguments; its arguments are r's, or, for a
// program with a row in risk.ArgTable by every one of those names, begin
// with r's and none after them asks by the table; for a rule with a cwd
// root, its folder is under that root by real path (a symbolic link in
// the folder leads nowhere else); a narrowed rule (made before rules kept
// arguments) covers the program with no arguments only; tar and unzip
// extract through no symbolic link (extractThroughLink); and the files
// r pinned are the ones the call uses, unchanged (pinsHold). A file that
// cannot be read, so cannot be told, is covered by no rule.
//
// When every other condition holds but a pinned file changed, it returns
// that file's path as changed, for the card to name.
func (g *Governor) ruleCovers(r Rule, u ProgramUse) (ok bool, changed string) {
	ids := g.identities()
	for _, k := range u.EnvKeys {
		if !risk.IsHarmlessEnv(k) {
			return false, ""
		}
	}
	// A base-name rule ("git") covers only a command resolved through
	// PATH, never a path the caller chose ("./git", "C:\\tmp\\git.exe").
	if !strings.ContainsAny(r.Program, `/\`) && strings.ContainsAny(u.Command, `/\`) {
		return false, ""
	}
	if r.Narrowed && len(u.Args) > 0 {
		return false, ""
	}
	prog, resolvedOK := resolveProgram(u.Command, u.Cwd)
	names := []string{u.Command, prog}
	if resolvedOK {
		is, err := ids.Names(prog)
		if err != nil {
			return false, ""
		}
		names = append(names, is...)
	}
	for _, n := range names {
		if risk.AsksEveryTimeWhy(n) != "" {
			return false, ""
		}
	}
	pattern := r.Program
	target := prog
	if !strings.ContainsAny(pattern, `/\`) {
		target = filepath.Base(prog)
	}
	if runtime.GOOS == "windows" {
		pattern, target = strings.ToLower(pattern), strings.ToLower(target)
		if filepath.Ext(pattern) == "" && filepath.Ext(target) == ".exe" {
			target = strings.TrimSuffix(target, ".exe")
		}
	}
	if m, err := filepath.Match(pattern, target); err != nil || !m {
		return false, ""
	}
	if len(u.Args) < len(r.Args) || !slices.Equal(u.Args[:len(r.Args)], r.Args) {
		return false, ""
	}
	for _, name := range names {
		if _, asks := risk.ExtraArgAsks(name, u.Args, len(r.Args)); asks {
			return false, ""
		}
	}
	if !slices.ContainsFunc(names, risk.RunsOthers) {
		if _, why := g.ArgRunnerWhy(u.Args, u.Cwd); why != "" {
			return false, ""
		}
	}
	if r.CwdRoot != "" {
		if u.Cwd == "" {
			return false, ""
		}
		root := r.CwdRoot
		if r.Pins != nil && r.Pins.Folder != "" {
			root = r.Pins.Folder
		} else {
			root = realDir(root)
		}
		rel, err := filepath.Rel(foldPath(root), foldPath(realDir(u.Cwd)))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return false, ""
		}
	}
	if link := extractThroughLink(names, u.Args, u.Cwd); link != "" {
		return false, ""
	}
	if f, held := g.pinsHold(r, u, prog); !held {
		return false, f
	}
	return true, ""
}

// ArgRunnerWhy returns an argument of a call in cwd that names a program
// that asks every time, by its name (`taskset -c 0 bash x.sh`) or by what
// the file it names is (a path, or a name PATH finds: a copy of bash
// saved as ./tool), and why that program asks; "" when none does. A
// launcher counts only where the call would run it (risk.ArgRunnerCounts).
func (g *Governor) ArgRunnerWhy(args []string, cwd string) (string, string) {
	if a, why := risk.ArgRunnerWhy(args); why != "" {
		return a, why
	}
	for _, a := range args {
		for _, c := range risk.ArgFileCandidates(a) {
			if strings.HasPrefix(c, "-") {
				continue
			}
			prog, ok := resolveProgram(c, cwd)
			if !ok {
				continue
			}
			names, err := g.identities().Names(prog)
			if err != nil {
				return a, "cannot be read, so Hearth cannot tell which program it is"
			}
			for _, n := range names {
				if why := risk.AsksEveryTimeWhy(n); why != "" && risk.ArgRunnerCounts(a, c, why) {
					return a, "is a copy of " + n + ", which " + why
				}
			}
		}
	}
	return "", ""
}

// anyRuleCovers reports whether one of rules covers u, or else the file
// a rule pinned that changed (the first such), for the card.
func (g *Governor) anyRuleCovers(rules []Rule, u ProgramUse) (bool, string) {
	changed := ""
	for _, r := range rules {
		ok, c := g.ruleCovers(r, u)
		if ok {
			return true, ""
		}
		if changed == "" {
			changed = c
		}
	}
	return false, changed
}
