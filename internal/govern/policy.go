package govern

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// The policy mode and the operator's allow-rules: which calls need a
// permit.

// ProgramUse is one program a call would start, for allow-rule matching.
type ProgramUse struct {
	Command string
	Cwd     string
	// EnvKeys are the environment variables the call sets.
	EnvKeys []string `json:",omitempty"`
}

// loaderEnv are variables that make any program load or run other code;
// an allow-rule never covers a call that sets one.
var loaderEnv = []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
	"DYLD_FRAMEWORK_PATH", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "BASH_ENV", "ENV",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_SSH_COMMAND", "COMSPEC", "PATHEXT"}

// IsLoaderEnv reports whether the environment variable name makes programs
// load or run other code (compared without case, as Windows does).
func IsLoaderEnv(name string) bool {
	if strings.HasPrefix(strings.ToUpper(name), "GIT_CONFIG_") {
		return true
	}
	for _, bad := range loaderEnv {
		if strings.EqualFold(name, bad) {
			return true
		}
	}
	return false
}

// Mode returns the effective policy mode.
func (g *Governor) Mode(ctx context.Context) string {
	var m string
	if ok, err := getSetting(ctx, g.DB.R, keyPolicy, &m); ok && err == nil && m != "" {
		return m
	}
	return g.DefaultMode
}

func (g *Governor) needsPermit(ctx context.Context, mode string, a *callpath.Admission) (bool, error) {
	// A primitive may declare inputs that need a permit in every mode that
	// runs anything (read-only was refused above): UI fallback input.
	if a.Spec.NeedsPermit != nil && a.Spec.NeedsPermit(a.Input) {
		return true, nil
	}
	switch a.Spec.Risk {
	case primitive.RiskKill:
		return true, nil
	case primitive.RiskExec:
		if mode == config.ModeTrusted || a.Spec.InheritsPermit {
			return false, nil
		}
		extract := g.Programs[a.Spec.Name()]
		if extract == nil {
			return true, nil
		}
		uses := extract(a.Input)
		if len(uses) == 0 {
			return true, nil
		}
		rules, err := g.Rules(ctx)
		if err != nil {
			return false, err
		}
		for _, u := range uses {
			if !anyRuleAllows(rules, u) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, nil
}

// interpreters are programs that run arbitrary code from their arguments;
// an allow-rule for one is flagged to the operator.
var interpreters = []string{"cmd", "powershell", "pwsh", "python", "python3", "pythonw", "py", "pyw", "node", "deno", "bun",
	"wsl", "bash", "sh", "dash", "zsh", "ksh", "fish", "perl", "ruby", "php", "lua", "tclsh", "wish", "rscript",
	"awk", "gawk", "mawk", "osascript", "cscript", "wscript", "mshta"}

// IsInterpreter reports whether program names a general interpreter.
func IsInterpreter(program string) bool {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(program, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	for _, i := range interpreters {
		if base == i {
			return true
		}
	}
	return false
}

// Rule is an operator allow-rule: a program (absolute path, base name or
// glob) and an optional working-directory root.
type Rule struct {
	ID          string    `json:"id"`
	Program     string    `json:"program"`
	CwdRoot     string    `json:"cwd_root,omitempty"`
	Interpreter bool      `json:"interpreter"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
}

// Rules lists the allow-rules.
func (g *Governor) Rules(ctx context.Context) ([]Rule, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, program, cwd_root, interpreter, created_by, created_at FROM rules ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	defer rows.Close()
	var out []Rule
	for rows.Next() {
		var r Rule
		var interp int
		var at int64
		if err := rows.Scan(&r.ID, &r.Program, &r.CwdRoot, &interp, &r.CreatedBy, &at); err != nil {
			return nil, err
		}
		r.Interpreter = interp != 0
		r.CreatedAt = time.UnixMilli(at).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func foldPath(p string) string {
	p = filepath.Clean(p)
	if runtime.GOOS == "windows" {
		return strings.ToLower(p)
	}
	return p
}

// ruleAllows reports whether r allows running u. The program is resolved
// the way exec resolves it; a base-name rule matches the resolved file's
// base name, a path or glob rule the resolved absolute path. A rule with a
// cwd root requires an explicit cwd under that root.
func ruleAllows(r Rule, u ProgramUse) bool {
	for _, k := range u.EnvKeys {
		if IsLoaderEnv(k) {
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
