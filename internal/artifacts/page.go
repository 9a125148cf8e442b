package artifacts

import (
	"context"
	"fmt"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// PageKey is where a Page ends: the created_at (unix milliseconds) and id
// of its last artifact. The zero key starts at the newest.
type PageKey struct {
	CreatedAt int64
	ID        string
}

// Key is m's place in the scope's order.
func (m Meta) Key() PageKey { return PageKey{CreatedAt: m.CreatedAt.UnixMilli(), ID: m.ID} }

// Page returns up to limit of the scope's artifacts after key, newest
// first (ties by id): what List shows, a page at a time, so that a long
// listing is read in bounded steps without repeating or skipping one.
func (sc Scope) Page(ctx context.Context, after PageKey, limit int) ([]Meta, error) {
	where, arg := primitive.RouteMatch("route", sc.route)
	q, args := `SELECT `+metaCols+` FROM artifacts WHERE `+where, []any{arg}
	if after != (PageKey{}) {
		q += ` AND (created_at < ? OR (created_at = ? AND id > ?))`
		args = append(args, after.CreatedAt, after.CreatedAt, after.ID)
	}
	q += ` ORDER BY created_at DESC, id LIMIT ?`
	args = append(args, limit)
	rows, err := sc.s.DB.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	defer rows.Close()
	out := []Meta{}
	for rows.Next() {
		m, err := scanMeta(rows)
		if err != nil {
			return nil, fmt.Errorf("list artifacts: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	return out, nil
}
