package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The operator's allow-rules (the rules table): listing them, adding one
// (alone, or with the approval whose card offered it) and removing one.
// What a rule covers is execrules.go's; what it pins, rulepins.go's.

// AddRule adds an allow-rule for program in cwdRoot ("" for anywhere)
// covering the calls whose arguments begin with args. A program that
// runs any code it is given (risk.AsksEveryTime) is refused: it asks
// every time. While the e-stop is latched it adds nothing and returns
// ErrEStopLatched.
func (o *Decisions) AddRule(ctx context.Context, operator, program, cwdRoot string, args ...string) (Rule, error) {
	if err := checkOperator(operator); err != nil {
		return Rule{}, err
	}
	pins, err := o.G.takePins(program, args, cwdRoot, cwdRoot)
	if err != nil {
		return Rule{}, err
	}
	var r Rule
	err = o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = o.G.addRuleTx(ctx, tx, operator, program, cwdRoot, args, pins)
		return err
	})
	return r, err
}

// ErrAsksEveryTime refuses a rule for a program no rule may cover.
var ErrAsksEveryTime = errors.New("no rule may cover this program")

func (g *Governor) addRuleTx(ctx context.Context, tx *sql.Tx, operator, program, cwdRoot string, args []string, pins *RulePins) (Rule, error) {
	if strings.TrimSpace(program) == "" {
		return Rule{}, errors.New("rule program is required")
	}
	if cwdRoot != "" && !isAbsPath(cwdRoot) {
		return Rule{}, fmt.Errorf("rule cwd_root %q is not an absolute path", cwdRoot)
	}
	if why := g.RuleRefusal(program); why != "" {
		return Rule{}, fmt.Errorf("rule program %q: %s: %w", program, why, ErrAsksEveryTime)
	}
	if !risk.RunsOthers(program) {
		if arg, why := g.ArgRunnerWhy(args, cwdRoot); why != "" {
			return Rule{}, fmt.Errorf("rule for %s: its argument %s %s: %w", program, arg, why, ErrAsksEveryTime)
		}
	}
	if err := refuseWhileLatched(ctx, tx); err != nil {
		return Rule{}, err
	}
	if args == nil {
		args = []string{}
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return Rule{}, fmt.Errorf("rule arguments: %w", err)
	}
	if pins == nil {
		pins = &RulePins{}
	}
	pinsJSON, err := json.Marshal(pins)
	if err != nil {
		return Rule{}, fmt.Errorf("rule pins: %w", err)
	}
	// The same rule again (the operator chose Always allow after a pinned
	// file changed) replaces the old one: its pins are now.
	if _, err := tx.ExecContext(ctx, `DELETE FROM rules WHERE program = ? AND args = ? AND cwd_root = ?`, program, string(argsJSON), cwdRoot); err != nil {
		return Rule{}, err
	}
	r := Rule{ID: primitive.NewID("rul"), Program: program, Args: args, CwdRoot: cwdRoot, Interpreter: IsInterpreter(program), CreatedBy: operator, CreatedAt: g.now().UTC(), Pins: pins}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rules(id, program, args, cwd_root, interpreter, created_by, created_at, pins) VALUES (?,?,?,?,?,?,?,?)`,
		r.ID, r.Program, string(argsJSON), r.CwdRoot, boolInt(r.Interpreter), r.CreatedBy, r.CreatedAt.UnixMilli(), string(pinsJSON)); err != nil {
		return Rule{}, err
	}
	what := "added an always-rule for " + ruleWords(program, args)
	if cwdRoot != "" {
		what += " in " + cwdRoot
	}
	err = g.noteLowered(ctx, tx, ledger.KindRuleAdded, map[string]any{"rule_id": r.ID, "program": program, "args": args, "cwd_root": cwdRoot, "operator": operator, "pins": pins},
		what, operator)
	return r, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RemoveRule removes an allow-rule.
func (o *Decisions) RemoveRule(ctx context.Context, operator, id string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM rules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no rule %s", id)
		}
		_, err = o.G.Ledger.AppendTx(ctx, tx, "rule_removed", map[string]any{"rule_id": id, "operator": operator})
		return err
	})
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
