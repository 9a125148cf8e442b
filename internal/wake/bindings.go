package wake

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

func (s *Service) loadBindings(ctx context.Context) ([]*Binding, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT route, target_id, conv_url, bound_at, last_wake_at, attempts, gave_up FROM wake_bindings`)
	if err != nil {
		return nil, fmt.Errorf("load wake bindings: %w", err)
	}
	defer rows.Close()
	var out []*Binding
	for rows.Next() {
		var b Binding
		var bound int64
		var last sql.NullInt64
		var gaveUp int
		if err := rows.Scan(&b.Route, &b.TargetID, &b.ConvURL, &bound, &last, &b.Attempts, &gaveUp); err != nil {
			return nil, fmt.Errorf("load wake bindings: %w", err)
		}
		b.BoundAt = time.UnixMilli(bound).UTC()
		if last.Valid {
			t := time.UnixMilli(last.Int64).UTC()
			b.LastWakeAt = &t
		}
		b.GaveUp = gaveUp != 0
		out = append(out, &b)
	}
	return out, rows.Err()
}

// saveBinding stores b, replacing any binding of the same route, target
// or conversation URL (one tab shows one conversation), in one
// transaction. It returns the routes whose bindings it replaced.
func (s *Service) saveBinding(ctx context.Context, b *Binding) ([]string, error) {
	var replaced []string
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		replaced = nil
		rows, err := tx.QueryContext(ctx, `SELECT route FROM wake_bindings WHERE route != ?1 AND (target_id = ?2 OR conv_url = ?3)`, b.Route, b.TargetID, b.ConvURL)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				rows.Close()
				return err
			}
			replaced = append(replaced, r)
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `DELETE FROM wake_bindings WHERE route = ?1 OR target_id = ?2 OR conv_url = ?3`, b.Route, b.TargetID, b.ConvURL); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO wake_bindings(route, target_id, conv_url, bound_at, last_wake_at, attempts, gave_up) VALUES (?,?,?,?,?,?,?)`,
			b.Route, b.TargetID, b.ConvURL, b.BoundAt.UnixMilli(), nullTime(b.LastWakeAt), b.Attempts, boolInt(b.GaveUp))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("save wake binding: %w", err)
	}
	return replaced, nil
}

// followTarget moves route's binding to a new target id (same
// conversation URL).
func (s *Service) followTarget(ctx context.Context, route, target string) error {
	_, err := s.db.W.ExecContext(ctx, `UPDATE wake_bindings SET target_id = ? WHERE route = ?`, target, route)
	if err != nil {
		return fmt.Errorf("follow wake binding to its new tab: %w", err)
	}
	return nil
}

func (s *Service) saveAttempts(ctx context.Context, route string, attempts int, gaveUp bool, lastWake *time.Time) error {
	q := `UPDATE wake_bindings SET attempts = ?, gave_up = ? WHERE route = ?`
	args := []any{attempts, boolInt(gaveUp), route}
	if lastWake != nil {
		q = `UPDATE wake_bindings SET attempts = ?, gave_up = ?, last_wake_at = ? WHERE route = ?`
		args = []any{attempts, boolInt(gaveUp), lastWake.UnixMilli(), route}
	}
	if _, err := s.db.W.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("record wake attempts: %w", err)
	}
	return nil
}

func (s *Service) deleteBinding(ctx context.Context, route string) error {
	if _, err := s.db.W.ExecContext(ctx, `DELETE FROM wake_bindings WHERE route = ?`, route); err != nil {
		return fmt.Errorf("delete wake binding: %w", err)
	}
	return nil
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
