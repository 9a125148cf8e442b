package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
)

// startRetention prunes artifacts and fs undo receipts older than the
// config's artifact_retention_days and receipt_retention_days: once now,
// then daily, until ctx ends. The artifact pass also deletes arrivals
// older than artifact_retention_days that were never acknowledged (their
// conversation was abandoned; see artifacts.Store.Prune). The returned
// channel closes when it has stopped. The ledger is never pruned.
func (a *App) startRetention(ctx context.Context) <-chan struct{} {
	r := &artifacts.Retention{Log: a.Log, Passes: []artifacts.RetentionPass{
		{Name: "artifacts", Days: a.Config.ArtifactRetentionDays,
			Prune: func(ctx context.Context, before time.Time) (slog.LogValuer, error) {
				return a.Artifacts.Prune(ctx, before)
			}},
		{Name: "fs receipts", Days: a.Config.ReceiptRetentionDays,
			Prune: func(ctx context.Context, before time.Time) (slog.LogValuer, error) {
				return a.FS.PruneReceipts(ctx, before)
			}},
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	return done
}
