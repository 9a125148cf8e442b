package store

import (
	"context"
	"fmt"
)

// Check runs SQLite's integrity_check (quick false) or the cheaper
// quick_check (quick true) on the read pool and returns at most max of
// its findings; none when the database is sound. Backups verify their copy
// with the full check; doctor looks at a live database with the quick one.
func (db *DB) Check(ctx context.Context, quick bool, max int) ([]string, error) {
	pragma := "integrity_check"
	if quick {
		pragma = "quick_check"
	}
	rows, err := db.R.QueryContext(ctx, fmt.Sprintf("PRAGMA %s(%d)", pragma, max))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if s != "ok" {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}
