package app

import (
	"context"
	"time"

	"github.com/hearth-dev/hearth/internal/periodic"
)

// BudgetEvery is how often a running Hearth checks storage_budget_bytes
// (and once at start). A check under the budget is two sums of small
// columns; the database file grows past the budget by at most what is
// written in this long (SQLite reuses the pages a prune frees).
const BudgetEvery = 5 * time.Second

// StorageUsage is the space fs undo copies and artifacts take, against
// storage_budget_bytes (0: no budget).
type StorageUsage struct {
	ReceiptBytes  int64 `json:"receipt_bytes"`
	ArtifactBytes int64 `json:"artifact_bytes"`
	UsedBytes     int64 `json:"used_bytes"`
	BudgetBytes   int64 `json:"budget_bytes"`
}

// StorageUsage measures the space used now.
func (a *App) StorageUsage(ctx context.Context) (StorageUsage, error) {
	r, err := a.FS.StoredBytes(ctx)
	if err != nil {
		return StorageUsage{}, err
	}
	art, err := a.Artifacts.StoredBytes(ctx)
	if err != nil {
		return StorageUsage{}, err
	}
	return StorageUsage{ReceiptBytes: r, ArtifactBytes: art, UsedBytes: r + art, BudgetBytes: a.Config.StorageBudgetBytes}, nil
}

// storageStatus is host_info's "storage".
func (a *App) storageStatus() any {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u, err := a.StorageUsage(ctx)
	if err != nil {
		a.Log.Error("measure storage for host_info", "err", err)
		return map[string]any{"error": "the space used could not be measured"}
	}
	return u
}

// BudgetReport counts what one EnforceBudget did.
type BudgetReport struct {
	Before, After int64
	Receipts      int
	Artifacts     int
	Rounds        int
	// Inputs counts finished futures whose stored input was dropped.
	Inputs int
}

// keptInput is the largest input a finished future keeps.
const keptInput = 4 << 10

// budgetRounds bounds one EnforceBudget: each round prunes up to a cutoff
// estimated from sizes, which shared copies and live references make
// generous; a few rounds close the gap.
const budgetRounds = 8

// EnforceBudget prunes, oldest first, the fs receipts and artifacts that
// nothing alive needs until what they store fits storage_budget_bytes. The
// receipts go with a tombstone, so undo of one says "expired"; no
// arrival is deleted, and an artifact an unacknowledged arrival (or any
// other live row) names is kept, as for the age limits.
func (a *App) EnforceBudget(ctx context.Context) (BudgetReport, error) {
	var rep BudgetReport
	budget := a.Config.StorageBudgetBytes
	if _, err := a.FS.SweepPriors(ctx); err != nil {
		return rep, err
	}
	n, err := a.Dispatcher.DropFinishedInputs(ctx, keptInput)
	if err != nil {
		return rep, err
	}
	rep.Inputs = n
	var arrivalsSince time.Time
	if d := a.Config.ArtifactRetentionDays; d > 0 {
		arrivalsSince = time.Now().Add(-time.Duration(d) * 24 * time.Hour)
	}
	for ; rep.Rounds < budgetRounds; rep.Rounds++ {
		u, err := a.StorageUsage(ctx)
		if err != nil {
			return rep, err
		}
		if rep.Rounds == 0 {
			rep.Before = u.UsedBytes
		}
		rep.After = u.UsedBytes
		if budget <= 0 || u.UsedBytes <= budget {
			return rep, nil
		}
		cutoff, ok, err := a.oldestCutoff(ctx, u.UsedBytes-budget)
		if err != nil || !ok {
			return rep, err
		}
		rr, err := a.FS.PruneReceipts(ctx, cutoff)
		if err != nil {
			return rep, err
		}
		ar, err := a.Pruner.PruneOldest(ctx, cutoff, arrivalsSince)
		if err != nil {
			return rep, err
		}
		rep.Receipts += rr.Receipts
		rep.Artifacts += ar.Artifacts
		if rr.Receipts == 0 && ar.Artifacts == 0 {
			// What is left before the cutoff is alive; nothing more to take.
			return rep, nil
		}
	}
	u, err := a.StorageUsage(ctx)
	if err == nil {
		rep.After = u.UsedBytes
	}
	return rep, err
}

// oldestCutoff is the time before which the prunable receipts and
// artifacts, oldest first, add up to at least excess bytes. Each owner
// gives its oldest copies up to excess; the merge of the two holds every
// copy older than the cutoff.
func (a *App) oldestCutoff(ctx context.Context, excess int64) (time.Time, bool, error) {
	rs, err := a.FS.OldestCopies(ctx, excess)
	if err != nil {
		return time.Time{}, false, err
	}
	as, err := a.Artifacts.OldestCopies(ctx, excess)
	if err != nil {
		return time.Time{}, false, err
	}
	if len(rs)+len(as) == 0 {
		return time.Time{}, false, nil
	}
	var sum int64
	var at time.Time
	for len(rs)+len(as) > 0 && sum < excess {
		if len(as) == 0 || (len(rs) > 0 && !as[0].At.Before(rs[0].At)) {
			at, sum, rs = rs[0].At, sum+rs[0].Size, rs[1:]
		} else {
			at, sum, as = as[0].At, sum+as[0].Size, as[1:]
		}
	}
	return at.Add(time.Millisecond), true, nil
}

// startBudget enforces storage_budget_bytes now and every BudgetEvery
// (Options.BudgetEvery) until ctx ends; the returned channel closes when
// it has stopped.
func (a *App) startBudget(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	every := a.budgetEvery
	if every < 0 {
		close(done)
		return done
	}
	if every == 0 {
		every = BudgetEvery
	}
	go func() {
		defer close(done)
		periodic.Run(ctx, every, true, func(ctx context.Context) {
			if rep, err := a.EnforceBudget(ctx); err != nil && ctx.Err() == nil {
				a.Log.Error("enforce storage_budget_bytes", "err", err)
			} else if rep.Receipts+rep.Artifacts > 0 {
				a.Log.Info("storage budget pruned the oldest copies", "receipts", rep.Receipts, "artifacts", rep.Artifacts,
					"bytes_before", rep.Before, "bytes_after", rep.After, "budget", a.Config.StorageBudgetBytes)
			}
		})
	}()
	return done
}
