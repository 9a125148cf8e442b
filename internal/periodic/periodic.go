// Package periodic runs a piece of work on a fixed period until its
// context ends: the one ticker loop of Hearth's background passes
// (checkpoints, backups, the storage budget, retention, idle sessions,
// the tray's notifications).
package periodic

import (
	"context"
	"time"
)

// Run calls f every period until ctx ends, and returns then. With first,
// f is also called once at once, before the first period has passed. A
// call of f that outlasts a period delays the next one rather than
// overlapping it.
func Run(ctx context.Context, every time.Duration, first bool, f func(context.Context)) {
	if first {
		f(ctx)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f(ctx)
	}
}
