package govern

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
)

// The policy mode and what the operator's allow-rules let run: which
// calls need a permit. The rules themselves are rules.go's.

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

func foldPath(p string) string {
	p = filepath.Clean(p)
	if runtime.GOOS == "windows" {
		return strings.ToLower(p)
	}
	return p
}

// SetPolicy changes the policy mode: kept in config.json first (SaveMode),
// then in the database and the ledger in one transaction, so that the
// mode the operator set is the one config.json, doctor, host_info, the
// tools' descriptions and the tray show.
func (o *Decisions) SetPolicy(ctx context.Context, operator, mode string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	switch mode {
	case config.ModeAsk, config.ModeTrusted, config.ModeReadOnly:
	default:
		return fmt.Errorf("policy mode %q is not one of ask, trusted, read-only", mode)
	}
	g := o.G
	from := g.Mode(ctx)
	if g.SaveMode != nil {
		if err := g.SaveMode(mode); err != nil {
			return fmt.Errorf("keep policy mode %s in the config file: %w", mode, err)
		}
	}
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		return g.setPolicyTx(ctx, tx, from, mode, operator, "switched to trusted mode (ChatGPT's changes run without asking)")
	})
}

// setPolicyTx puts mode in force and journals the change from from, in
// tx; a switch to trusted is a lowering (noteLowered), announced in the
// words trusted, however it was made.
func (g *Governor) setPolicyTx(ctx context.Context, tx *sql.Tx, from, mode, operator, trusted string) error {
	if err := putSetting(ctx, tx, keyPolicy, mode); err != nil {
		return err
	}
	data := map[string]any{"from": from, "to": mode, "operator": operator}
	if mode == config.ModeTrusted && from != config.ModeTrusted {
		return g.noteLowered(ctx, tx, ledger.KindPolicyChange, data, trusted, operator)
	}
	_, err := g.Ledger.AppendTx(ctx, tx, ledger.KindPolicyChange, journalFields(ctx, data))
	return err
}

// AdoptConfigMode makes the configured mode (config.json's policy.mode,
// read at start) the one in force: a mode an earlier Hearth kept only in
// the database, or a config file edited by hand since, would otherwise
// leave doctor and host_info disagreeing. A change is journaled as made
// by the config file (operator ConfigFileOperator), and a switch to
// trusted is announced as one made in the panel is (a lowering: the
// panel's banner, the tray's notification), so that an edit of
// config.json by another program is seen.
func (g *Governor) AdoptConfigMode(ctx context.Context) error {
	var m string
	if _, err := getSetting(ctx, g.DB.R, keyPolicy, &m); err != nil {
		return err
	}
	if m == g.DefaultMode {
		return nil
	}
	if m == "" {
		// No mode kept yet (a first start, or none since Hearth began
		// keeping it): the configured one is recorded as the one in
		// force, so that an edit of config.json before a later start is
		// seen as the change it is. Nothing changed, so nothing is
		// journaled.
		return g.DB.InTx(ctx, func(tx *sql.Tx) error { return putSetting(ctx, tx, keyPolicy, g.DefaultMode) })
	}
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		return g.setPolicyTx(ctx, tx, m, g.DefaultMode, ConfigFileOperator,
			"switched to trusted mode in config.json, read when Hearth started (ChatGPT's changes run without asking)")
	})
}

// ConfigFileOperator is the operator a mode change read from config.json
// at start is recorded under.
const ConfigFileOperator = "config.json"
