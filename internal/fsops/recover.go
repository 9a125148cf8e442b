package fsops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// Recovery at start-up: settling the receipts a crash left pending and
// removing the temporary and spill files nothing refers to.

// RecoverReport says what Recover found.
type RecoverReport struct {
	Committed     int `json:"committed"`      // pending receipts whose change was in place
	Voided        int `json:"voided"`         // pending receipts whose change was not
	TempsRemoved  int `json:"temps_removed"`  // stale .hearth-tmp-* files
	SpillsRemoved int `json:"spills_removed"` // spill files no receipt refers to
}

// Recover makes the state left by a crash consistent. Call it once at
// start-up, before the first operation: it settles 'pending' receipts (by
// the file's current hash: 'committed' if it is the post-hash, 'void'
// otherwise), removes spill files that no live receipt refers to, and
// removes stale temporary files from every directory fs has written in.
// Errors of that last sweep are joined into the returned error, with the
// report still filled in; the caller may log them and go on.
func (e *Engine) Recover(ctx context.Context) (RecoverReport, error) {
	var rep RecoverReport
	type pending struct {
		id, path, undoes, action string
		post                     sql.NullString
	}
	var ps []pending
	rows, err := e.DB.R.QueryContext(ctx,
		`SELECT id, path, COALESCE(undoes, ''), post_sha256, COALESCE(action, '') FROM fs_receipts WHERE state = 'pending'`)
	if err != nil {
		return rep, fmt.Errorf("recover fs receipts: %w", err)
	}
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.id, &p.path, &p.undoes, &p.post, &p.action); err != nil {
			rows.Close()
			return rep, fmt.Errorf("recover fs receipts: %w", err)
		}
		ps = append(ps, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("recover fs receipts: %w", err)
	}
	for _, p := range ps {
		if p.action != "" {
			done, err := e.recoverAction(ctx, p.id)
			if err != nil {
				return rep, err
			}
			if done {
				rep.Committed++
			} else {
				rep.Voided++
			}
			continue
		}
		// A file that cannot be read now counts as not in place: the
		// receipt becomes void (not undoable) rather than blocking start-up.
		sha, exists, err := fileHash(p.path)
		inPlace := err == nil && p.post.Valid == exists && (!exists || sha == p.post.String)
		err = e.DB.InTx(ctx, func(tx *sql.Tx) error {
			if inPlace {
				return commitReceipt(ctx, tx, p.id, p.undoes, e.now().UnixMilli())
			}
			_, err := tx.ExecContext(ctx,
				`UPDATE fs_receipts SET state = 'void', prior = NULL, prior_file = NULL, prior_sha256 = NULL WHERE id = ?`, p.id)
			return err
		})
		if err != nil {
			return rep, fmt.Errorf("settle fs receipt %s: %w", p.id, err)
		}
		if inPlace {
			rep.Committed++
		} else {
			rep.Voided++
		}
	}

	if e.SpillDir != "" {
		n, err := e.removeOrphanSpills(ctx)
		rep.SpillsRemoved = n
		if err != nil {
			return rep, err
		}
	}

	var dirs []string
	rows, err = e.DB.R.QueryContext(ctx, `SELECT dir FROM fs_touched_dirs`)
	if err != nil {
		return rep, fmt.Errorf("list touched directories: %w", err)
	}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return rep, fmt.Errorf("list touched directories: %w", err)
		}
		dirs = append(dirs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("list touched directories: %w", err)
	}
	var errs []error
	for _, d := range dirs {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			if _, err := e.DB.W.ExecContext(ctx, `DELETE FROM fs_touched_dirs WHERE dir = ?`, d); err != nil {
				errs = append(errs, fmt.Errorf("forget directory %s: %w", d, err))
			}
			continue
		}
		n, err := atomicfile.CleanStaleTemps(d)
		rep.TempsRemoved += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

func (e *Engine) removeOrphanSpills(ctx context.Context) (int, error) {
	des, err := os.ReadDir(e.SpillDir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list spill directory: %w", err)
	}
	removed := 0
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".prior") || !de.Type().IsRegular() {
			continue
		}
		var n int
		if err := e.DB.R.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM fs_receipts WHERE prior_file = ?`, name).Scan(&n); err != nil {
			return removed, fmt.Errorf("check spill file %s: %w", name, err)
		}
		if n == 0 {
			if err := os.Remove(filepath.Join(e.SpillDir, name)); err == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// fileHash returns the SHA-256 of the file at p, or exists false.
func fileHash(p string) (sha string, exists bool, err error) {
	f, err := openRead(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	info, err := itemView{}.opened(f)
	if err != nil {
		return "", false, err
	}
	if !info.Mode().IsRegular() {
		return "", false, &InputError{Field: "path", Message: fmt.Sprintf("%s is a %s, not a file", p, typeOf(info.Mode()))}
	}
	sha, err = hashReader(f)
	return sha, err == nil, err
}
