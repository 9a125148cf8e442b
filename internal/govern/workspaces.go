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

// Workspaces: "ChatGPT may change code and settings in this folder", for
// people who code, so that a project asks once rather than for every
// source file, .gitignore, .github file or build script. Only the
// operator makes one, from a card (Decisions.AddWorkspace; no tool
// reaches it), and removes it on the Safety page. A workspace covers, in
// its folder and below, the writes the allowlist of ordinary writes
// leaves out for a reason it may cover (risk.Why.Coverable: code,
// settings, hidden files, programs, kinds that are not documents); it
// never covers a persistence place or a file inside .git (writeCase
// decides those before it looks at workspaces). Workspaces are kept in
// the table folder_rules (migration 0021): the folder rules made before
// are workspaces.

// Workspace is one operator workspace.
type Workspace struct {
	ID        string    `json:"id"`
	Folder    string    `json:"folder"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

// Workspaces lists the workspaces, oldest first.
func (g *Governor) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, folder, created_by, created_at FROM folder_rules ORDER BY created_at, id`)
	out, err := store.Collect(rows, err, func(r *sql.Rows) (f Workspace, err error) {
		var at int64
		err = r.Scan(&f.ID, &f.Folder, &f.CreatedBy, &at)
		f.CreatedAt = time.UnixMilli(at).UTC()
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("read workspaces: %w", err)
	}
	return out, nil
}

// workspaceCovers reports whether an operator's workspace covers path.
func (g *Governor) workspaceCovers(ctx context.Context, path string) (bool, error) {
	rules, err := g.Workspaces(ctx)
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

// OfferedWorkspace is the folder a card of p offers as a workspace, and
// false when it offers none: a write that is not ordinary for a reason a
// workspace may cover, in a folder below the home: the project the file
// is in (risk.Writes.FolderFor).
func (g *Governor) OfferedWorkspace(p Permit) (string, bool) {
	if p.Case != string(risk.CaseUnusual) {
		return "", false
	}
	why, ok := risk.WhyOf(p.Said)
	if !ok {
		return "", false
	}
	return g.writes().FolderFor(p.Subject, why)
}

// AddWorkspace adds a workspace for folder, which must be the folder
// permit's card offered (OfferedWorkspace), and journals it. While the
// e-stop is latched it adds nothing and returns ErrEStopLatched.
func (o *Decisions) AddWorkspace(ctx context.Context, operator string, p Permit, folder string) (Workspace, error) {
	if err := checkOperator(operator); err != nil {
		return Workspace{}, err
	}
	var r Workspace
	err := o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = o.G.addWorkspaceTx(ctx, tx, operator, p, folder)
		return err
	})
	if err != nil {
		return Workspace{}, fmt.Errorf("add workspace: %w", err)
	}
	return r, nil
}

// ApproveWorkspace is the card's "Allow, and let ChatGPT change code and
// settings in this folder": it adds the workspace p's card offered and
// approves p once, in one transaction, so both are stored or neither (an
// expired permit, or the e-stop latched, leaves no workspace behind:
// ErrExpired, ErrEStopLatched).
func (o *Decisions) ApproveWorkspace(ctx context.Context, operator string, p Permit, folder string) (Decision, Workspace, error) {
	var r Workspace
	d, err := o.approve(ctx, p.ID, operator, func(tx *sql.Tx) error {
		var err error
		r, err = o.G.addWorkspaceTx(ctx, tx, operator, p, folder)
		return err
	})
	if err != nil {
		return Decision{}, Workspace{}, err
	}
	return d, r, nil
}

// addWorkspaceTx adds and journals, in tx, the workspace for folder
// that permit p's card offered; refused while the e-stop is latched. The
// ledger keeps the entry's name from when workspaces were folder rules
// (folder_rule_added).
func (g *Governor) addWorkspaceTx(ctx context.Context, tx *sql.Tx, operator string, p Permit, folder string) (Workspace, error) {
	offered, ok := g.OfferedWorkspace(p)
	if !ok || offered != folder {
		return Workspace{}, fmt.Errorf("permit %s offers no workspace for %q", p.ID, folder)
	}
	if err := refuseWhileLatched(ctx, tx); err != nil {
		return Workspace{}, err
	}
	r := Workspace{ID: primitive.NewID("fld"), Folder: folder, CreatedBy: operator, CreatedAt: g.now().UTC()}
	if _, err := tx.ExecContext(ctx, `INSERT INTO folder_rules(id, folder, created_by, created_at) VALUES (?,?,?,?)`,
		r.ID, r.Folder, r.CreatedBy, r.CreatedAt.UnixMilli()); err != nil {
		return Workspace{}, err
	}
	err := g.noteLowered(ctx, tx, "folder_rule_added", map[string]any{"rule_id": r.ID, "folder": folder, "permit_id": p.ID, "operator": operator},
		"let ChatGPT change code and settings in "+folder, operator)
	return r, err
}

// RemoveWorkspace removes a workspace and journals it.
func (o *Decisions) RemoveWorkspace(ctx context.Context, operator, id string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM folder_rules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no workspace %s", id)
		}
		_, err = o.G.Ledger.AppendTx(ctx, tx, "folder_rule_removed", map[string]any{"rule_id": id, "operator": operator})
		return err
	})
}
