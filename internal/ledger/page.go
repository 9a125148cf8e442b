package ledger

import (
	"context"
	"fmt"
	"strings"
)

// KindFilter selects entries by kind: those of Kinds or, with Except,
// every other; no Kinds selects every entry.
type KindFilter struct {
	Kinds  []string
	Except bool
}

// where is f as an SQL condition over ledger_entries and its arguments.
func (f KindFilter) where() (string, []any) {
	if len(f.Kinds) == 0 {
		return "", nil
	}
	args := make([]any, len(f.Kinds))
	for i, k := range f.Kinds {
		args[i] = k
	}
	in := "kind IN (?" + strings.Repeat(",?", len(f.Kinds)-1) + ")"
	if f.Except {
		in = "NOT " + in
	}
	return " WHERE " + in, args
}

// Count returns how many entries f selects.
func (l *Ledger) Count(ctx context.Context, f KindFilter) (int64, error) {
	where, args := f.where()
	var n int64
	if err := l.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM ledger_entries`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count ledger entries: %w", err)
	}
	return n, nil
}

// Newest returns up to limit of the entries f selects, newest first,
// after skipping offset of them (a page of the operator's ledger view).
func (l *Ledger) Newest(ctx context.Context, f KindFilter, limit, offset int) ([]Entry, error) {
	where, args := f.where()
	rows, err := l.db.R.QueryContext(ctx, `SELECT body FROM ledger_entries`+where+` ORDER BY seq DESC LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, fmt.Errorf("read ledger page: %w", err)
	}
	defer rows.Close()
	var page []Entry
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("read ledger page: %w", err)
		}
		e, err := ParseEntry(b)
		if err != nil {
			return nil, fmt.Errorf("read ledger page: %w", err)
		}
		page = append(page, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ledger page: %w", err)
	}
	return page, nil
}
