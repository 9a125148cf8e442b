package fsops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// ErrReceiptExpired matches every *ExpiredReceiptError with errors.Is.
var ErrReceiptExpired = errors.New("receipt expired")

// ExpiredReceiptError reports an undo of a receipt that retention pruned:
// the receipt and its copy of the prior content are gone. It is told apart
// from an id that never existed, because the conversation that made the
// receipt saw this id once; only that conversation is told.
type ExpiredReceiptError struct {
	ID        string
	CreatedAt time.Time
	PrunedAt  time.Time
}

func (e *ExpiredReceiptError) Error() string {
	return fmt.Sprintf("receipt %s expired: made %s, pruned %s (older than receipt_retention_days, or among the oldest when stored copies passed storage_budget_bytes), so its change can no longer be undone",
		e.ID, e.CreatedAt.UTC().Format(time.DateOnly), e.PrunedAt.UTC().Format(time.DateOnly))
}

// Is makes errors.Is(err, ErrReceiptExpired) true.
func (e *ExpiredReceiptError) Is(target error) bool { return target == ErrReceiptExpired }

// expiredReceipt returns the *ExpiredReceiptError for id when retention
// pruned it and it was route's (primitive.RouteMatch), nil otherwise: an
// expired receipt of another conversation is as unknown as one that never
// existed. A tombstone from before the owner was kept (route NULL,
// migration 0008) matches no scope.
func (e *Engine) expiredReceipt(ctx context.Context, route, id string) error {
	var created, pruned int64
	cond, arg := primitive.RouteMatch("route", route)
	err := e.DB.R.QueryRowContext(ctx, `SELECT created_at, pruned_at FROM fs_receipts_pruned WHERE id = ? AND `+cond, id, arg).Scan(&created, &pruned)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load receipt %s: %w", id, err)
	}
	return &ExpiredReceiptError{ID: id, CreatedAt: time.UnixMilli(created), PrunedAt: time.UnixMilli(pruned)}
}

// ReceiptPruneReport counts what PruneReceipts removed; it never carries
// paths or contents, so it can go to the log as it is.
type ReceiptPruneReport struct {
	Receipts      int   `json:"receipts"`     // receipts deleted
	PriorBytes    int64 `json:"prior_bytes"`  // prior content they kept, inline or spilled
	SpillsRemoved int   `json:"spill_files"`  // spill files removed
	Deferred      int   `json:"deferred"`     // old enough, but an undone receipt they refer to is still kept
	SpillErrors   int   `json:"spill_errors"` // spill files that could not be removed (the next Recover does)
	Remaining     bool  `json:"remaining"`    // stopped early (context done)
}

// LogValue logs the counts.
func (r ReceiptPruneReport) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("receipts", r.Receipts), slog.Int64("prior_bytes", r.PriorBytes),
		slog.Int("spill_files", r.SpillsRemoved), slog.Int("deferred", r.Deferred), slog.Int("spill_errors", r.SpillErrors))
}

// pruneBatch bounds how many receipts one pass looks at per query, so the
// single write connection is never held for long.
const pruneBatch = 500

// Deleting a receipt looks up the receipts that refer to it: the two
// queries below, and SQLite's foreign-key checks of undoes and undone_by.
// Migration 0010's partial indexes on those columns make each a search,
// not a scan of every receipt (which made a pass quadratic).
const (
	// undoneByQuery counts the receipts an undo receipt undid.
	undoneByQuery = `SELECT COUNT(*) FROM fs_receipts WHERE undone_by = ?`
	// unlinkUndoesQuery forgets a receipt in the undo receipts of it.
	unlinkUndoesQuery = `UPDATE fs_receipts SET undoes = NULL WHERE undoes = ?`
)

