package govern

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/store"
)

// Folder rules: "always allow hidden files and programs in this folder",
// for people who code, so that a project asks once rather than for every
// .gitignore, .github file or build script. Only the operator makes one,
// from a card (Decisions.AddFolderRule; no tool reaches it). A rule covers,
// in its folder and below, the writes the allowlist of ordinary writes
// leaves out for a reason a rule may cover (risk.Why.Coverable: hidden
// files and programs); it never covers a persistence place or a file
// inside .git (writeCase decides those before it looks at rules).

// FolderRule is one operator folder rule.
type FolderRule struct {
	ID        string    `json:"id"`
	Folder    string    `json:"folder"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

// FolderRules lists the folder rules, oldest first.
func (g *Governor) FolderRules(ctx context.Context) ([]FolderRule, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, folder, created_by, created_at FROM folder_rules ORDER BY created_at, id`)
	out, err := store.Collect(rows, err, func(r *sql.Rows) (f FolderRule, err error) {
		var at int64
		err = r.Scan(&f.ID, &f.Folder, &f.CreatedBy, &at)
		f.CreatedAt = time.UnixMilli(at).UTC()
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("read folder rules: %w", err)
	}
	return out, nil
}

// folderAllows reports whether an operator's folder rule covers path.
func (g *Governor) folderAllows(ctx context.Context, path string) (bool, error) {
	rules, err := g.FolderRules(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range rules {
		if g.writes().Covers(r.Folder, path) {
			return true, nil
		}
	}
	return false, nil
}

// OfferedFolder is the folder a card of p offers a folder rule for, and
// false when it offers none: a write that is not ordinary for a reason a
// rule may cover, in a folder below the home (risk.Writes.FolderFor).
func (g *Governor) OfferedFolder(p Permit) (string, bool) {
	if p.Case != string(risk.CaseUnusual) {
		return "", false
	}
	why, ok := risk.WhyOf(p.Said)
	if !ok {
		return "", false
	}
	return g.writes().FolderFor(p.Subject, why)
}

// AddFolderRule adds a folder rule for folder, which must be the folder
// permit's card offered (OfferedFolder), and journals it. While the
// e-stop is latched it adds nothing and returns ErrEStopLatched.
func (o *Decisions) AddFolderRule(ctx context.Context, operator string, p Permit, folder string) (FolderRule, error) {
	if err := checkOperator(operator); err != nil {
		return FolderRule{}, err
	}
	var r FolderRule
	err := o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = o.G.addFolderRuleTx(ctx, tx, operator, p, folder)
		return err
	})
	if err != nil {
		return FolderRule{}, fmt.Errorf("add folder rule: %w", err)
	}
	return r, nil
}

// ApproveFolder is the card's "Always allow hidden files and programs in
// this folder": it adds the folder rule p's card offered and approves p
// once, in one transaction, so both are stored or neither (an expired
// permit, or the e-stop latched, leaves no rule behind: ErrExpired,
// ErrEStopLatched).
func (o *Decisions) ApproveFolder(ctx context.Context, operator string, p Permit, folder string) (Decision, FolderRule, error) {
	var r FolderRule
	d, err := o.approve(ctx, p.ID, operator, func(tx *sql.Tx) error {
		var err error
		r, err = o.G.addFolderRuleTx(ctx, tx, operator, p, folder)
		return err
	})
	if err != nil {
		return Decision{}, FolderRule{}, err
	}
	return d, r, nil
}

// addFolderRuleTx adds and journals, in tx, the folder rule for folder
// that permit p's card offered; refused while the e-stop is latched.
func (g *Governor) addFolderRuleTx(ctx context.Context, tx *sql.Tx, operator string, p Permit, folder string) (FolderRule, error) {
	offered, ok := g.OfferedFolder(p)
	if !ok || offered != folder {
		return FolderRule{}, fmt.Errorf("permit %s offers no folder rule for %q", p.ID, folder)
	}
	if err := refuseWhileLatched(ctx, tx); err != nil {
		return FolderRule{}, err
	}
	r := FolderRule{ID: primitive.NewID("fld"), Folder: folder, CreatedBy: operator, CreatedAt: g.now().UTC()}
	if _, err := tx.ExecContext(ctx, `INSERT INTO folder_rules(id, folder, created_by, created_at) VALUES (?,?,?,?)`,
		r.ID, r.Folder, r.CreatedBy, r.CreatedAt.UnixMilli()); err != nil {
		return FolderRule{}, err
	}
	err := g.noteLowered(ctx, tx, "folder_rule_added", map[string]any{"rule_id": r.ID, "folder": folder, "permit_id": p.ID, "operator": operator},
		"allowed hidden files and programs in "+folder, operator)
	return r, err
}

// RemoveFolderRule removes a folder rule and journals it.
func (o *Decisions) RemoveFolderRule(ctx context.Context, operator, id string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM folder_rules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no folder rule %s", id)
		}
		_, err = o.G.Ledger.AppendTx(ctx, tx, "folder_rule_removed", map[string]any{"rule_id": id, "operator": operator})
		return err
	})
}
