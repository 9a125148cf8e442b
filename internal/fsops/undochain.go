package fsops

import (
	"context"
	"fmt"
	"strconv"
)

// Whether a receipt's change is undone now is decided in one place, here,
// for every reader (an undo's own check, the Status page's undo reach,
// fs.changes): a change is undone when an odd number of undos stand in a
// row on it (its undo, the undo of that undo — a Redo on the Changes page,
// or a conversation's undo of its own undo — and so on), and in force
// when that number is even. An undo of the chain retention pruned counts
// as the last one known.

// maxUndoChain bounds how many undos in a row are followed.
const maxUndoChain = 64

// undoDepthSQL returns the WITH clause and the LEFT JOIN that give each
// row of fs_receipts under alias its undo depth, undo_depth.n (NULL for
// none): how many undos stand in a row on it. base is a condition on
// fs_receipts (no alias) choosing the receipts whose depth is wanted;
// its arguments go first. undoneSQL is then the predicate "undone now".
func undoDepthSQL(alias, base string) (with, join string) {
	with = `WITH RECURSIVE undo_chain(origin, link, n) AS (
		SELECT id, undone_by, 1 FROM fs_receipts WHERE undone_by IS NOT NULL AND (` + base + `)
		UNION ALL
		SELECT c.origin, u.undone_by, c.n + 1 FROM undo_chain c JOIN fs_receipts u ON u.id = c.link
		WHERE u.undone_by IS NOT NULL AND c.n < ` + strconv.Itoa(maxUndoChain) + `) `
	join = ` LEFT JOIN (SELECT origin, MAX(n) AS n FROM undo_chain GROUP BY origin) undo_depth ON undo_depth.origin = ` + alias + `.id `
	return with, join
}

// undoneSQL is true for a receipt whose change is undone now, given the
// join of undoDepthSQL.
const undoneSQL = `(COALESCE(undo_depth.n, 0) % 2 = 1)`

// undoneNow is the receipt whose undo of r still stands, or "" when r's
// change is in force: never undone, or its undo itself undone, and so on
// down the chain (undoneSQL).
func (e *Engine) undoneNow(ctx context.Context, r receipt) (string, error) {
	if !r.undoneBy.Valid {
		return "", nil
	}
	with, join := undoDepthSQL("r", "id = ?")
	var undone bool
	if err := e.DB.R.QueryRowContext(ctx, with+`SELECT `+undoneSQL+` FROM fs_receipts r`+join+`WHERE r.id = ?`, r.id, r.id).
		Scan(&undone); err != nil {
		return "", fmt.Errorf("read the undos of receipt %s: %w", r.id, err)
	}
	if !undone {
		return "", nil
	}
	return r.undoneBy.String, nil
}
