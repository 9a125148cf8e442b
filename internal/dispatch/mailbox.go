package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/route"
)

// Arrival is a terminal future result delivered to its conversation.
type Arrival = callpath.Arrival

// AnonymousPrefix marks request-scoped routes: they have no later request,
// so they have no mailbox.
const AnonymousPrefix = route.AnonymousPrefix

// Deliver returns the arrivals to piggyback on a response to the request
// with fingerprint fp in route.
//
// Delivery is at-least-once: a request whose fingerprint equals the last
// request's (a retry) is offered the same batch again; a distinct request
// acknowledges what the previous one was offered (those arrivals are then
// removed) and is offered the next batch. A batch holds at most
// MaxArrivals arrivals and MaxArrivalBytes of payload (always at least
// one arrival, so a large one cannot wedge the mailbox).
func (d *Dispatcher) Deliver(ctx context.Context, route, fp string) ([]Arrival, error) {
	if route == "" || strings.HasPrefix(route, AnonymousPrefix) {
		return []Arrival{}, nil
	}
	ctx = context.WithoutCancel(ctx)
	// Fast path, one read and no write: nothing offered before and nothing
	// waiting beyond what was acknowledged.
	var acked, offered int64
	var offeredFP string
	var waiting int
	stmt, err := d.DB.ReadStmt(ctx, `SELECT COALESCE(c.acked_seq, 0), COALESCE(c.offered_seq, 0),
			EXISTS(SELECT 1 FROM arrivals a WHERE a.route = ?1 AND a.seq > COALESCE(c.acked_seq, 0))
		FROM (SELECT 1) LEFT JOIN cursors c ON c.route = ?1`)
	if err != nil {
		return nil, err
	}
	if err := stmt.QueryRowContext(ctx, route).Scan(&acked, &offered, &waiting); err != nil {
		return nil, fmt.Errorf("read mailbox: %w", err)
	}
	if offered == acked && waiting == 0 {
		return []Arrival{}, nil
	}
	var out []Arrival
	err = d.DB.InTx(ctx, func(tx *sql.Tx) error {
		out = nil
		err := tx.QueryRowContext(ctx, `SELECT acked_seq, offered_seq, offered_fp FROM cursors WHERE route = ?`, route).Scan(&acked, &offered, &offeredFP)
		if errors.Is(err, sql.ErrNoRows) {
			acked, offered, offeredFP = 0, 0, ""
		} else if err != nil {
			return err
		}
		if fp != "" && fp == offeredFP {
			out, err = queryArrivals(ctx, tx, `SELECT seq, future_id, payload, created_at FROM arrivals WHERE route = ? AND seq > ? AND seq <= ? ORDER BY seq`, route, acked, offered)
			return err
		}
		acked = offered
		if _, err := tx.ExecContext(ctx, `DELETE FROM arrivals WHERE route = ? AND seq <= ?`, route, acked); err != nil {
			return err
		}
		rows, err := queryArrivals(ctx, tx, `SELECT seq, future_id, payload, created_at FROM arrivals WHERE route = ? AND seq > ? ORDER BY seq LIMIT ?`, route, acked, d.MaxArrivals)
		if err != nil {
			return err
		}
		size := 0
		for _, a := range rows {
			if len(out) > 0 && size+len(a.Envelope) > d.MaxArrivalBytes {
				break
			}
			size += len(a.Envelope)
			out = append(out, a)
		}
		offered = acked
		if len(out) > 0 {
			offered = out[len(out)-1].Seq
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO cursors(route, acked_seq, offered_seq, offered_fp) VALUES (?,?,?,?)
			ON CONFLICT(route) DO UPDATE SET acked_seq = excluded.acked_seq, offered_seq = excluded.offered_seq, offered_fp = excluded.offered_fp`,
			route, acked, offered, fp)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("deliver arrivals: %w", err)
	}
	if out == nil {
		out = []Arrival{}
	}
	return out, nil
}

func queryArrivals(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]Arrival, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Arrival
	for rows.Next() {
		var a Arrival
		var payload string
		var created int64
		if err := rows.Scan(&a.Seq, &a.FutureID, &payload, &created); err != nil {
			return nil, err
		}
		a.Envelope = json.RawMessage(payload)
		a.CompletedAt = time.UnixMilli(created).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}
