package artifacts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PruneReport counts what Prune did; it never carries names or contents,
// so it can go to the log as it is.
type PruneReport struct {
	Artifacts  int   `json:"artifacts"`   // artifacts deleted
	Bytes      int64 `json:"bytes"`       // their total size
	Referenced int   `json:"referenced"`  // old enough, but kept: something alive refers to them
	Files      int   `json:"files"`       // blob files removed (deleted artifacts' and orphans)
	FileErrors int   `json:"file_errors"` // blob files that could not be removed (retried next pass)
	Remaining  bool  `json:"remaining"`   // stopped early (context done)
}

// LogValue logs the counts.
func (r PruneReport) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("artifacts", r.Artifacts), slog.Int64("bytes", r.Bytes),
		slog.Int("referenced", r.Referenced), slog.Int("files", r.Files), slog.Int("file_errors", r.FileErrors))
}

// pruneBatch bounds the rows one transaction looks at, so the single write
// connection is never held for long.
const pruneBatch = 200

// orphanGrace is how old a blob file with no row must be before Prune
// removes it: Put writes the file just before it inserts the row.
const orphanGrace = time.Hour

// referenced is the SQL condition, on the artifact row a, that something
// alive still refers to it by id: an arrival its conversation has not
// acknowledged yet, a future or durable job that has not finished (its
// input or result), the stored result of a dependency a waiting future
// will read back (dispatch's $future references), or a permit awaiting
// the operator. Ids are unguessable and unique, so a substring match is
// exact enough; a false positive only keeps an artifact longer.
const referenced = `(
	EXISTS (SELECT 1 FROM arrivals r LEFT JOIN cursors c ON c.route = r.route
		WHERE r.seq > COALESCE(c.acked_seq, 0) AND instr(r.payload, a.id) > 0)
	OR EXISTS (SELECT 1 FROM futures f WHERE f.finished_at IS NULL
		AND (instr(f.input, a.id) > 0 OR instr(COALESCE(f.result, ''), a.id) > 0))
	OR EXISTS (SELECT 1 FROM future_deps d JOIN futures f ON f.id = d.future_id JOIN futures g ON g.id = d.dep_id
		WHERE f.finished_at IS NULL AND instr(COALESCE(g.result, ''), a.id) > 0)
	OR EXISTS (SELECT 1 FROM jobs j WHERE j.state IN ('queued', 'running')
		AND (instr(j.args, a.id) > 0 OR instr(j.env, a.id) > 0 OR instr(COALESCE(j.result, ''), a.id) > 0))
	OR EXISTS (SELECT 1 FROM permits p WHERE p.state = 'pending' AND instr(p.input, a.id) > 0)
)`

