package ui

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
)

// Chats labels conversations for people: "chat seen first at 14:02, last
// at 14:09" rather than the route hash ("r:1d6f…") Hearth keeps. The times
// come from the calls of that conversation (the futures table); the hash
// is for Details.
type Chats struct {
	// DB is the database's read handle; nil labels every chat "a chat".
	DB *sql.DB
}

// Label is the readable label of a conversation route.
func (c Chats) Label(ctx context.Context, route string) string {
	if route == "" {
		return "no chat"
	}
	if strings.HasPrefix(route, dispatch.AnonymousPrefix) {
		return "a single call from no named chat"
	}
	if c.DB == nil {
		return "a chat"
	}
	var first, last sql.NullInt64
	err := c.DB.QueryRowContext(ctx,
		`SELECT MIN(created_at), MAX(COALESCE(finished_at, started_at, created_at)) FROM futures WHERE route = ?`, route).Scan(&first, &last)
	if err != nil || !first.Valid {
		return "a chat"
	}
	return ChatSpan(time.UnixMilli(first.Int64), time.UnixMilli(last.Int64), time.Now())
}

// LabelOfFuture is Label for the conversation that made a call.
func (c Chats) LabelOfFuture(ctx context.Context, futureID string) string {
	if c.DB == nil || futureID == "" {
		return "a chat"
	}
	var route string
	err := c.DB.QueryRowContext(ctx, `SELECT route FROM futures WHERE id = ?`, futureID).Scan(&route)
	if errors.Is(err, sql.ErrNoRows) || err != nil {
		return "a chat"
	}
	return c.Label(ctx, route)
}

// ChatSpan is "chat seen first at 14:02, last at 14:09" (a date is added
// for a day other than now's).
func ChatSpan(first, last, now time.Time) string {
	s := "chat seen first at " + Clock(first, now)
	if last.Sub(first) >= time.Minute {
		s += ", last at " + Clock(last, now)
	}
	return s
}

// Clock is a time for a person: "14:05" today, "2 Jan 14:05" another day,
// in the machine's local zone.
func Clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04")
	}
	if t.Year() == now.Year() {
		return t.Format("2 Jan 15:04")
	}
	return t.Format("2 Jan 2006 15:04")
}
