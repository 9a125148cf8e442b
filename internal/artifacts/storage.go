package artifacts

import (
	"context"
	"fmt"

	"github.com/hearth-dev/hearth/internal/store"
)

// StorageLine says how much of storage_budget_bytes the stored copies use:
// "12.3 MiB of 1.0 GiB (1%)", or "12.3 MiB (no budget)".
func StorageLine(used, budget int64) string {
	if budget <= 0 {
		return HumanBytes(used) + " (no budget)"
	}
	return fmt.Sprintf("%s of %s (%d%%)", HumanBytes(used), HumanBytes(budget), used*100/budget)
}

// HumanBytes renders n in B, KiB, MiB or GiB.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// OldestCopies returns the artifacts, oldest first, up to and including
// the one that brings their total to excess bytes. The storage budget
// merges them with the oldest fs undo copies to find how far back to
// prune.
func (s *Store) OldestCopies(ctx context.Context, excess int64) ([]store.StoredCopy, error) {
	return s.DB.OldestCopies(ctx, "artifacts", `SELECT created_at, size FROM artifacts ORDER BY created_at`, excess)
}