// PruneReceipts deletes the committed and void receipts created before
// before, with their prior content. Pending receipts are never touched
// (Recover settles them). Each path's receipts go in one transaction taken
// under that path's lock, so no undo of the same file runs in between; the
// id is kept in fs_receipts_pruned with its owner's route, so a later undo
// by that conversation says it expired (and by any other, not found). Spill
// files are removed after the commit: a crash in between leaves orphans
// that the next Recover removes, never a receipt without its content.
//
// An undo receipt whose undone receipt is kept is deferred to a later
// pass: deleting it would make the kept receipt look not undone. Nothing
// else refers to receipts: the ledger records receipt ids but never needs
// the row, and is not touched.
func (e *Engine) PruneReceipts(ctx context.Context, before time.Time) (ReceiptPruneReport, error) {
	var rep ReceiptPruneReport
	cutoff := before.UnixMilli()
	var lastAt int64 = -1 << 62
	lastID := ""
	for {
		if ctx.Err() != nil {
			rep.Remaining = true
			return rep, nil
		}
		type cand struct {
			id, path string
			at       int64
		}
		rows, err := e.DB.R.QueryContext(ctx,
			`SELECT id, path, created_at FROM fs_receipts
			 WHERE created_at < ? AND state IN ('committed', 'void') AND (created_at > ? OR (created_at = ? AND id > ?))
			 ORDER BY created_at, id LIMIT ?`, cutoff, lastAt, lastAt, lastID, pruneBatch)
		if err != nil {
			return rep, fmt.Errorf("prune fs receipts: %w", err)
		}
		var cs []cand
		for rows.Next() {
			var c cand
			if err := rows.Scan(&c.id, &c.path, &c.at); err != nil {
				rows.Close()
				return rep, fmt.Errorf("prune fs receipts: %w", err)
			}
			cs = append(cs, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return rep, fmt.Errorf("prune fs receipts: %w", err)
		}
		if len(cs) == 0 {
			return rep, nil
		}
		lastAt, lastID = cs[len(cs)-1].at, cs[len(cs)-1].id

		// Group by path, oldest first within each path.
		var order []string
		byPath := map[string][]string{}
		for _, c := range cs {
			if _, ok := byPath[c.path]; !ok {
				order = append(order, c.path)
			}
			byPath[c.path] = append(byPath[c.path], c.id)
		}
		for _, p := range order {
			if ctx.Err() != nil {
				rep.Remaining = true
				return rep, nil
			}
			if err := e.prunePath(ctx, p, byPath[p], cutoff, &rep); err != nil {
				return rep, err
			}
		}
		if len(cs) < pruneBatch {
			return rep, nil
		}
	}
}

// prunePath deletes ids (receipts of path, oldest first) in one
// transaction under path's lock, then removes their spill files.
func (e *Engine) prunePath(ctx context.Context, path string, ids []string, cutoff int64, rep *ReceiptPruneReport) error {
	unlock := e.locks.lock(pathKey(path))
	defer unlock()
	var spills []string
	var deleted, deferred int
	var bytes int64
	now := e.now().UnixMilli()
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		spills, deleted, deferred, bytes = nil, 0, 0, 0
		for _, id := range ids {
			var priorFile, priorSHA sql.NullString
			var size, created int64
			var owner string
			err := tx.QueryRowContext(ctx,
				`SELECT prior_file, prior_sha256, prior_size, created_at, route FROM fs_receipts
				 WHERE id = ? AND state IN ('committed', 'void') AND created_at < ?`, id, cutoff).
				Scan(&priorFile, &priorSHA, &size, &created, &owner)
			if errors.Is(err, sql.ErrNoRows) {
				continue // settled otherwise since the look-up
			}
			if err != nil {
				return err
			}
			var undoneKept int
			if err := tx.QueryRowContext(ctx, undoneByQuery, id).Scan(&undoneKept); err != nil {
				return err
			}
			if undoneKept > 0 {
				deferred++
				continue
			}
			if _, err := tx.ExecContext(ctx, unlinkUndoesQuery, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO fs_receipts_pruned(id, route, created_at, pruned_at, path) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
				id, owner, created, now, path); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM fs_receipts WHERE id = ?`, id); err != nil {
				return err
			}
			deleted++
			if priorSHA.Valid {
				// Content shared with other receipts stays until the last
				// one goes.
				freed, err := dropPrior(ctx, tx, priorSHA.String)
				if err != nil {
					return err
				}
				bytes += freed
			} else {
				bytes += size
			}
			if priorFile.Valid {
				spills = append(spills, priorFile.String)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prune fs receipts of %s: %w", path, err)
	}
	rep.Receipts += deleted
	rep.Deferred += deferred
	rep.PriorBytes += bytes
	for _, name := range spills {
		if filepath.Base(name) != name || e.SpillDir == "" {
			continue
		}
		switch err := os.Remove(filepath.Join(e.SpillDir, name)); {
		case err == nil:
			rep.SpillsRemoved++
		case !errors.Is(err, fs.ErrNotExist):
			rep.SpillErrors++
		}
	}
	return nil
}
