package fsops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// recoverAction settles a file operation's receipt a crash left pending,
// by what is on disk: committed when the item is where the operation puts
// it (finishing a move across volumes whose verified copy is in place by
// putting the source in the bin), void otherwise (a temporary copy is
// removed, and a file an overwrite had put in the bin comes back). Either
// way the item is in exactly one of its two states, and the receipt says
// which.
func (e *Engine) recoverAction(ctx context.Context, id string) (committed bool, err error) {
	var r struct {
		path, action, undoes, from, bin, replaced, step string
		post                                            sql.NullString
	}
	var created int64
	err = e.DB.R.QueryRowContext(ctx, `SELECT path, action, COALESCE(undoes, ''), COALESCE(from_path, ''), COALESCE(bin_path, ''),
		COALESCE(replaced_bin, ''), COALESCE(step, ''), post_sha256, created_at FROM fs_receipts WHERE id = ?`, id).
		Scan(&r.path, &r.action, &r.undoes, &r.from, &r.bin, &r.replaced, &r.step, &r.post, &created)
	if err != nil {
		return false, fmt.Errorf("settle fs receipt %s: %w", id, err)
	}
	os.RemoveAll(filepath.Join(filepath.Dir(r.path), tempName(id)))
	at := func(p string) bool {
		fp, _, _, err := fingerprint(p)
		return err == nil && r.post.Valid && fp == r.post.String
	}
	absent := func(p string) bool {
		_, err := os.Lstat(p)
		return errors.Is(err, fs.ErrNotExist)
	}
	done := false
	switch r.action {
	case ActionMove, ActionCopy:
		done = at(r.path)
		record := func(w string) error { return e.setReceipt(ctx, id, "bin_path", w) }
		switch {
		case !done || r.action != ActionMove || absent(r.from):
		case r.bin == "" && at(r.from):
			// The verified copy is in place, the source still there whole,
			// and no place in the bin taken for it yet.
			if where, terr := trashItem(r.from); terr == nil {
				if err := record(where); err != nil {
					return false, err
				}
			}
		case r.step == stepCopied:
			// Killed while the source went to the bin: what of it is still
			// as the copy follows what went before, into the same item of
			// the bin; what differs stays, as it would have.
			if copied, verr := verifyTree(r.path, r.path); verr == nil {
				if where, _, berr := e.binSource(r.from, copied, r.bin, record); berr == nil && where != r.bin && (where != "" || absent(r.bin)) {
					if err := record(where); err != nil {
						return false, err
					}
				}
			}
		}
		if !done && r.replaced == "" && r.step == stepReplacing && absent(r.path) {
			// On its way to a bin that chose its place: found there.
			r.replaced = findTrashed(r.path, time.UnixMilli(created).Add(-2*time.Second))
		}
		if !done && r.replaced != "" {
			if absent(r.path) {
				restoreFromTrash(r.replaced, r.path)
			} else if info := trashInfoOf(r.replaced); info != "" && absent(r.replaced) {
				// Its place in the bin was reserved, the file never went.
				os.Remove(info)
			}
		}
	case ActionTrash, ActionRmdir:
		done = absent(r.path)
		if !done && r.bin != "" && absent(r.bin) {
			if info := trashInfoOf(r.bin); info != "" {
				os.Remove(info)
			}
		}
	case ActionRestore:
		done = at(r.path)
	case ActionMkdir:
		info, err := os.Lstat(r.path)
		done = err == nil && info.IsDir()
	}
	err = e.DB.InTx(ctx, func(tx *sql.Tx) error {
		if done {
			return commitReceipt(ctx, tx, id, r.undoes, e.now().UnixMilli())
		}
		_, err := tx.ExecContext(ctx, `UPDATE fs_receipts SET state = 'void' WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("settle fs receipt %s: %w", id, err)
	}
	return done, nil
}
