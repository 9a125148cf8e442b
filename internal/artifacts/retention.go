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

	"github.com/hearth-dev/hearth/internal/periodic"
	"github.com/hearth-dev/hearth/internal/primitive"
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

// pruneBatch bounds the rows one transaction looks at or deletes. A
// transaction also reads every live row once (see Pruner), which the
// owners read through partial indexes that hold only the few live rows,
// so the single write connection is held for milliseconds at a time,
// however much finished history the database holds.
const pruneBatch = 200

// orphanGrace is how old a blob file with no row must be before Prune
// removes it: Put writes the file just before it inserts the row.
const orphanGrace = time.Hour

// LiveText is one owner's part of "what is still alive": it passes to
// add, in tx (the prune's write transaction, so nothing can start naming
// an artifact between the check and the delete), the text of each of its
// live rows that may name an artifact by id. arrivalsSince (Unix
// milliseconds) is the age from which an unacknowledged arrival still
// counts as alive; owners of other rows ignore it. Each owner reads its
// own tables (the engine its futures and arrivals, governance its pending
// permits, jobs and runs theirs); internal/app registers them.
type LiveText func(ctx context.Context, tx *sql.Tx, arrivalsSince int64, add func(text string)) error

// Pruner deletes a store's old artifacts that nothing alive names: an
// artifact named in the text of any live row (see LiveText) is kept.
type Pruner struct {
	store *Store
	live  []LiveText
}

// NewPruner returns the pruner of s that asks live what is still alive.
func NewPruner(s *Store, live ...LiveText) (*Pruner, error) {
	if s == nil {
		return nil, errors.New("build the artifact pruner: the store is required")
	}
	for i, l := range live {
		if l == nil {
			return nil, fmt.Errorf("build the artifact pruner: live source %d is nil", i)
		}
	}
	return &Pruner{store: s, live: live}, nil
}

// liveRefs returns the artifact ids the live rows name, read in tx. Ids
// are unguessable and have one fixed shape, so every "art_" followed by a
// well-formed id is taken as a reference; a false positive only keeps an
// artifact longer. An id of another shape among cands (none that Put
// makes) is looked for as a plain substring, so it is kept exactly when
// some live text contains it.
func (p *Pruner) liveRefs(ctx context.Context, tx *sql.Tx, arrivalsSince int64, cands []string) (map[string]bool, error) {
	refs := map[string]bool{}
	var odd []string
	for _, id := range cands {
		if !primitive.ValidID("art", id) {
			odd = append(odd, id)
		}
	}
	add := func(text string) { addRefs(refs, text, odd) }
	for _, l := range p.live {
		if err := l(ctx, tx, arrivalsSince, add); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// artIDLen is the length of an id Put makes: "art_" and 20 characters.
var artIDLen = len(primitive.NewID("art"))

// addRefs adds to refs every artifact id text names, and each of odd
// that it contains.
func addRefs(refs map[string]bool, text string, odd []string) {
	for i := 0; ; {
		j := strings.Index(text[i:], "art_")
		if j < 0 {
			break
		}
		i += j
		if i+artIDLen <= len(text) && primitive.ValidID("art", text[i:i+artIDLen]) {
			refs[text[i:i+artIDLen]] = true
		}
		i += len("art_")
	}
	for _, id := range odd {
		if strings.Contains(text, id) {
			refs[id] = true
		}
	}
}

// Prune deletes the artifacts created before before that nothing alive
// refers to (see LiveText), then their blob files, then blob files no row
// names (left by a crash between the two, or inside Put). An
// unacknowledged arrival counts as alive from before on: retention first
// deletes the older ones (dispatch's PruneArrivals), whose conversation was
// abandoned.
//
// Each batch of artifacts is checked and deleted in one write transaction,
// so nothing can start referring to an artifact between the check and the
// delete; files are removed only after the commit, so a row never names a
// missing file except while a read races the prune (it then gets
// ErrNotFound). fs receipts keep their prior content in their own spill
// directory (internal/fsops), never in artifacts.
func (p *Pruner) Prune(ctx context.Context, before time.Time) (PruneReport, error) {
	return p.prune(ctx, before.UnixMilli(), before.UnixMilli())
}

// PruneOldest is Prune for the storage budget: it deletes the artifacts
// created before before that nothing alive refers to, and counts an
// unacknowledged arrival created since arrivalsSince as alive (the age
// limit's cutoff; the zero time keeps every unacknowledged arrival alive),
// so the budget never takes a result its conversation has not read.
func (p *Pruner) PruneOldest(ctx context.Context, before, arrivalsSince time.Time) (PruneReport, error) {
	since := int64(-1 << 62)
	if !arrivalsSince.IsZero() {
		since = arrivalsSince.UnixMilli()
	}
	return p.prune(ctx, before.UnixMilli(), since)
}

// StoredBytes is the total size of the stored artifacts.
func (s *Store) StoredBytes(ctx context.Context) (int64, error) {
	var n int64
	if err := s.DB.R.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM artifacts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sum artifact sizes: %w", err)
	}
	return n, nil
}

func (p *Pruner) prune(ctx context.Context, cutoff, arrivalCutoff int64) (PruneReport, error) {
	s := p.store
	var rep PruneReport
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
			files, n, deleted, refs, bytes = nil, 0, 0, 0, 0
			rows, err := tx.QueryContext(ctx, `SELECT id, file, size, created_at FROM artifacts
				WHERE created_at < ? AND (created_at > ? OR (created_at = ? AND id > ?))
				ORDER BY created_at, id LIMIT ?`, cutoff, lastAt, lastAt, lastID, pruneBatch)
			if err != nil {
				return err
			}
			type cand struct {
				id, file string
				size, at int64
			}
			var cs []cand
			var cids []string
			for rows.Next() {
				var c cand
				if err := rows.Scan(&c.id, &c.file, &c.size, &c.at); err != nil {
					rows.Close()
					return err
				}
				cs = append(cs, c)
				cids = append(cids, c.id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(cs) == 0 {
				return nil
			}
			live, err := p.liveRefs(ctx, tx, arrivalCutoff, cids)
			if err != nil {
				return err
			}
			for _, c := range cs {
				n++
				if live[c.id] {
					refs++
					continue
				}
				if _, err := tx.ExecContext(ctx, `DELETE FROM artifacts WHERE id = ?`, c.id); err != nil {
					return err
				}
				deleted++
				bytes += c.size
				files = append(files, c.file)
			}
			lastAt, lastID = cs[len(cs)-1].at, cs[len(cs)-1].id
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
	periodic.Run(ctx, every, true, r.pass)
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
