package store

import (
	"context"
	"fmt"
	"time"
)

// StoredCopy is one stored copy the storage budget counts (an artifact,
// a file's undo copy): when it was made and its size.
type StoredCopy struct {
	At   time.Time
	Size int64
}

// OldestCopies runs query, which its table's owner writes and which
// selects (created_at in Unix milliseconds, size) oldest first, and returns
// its rows up to and including the one that brings their total to excess
// bytes. what names the copies in errors ("artifacts", "fs undo copies").
func (db *DB) OldestCopies(ctx context.Context, what, query string, excess int64) ([]StoredCopy, error) {
	rows, err := db.R.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("find the oldest %s: %w", what, err)
	}
	defer rows.Close()
	var out []StoredCopy
	var sum int64
	for sum < excess && rows.Next() {
		var at, size int64
		if err := rows.Scan(&at, &size); err != nil {
			return nil, fmt.Errorf("find the oldest %s: %w", what, err)
		}
		out = append(out, StoredCopy{At: time.UnixMilli(at), Size: size})
		sum += size
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find the oldest %s: %w", what, err)
	}
	return out, nil
}
