package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
)

// The policy mode and the operator's allow-rules: which calls need a
// permit.

// loaderEnv are variables that make any program load or run other code
// (a recipe may not fill one from a placeholder; an allow-rule covers a
// call only when it sets none but risk.HarmlessEnv).
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

// programsAllowed reports whether an operator allow-rule allows every
// program an exec-class call would start (a primitive without an
// extractor, or a call that names none, is never allowed by a rule).
// When a rule would have, but for a file it pinned that changed since,
// it returns that file as changed.
func (g *Governor) programsAllowed(ctx context.Context, a *callpath.Admission) (bool, string, error) {
	extract := g.Programs[a.Spec.Name()]
	if extract == nil {
		return false, "", nil
	}
	uses := extract(a.Input)
	if len(uses) == 0 {
		return false, "", nil
	}
	rules, err := g.Rules(ctx)
	if err != nil {
		return false, "", err
	}
	for _, u := range uses {
		if ok, changed := g.anyRuleCovers(rules, u); !ok {
			return false, changed, nil
		}
	}
	return true, "", nil
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
// glob), the arguments a call must begin with (the ones the permit card
// showed; none for a rule made before rules kept them) and an optional
// working-directory root. What it covers is ruleAllows's (execrules.go).
type Rule struct {
	ID          string    `json:"id"`
	Program     string    `json:"program"`
	Args        []string  `json:"args,omitempty"`
	CwdRoot     string    `json:"cwd_root,omitempty"`
	Interpreter bool      `json:"interpreter"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
	// Pins are the files the rule pinned when it was made (rulepins.go);
	// nil for a rule made before rules pinned files.
	Pins *RulePins `json:"pins,omitempty"`
	// Narrowed is set for a rule with no arguments made before rules
	// kept the card's arguments: it covers the program with no
	// arguments only.
	Narrowed bool `json:"narrowed,omitempty"`
}

// Rules lists the allow-rules.
func (g *Governor) Rules(ctx context.Context) ([]Rule, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, program, args, cwd_root, interpreter, created_by, created_at, pins, narrowed FROM rules ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	defer rows.Close()
	var out []Rule
	for rows.Next() {
		var r Rule
		var interp int
		var at int64
		var args string
		var pins sql.NullString
		var narrowed int
		if err := rows.Scan(&r.ID, &r.Program, &args, &r.CwdRoot, &interp, &r.CreatedBy, &at, &pins, &narrowed); err != nil {
			return nil, err
		}
		if pins.Valid {
			if err := json.Unmarshal([]byte(pins.String), &r.Pins); err != nil {
				return nil, fmt.Errorf("read rule %s: its pinned files: %w", r.ID, err)
			}
		}
		r.Narrowed = narrowed != 0
		if err := json.Unmarshal([]byte(args), &r.Args); err != nil {
			return nil, fmt.Errorf("read rule %s: its arguments: %w", r.ID, err)
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
