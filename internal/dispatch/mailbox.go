package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Arrival is a terminal future result delivered to its conversation.
type Arrival = callpath.Arrival

// AnonymousPrefix marks request-scoped routes: they have no later request,
// so they have no mailbox.
const AnonymousPrefix = primitive.AnonymousRoutePrefix

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
	// Fastest path, no read of the mailbox: a probe found it empty and
	// nothing has been committed to the database since (mailboxCache).
	version, cached := d.mailbox.token(ctx, d.DB)
	if cached && d.mailbox.empty(route, version) {
		return []Arrival{}, nil
	}
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
	d.seams.probed()
	if offered == acked && waiting == 0 {
		if cached {
			d.mailbox.markEmpty(route, version)
		}
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

// mailboxCache spares a call the mailbox probe, a read of the database on
// every call of a conversation, when that read cannot have changed: it
// remembers the conversations whose mailbox a probe found empty (nothing
// offered and unacknowledged, nothing waiting), with a token read just
// before the probe: the count of this process's committed write
// transactions (store.DB.Commits) and SQLite's data_version as the cache's
// own connection last read it.
//
// Every arrival is queued by EnqueueArrival inside a write transaction.
// One of this process's that the probe did not see was committed after the
// probe began, so after the count was read: the count differs on every
// later call, and the cache answers nothing until a probe has run again.
// Another process's commit (the operator's CLI opens the database
// offline) changes data_version, which the cache reads again when
// foreignCheck has passed since it last did: such an arrival is delivered
// on the first call that begins foreignCheck after its commit, or sooner.
// A cached answer is only ever "empty", which writes nothing: the cache
// never offers an arrival, so it cannot offer one twice.
//
// The routes are kept for one token only (a new token clears them), and
// at most maxCachedRoutes of them, so the cache cannot grow with the
// number of conversations a long-running Hearth has served.
type mailboxCache struct {
	mu   sync.Mutex
	ro   *store.DB // a read-only handle on the database: its own connection
	conn *sql.Conn
	stmt *sql.Stmt // PRAGMA data_version on conn
	// version is data_version as last read, at versionAt.
	version   int64
	versionAt time.Time
	at        mailboxToken // the token the routes were found empty at
	routes    map[string]struct{}
}

// mailboxToken is what must not have changed since a probe for its answer
// to stand.
type mailboxToken struct {
	commits uint64
	version int64
}

const (
	maxCachedRoutes = 4096
	// foreignCheck is how often the cache looks for another process's
	// commits. Each look is a read transaction (~40 µs of CPU on a loaded
	// two-core machine): once a millisecond, it cost a busy Hearth a tenth
	// of a read call's CPU; ten milliseconds is still far below what a
	// person or a model could notice of an arrival's delay.
	foreignCheck = 10 * time.Millisecond
)

// open gives the cache its own read-only connection to file. Without it
// (open failed, or a Dispatcher used only for its mailbox) every call
// probes.
func (c *mailboxCache) open(ctx context.Context, file string) error {
	ro, err := store.OpenReadOnly(ctx, file)
	if err != nil {
		return fmt.Errorf("open the mailbox cache's connection: %w", err)
	}
	conn, err := ro.R.Conn(ctx)
	if err != nil {
		ro.Close()
		return fmt.Errorf("open the mailbox cache's connection: %w", err)
	}
	stmt, err := conn.PrepareContext(ctx, `PRAGMA data_version`)
	if err != nil {
		conn.Close()
		ro.Close()
		return fmt.Errorf("prepare the mailbox cache's version read: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ro, c.conn, c.stmt, c.routes = ro, conn, stmt, map[string]struct{}{}
	c.versionAt = time.Time{}
	return nil
}

// close releases the connection; the cache then answers nothing.
func (c *mailboxCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ro == nil {
		return
	}
	c.stmt.Close()
	c.conn.Close()
	c.ro.Close()
	c.ro, c.conn, c.stmt, c.routes = nil, nil, nil, nil
}

// token is the token of a probe about to begin on db; ok is false when
// there is no cache or data_version could not be read.
func (c *mailboxCache) token(ctx context.Context, db *store.DB) (t mailboxToken, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmt == nil {
		return t, false
	}
	if now := time.Now(); now.Sub(c.versionAt) >= foreignCheck || now.Before(c.versionAt) {
		if err := c.stmt.QueryRowContext(ctx).Scan(&c.version); err != nil {
			c.versionAt = time.Time{}
			return t, false
		}
		c.versionAt = now
	}
	return mailboxToken{commits: db.Commits(), version: c.version}, true
}

// empty reports whether a probe found route's mailbox empty at token t.
func (c *mailboxCache) empty(route string, t mailboxToken) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.routes == nil || t != c.at {
		return false
	}
	_, ok := c.routes[route]
	return ok
}

// markEmpty records that a probe begun at token t found route's mailbox
// empty.
func (c *mailboxCache) markEmpty(route string, t mailboxToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.routes == nil {
		return
	}
	if t != c.at || len(c.routes) >= maxCachedRoutes {
		c.at = t
		clear(c.routes)
	}
	c.routes[route] = struct{}{}
}
