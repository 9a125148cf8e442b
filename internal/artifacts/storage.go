package artifacts

import (
	"context"
	"fmt"
	"time"
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

// StoredCopy is one artifact as the storage budget counts it: when it was
// made and its size.
type StoredCopy struct {
	At   time.Time
	Size int64
}

// OldestCopies returns the artifacts, oldest first, up to and including
// the one that brings their total to excess bytes. The storage budget
// merges them with the oldest fs undo copies to find how far back to
// prune.
func (s *Store) OldestCopies(ctx context.Context, excess int64) ([]StoredCopy, error) {
	rows, err := s.DB.R.QueryContext(ctx, `SELECT created_at, size FROM artifacts ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("find the oldest artifacts: %w", err)
	}
	defer rows.Close()
	var out []StoredCopy
	var sum int64
	for sum < excess && rows.Next() {
		var at, size int64
		if err := rows.Scan(&at, &size); err != nil {
			return nil, fmt.Errorf("find the oldest artifacts: %w", err)
		}
		out = append(out, StoredCopy{At: time.UnixMilli(at), Size: size})
		sum += size
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find the oldest artifacts: %w", err)
	}
	return out, nil
}
