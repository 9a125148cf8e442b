package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
)

// startRetention prunes artifacts and fs undo receipts older than the
// config's artifact_retention_days and receipt_retention_days: once now,
// then daily, until ctx ends. Just before the artifact pass, the arrivals
// older than artifact_retention_days that were never acknowledged go
// (their conversation was abandoned; see dispatch's PruneArrivals), so
// the artifacts only they named go with them. The returned channel closes
// when it has stopped. The ledger is never pruned.
func (a *App) startRetention(ctx context.Context) <-chan struct{} {
	r := &artifacts.Retention{Log: a.Log, Passes: []artifacts.RetentionPass{
		{Name: "abandoned arrivals", Days: a.Config.ArtifactRetentionDays,
			Prune: func(ctx context.Context, before time.Time) (slog.LogValuer, error) {
				return a.Dispatcher.PruneArrivals(ctx, before)
			}},
		{Name: "artifacts", Days: a.Config.ArtifactRetentionDays,
			Prune: func(ctx context.Context, before time.Time) (slog.LogValuer, error) {
				return a.Pruner.Prune(ctx, before)
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
