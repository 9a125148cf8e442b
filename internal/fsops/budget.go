package fsops

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// StoredBytes is the space the undo copies take: the distinct inline
// prior contents (stored once each, migration 0012), any inline copy of an
// older schema, and the spilled copies of large files.
func (e *Engine) StoredBytes(ctx context.Context) (int64, error) {
	var n int64
	err := e.DB.R.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(SUM(size), 0) FROM fs_priors) +
		(SELECT COALESCE(SUM(CASE WHEN prior_file IS NOT NULL THEN prior_size ELSE length(prior) END), 0)
		 FROM fs_receipts WHERE prior_file IS NOT NULL OR prior IS NOT NULL)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sum fs undo copies: %w", err)
	}
	return n, nil
}

// SweepPriors deletes stored prior contents no receipt refers to any more
// (a receipt voided at recovery or by a failed write drops its reference
// but not the shared copy). It returns the bytes freed.
func (e *Engine) SweepPriors(ctx context.Context) (int64, error) {
	var freed int64
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		freed = 0
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM fs_priors p
			WHERE NOT EXISTS (SELECT 1 FROM fs_receipts r WHERE r.prior_sha256 = p.sha256)`).Scan(&freed); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM fs_priors
			WHERE NOT EXISTS (SELECT 1 FROM fs_receipts r WHERE r.prior_sha256 = fs_priors.sha256)`)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep unreferenced fs undo copies: %w", err)
	}
	return freed, nil
}

// dropPrior deletes the stored prior content sha when no receipt refers
// to it any more, inside tx, and returns the bytes freed.
func dropPrior(ctx context.Context, tx *sql.Tx, sha string) (int64, error) {
	var size int64
	err := tx.QueryRowContext(ctx, `DELETE FROM fs_priors WHERE sha256 = ?
		AND NOT EXISTS (SELECT 1 FROM fs_receipts WHERE prior_sha256 = ?) RETURNING size`, sha, sha).Scan(&size)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return size, err
}

// UndoReach is how far back a conversation's changes can be undone: the
// time of the oldest kept change in effect (not undone now, undoneSQL;
// any false when there is none), for the Status page.
func (e *Engine) UndoReach(ctx context.Context) (oldest time.Time, any bool, err error) {
	var at sql.NullInt64
	const kept = `state = 'committed' AND operator IS NULL`
	with, join := undoDepthSQL("r", kept)
	if err := e.DB.R.QueryRowContext(ctx, with+`SELECT MIN(r.created_at) FROM fs_receipts r`+join+`
		WHERE r.`+kept+` AND NOT `+undoneSQL).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("find the oldest undoable change: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(at.Int64), true, nil
}

// OldestCopies returns the prunable undo copies (of committed or void
// receipts), oldest first, up to and including the one that brings their
// total to excess bytes. The storage budget merges them with the oldest
// artifacts to find how far back to prune.
func (e *Engine) OldestCopies(ctx context.Context, excess int64) ([]store.StoredCopy, error) {
	return e.DB.OldestCopies(ctx, "fs undo copies", `SELECT created_at, prior_size FROM fs_receipts
		WHERE state IN ('committed', 'void') ORDER BY created_at`, excess)
}
