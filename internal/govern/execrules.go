package govern

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
)

// What an operator's allow-rule for a program covers: the program, the
// arguments the permit card showed and the folder, nothing the card did
// not show. The tables of what asks anyway (environment variables,
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
// interpreters, shells and launchers ask every time.
func RuleRefusal(program string) string {
	if why := risk.AsksEveryTimeWhy(program); why != "" {
		return filepath.Base(program) + " " + why + ": Hearth asks every time"
	}
	return ""
}

// ruleAllows reports whether r allows running u: the call sets no
// environment variable outside risk.HarmlessEnv; its program is r's
// (resolved the way exec resolves it: a base-name rule matches the
// resolved file's base name, a path or glob rule the resolved absolute
// path) and not one that asks every time; its arguments begin with r's
// and none after them asks by risk.ArgTable; and, for a rule with a cwd
// root, it names a cwd under that root.
func ruleAllows(r Rule, u ProgramUse) bool {
	for _, k := range u.EnvKeys {
		if !risk.IsHarmlessEnv(k) {
			return false
		}
	}
	// A base-name rule ("git") covers only a command resolved through
	// PATH, never a path the caller chose ("./git", "C:\\tmp\\git.exe").
	if !strings.ContainsAny(r.Program, `/\`) && strings.ContainsAny(u.Command, `/\`) {
		return false
	}
	prog := u.Command
	if resolved, err := exec.LookPath(u.Command); err == nil {
		if abs, err := filepath.Abs(resolved); err == nil {
			prog = abs
		}
	}
	if risk.AsksEveryTimeWhy(u.Command) != "" || risk.AsksEveryTimeWhy(prog) != "" {
		return false
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
	ok, err := filepath.Match(pattern, target)
	if err != nil || !ok {
		return false
	}
	if len(u.Args) < len(r.Args) || !slices.Equal(u.Args[:len(r.Args)], r.Args) {
		return false
	}
	rest := u.Args[len(r.Args):]
	for _, name := range []string{u.Command, prog} {
		if _, asks := risk.ArgAsks(name, rest, len(r.Args) == 0); asks {
			return false
		}
	}
	if r.CwdRoot == "" {
		return true
	}
	if u.Cwd == "" {
		return false
	}
	root, cwd := foldPath(r.CwdRoot), foldPath(u.Cwd)
	rel, err := filepath.Rel(root, cwd)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func anyRuleAllows(rules []Rule, u ProgramUse) bool {
	for _, r := range rules {
		if ruleAllows(r, u) {
			return true
		}
	}
	return false
}