// Prune deletes the artifacts created before before that nothing alive
// refers to (see referenced), then their blob files, then blob files no
// row names (left by a crash between the two, or inside Put). Each batch
// is checked and deleted in one write transaction, so nothing can start
// referring to an artifact between the check and the delete; files are
// removed only after the commit, so a row never names a missing file
// except while a read races the prune (it then gets ErrNotFound). fs
// receipts keep their prior content in their own spill directory
// (internal/fsops), never in artifacts.
func (s *Store) Prune(ctx context.Context, before time.Time) (PruneReport, error) {
	var rep PruneReport
	cutoff := before.UnixMilli()
	var lastAt int64 = -1 << 62
	lastID := ""
	for {
		if ctx.Err() != nil {
			rep.Remaining = true
			return rep, nil
		}
		var files []string
		var n, deleted, refs int
		var bytes int64
		err := s.DB.InTx(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT a.id, a.file, a.size, a.created_at, `+referenced+` FROM artifacts a
				WHERE a.created_at < ? AND (a.created_at > ? OR (a.created_at = ? AND a.id > ?))
				ORDER BY a.created_at, a.id LIMIT ?`, cutoff, lastAt, lastAt, lastID, pruneBatch)
			if err != nil {
				return err
			}
			type cand struct {
				id, file string
				size     int64
			}
			var del []cand
			for rows.Next() {
				var c cand
				var ref bool
				if err := rows.Scan(&c.id, &c.file, &c.size, &lastAt, &ref); err != nil {
					rows.Close()
					return err
				}
				lastID = c.id
				n++
				if ref {
					refs++
					continue
				}
				del = append(del, c)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, c := range del {
				if _, err := tx.ExecContext(ctx, `DELETE FROM artifacts WHERE id = ?`, c.id); err != nil {
					return err
				}
				deleted++
				bytes += c.size
				files = append(files, c.file)
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("prune artifacts: %w", err)
		}
		rep.Artifacts += deleted
		rep.Bytes += bytes
		rep.Referenced += refs
		for _, f := range files {
			s.removeBlob(f, &rep)
		}
		if n < pruneBatch {
			break
		}
	}
	if err := s.removeOrphans(ctx, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// removeBlob removes one blob file named by an artifacts row.
func (s *Store) removeBlob(file string, rep *PruneReport) {
	if file == "" || filepath.Base(file) != file {
		return // not a name Put wrote; never join it onto the directory
	}
	switch err := os.Remove(filepath.Join(s.Dir, file)); {
	case err == nil:
		rep.Files++
	case !errors.Is(err, fs.ErrNotExist):
		rep.FileErrors++
	}
}

// removeOrphans removes blob files (and Put's temporary files) older than
// orphanGrace that no artifacts row names.
func (s *Store) removeOrphans(ctx context.Context, rep *PruneReport) error {
	des, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list artifacts directory: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		tmp := strings.HasSuffix(name, ".bin.tmp")
		if !de.Type().IsRegular() || !strings.HasPrefix(name, "art_") || !(tmp || strings.HasSuffix(name, ".bin")) {
			continue
		}
		info, err := de.Info()
		if err != nil || time.Since(info.ModTime()) < orphanGrace {
			continue
		}
		if !tmp {
			var n int
			if err := s.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifacts WHERE file = ?`, name).Scan(&n); err != nil {
				return fmt.Errorf("check artifact file %s: %w", name, err)
			}
			if n > 0 {
				continue
			}
		}
		s.removeBlob(name, rep)
	}
	return nil
}

// DefaultRetentionEvery is how often Retention prunes after the pass it
// makes at start.
const DefaultRetentionEvery = 24 * time.Hour

// Retention prunes what Hearth keeps for a limited time (artifacts here,
// fs undo receipts in internal/fsops): one pass when Run starts, then one
// every Every. It only deletes; the ledger is never pruned.
type Retention struct {
	// Every is the time between passes; DefaultRetentionEvery when 0.
	Every time.Duration
	// Now is the clock the age limits count from; time.Now when nil.
	Now func() time.Time
	// Log records each pass's counts.
	Log    *slog.Logger
	Passes []RetentionPass
}

// RetentionPass is one kind of thing Retention prunes.
type RetentionPass struct {
	// Name labels the pass in the log ("artifacts").
	Name string
	// Days is the age limit; 0 keeps everything (the pass never runs).
	Days int
	// Prune deletes what was created before before and reports counts.
	Prune func(ctx context.Context, before time.Time) (slog.LogValuer, error)
}

// Run prunes until ctx ends. With every pass at 0 days it returns at once.
func (r *Retention) Run(ctx context.Context) {
	active := false
	for _, p := range r.Passes {
		active = active || p.Days > 0
	}
	if !active {
		return
	}
	every := r.Every
	if every <= 0 {
		every = DefaultRetentionEvery
	}
	r.pass(ctx)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.pass(ctx)
		}
	}
}

func (r *Retention) pass(ctx context.Context) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, p := range r.Passes {
		if p.Days <= 0 || ctx.Err() != nil {
			continue
		}
		before := now().Add(-time.Duration(p.Days) * 24 * time.Hour)
		rep, err := p.Prune(ctx, before)
		if err != nil {
			log.Error("retention: prune failed", "what", p.Name, "older_than_days", p.Days, "err", err)
			continue
		}
		log.Info("retention: pruned", "what", p.Name, "older_than_days", p.Days, "result", rep)
	}
}
