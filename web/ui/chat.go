package ui

import (
	"context"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
)

// Chats labels conversations for people: "the chat begun at 14:02 (last
// active at 14:09)" rather than the route hash ("r:1d6f…") Hearth keeps. The times
// come from the calls of that conversation (the engine's futures); the
// hash is for Details.
type Chats struct {
	// Futures is the engine that owns the calls; nil labels every chat
	// "a chat".
	Futures *dispatch.Dispatcher
}

// Label is the readable label of a conversation route.
func (c Chats) Label(ctx context.Context, route string) string {
	if route == "" {
		return "no chat"
	}
	if strings.HasPrefix(route, dispatch.AnonymousPrefix) {
		return "a single call from no named chat"
	}
	if c.Futures == nil {
		return "a chat"
	}
	first, last, ok := c.Span(ctx, route)
	if !ok {
		return "a chat"
	}
	return ChatSpan(first, last, time.Now())
}

// Span is when the conversation route's calls Hearth keeps began and
// last came; ok is false when it keeps none. A page that lists other
// records of the chat (its changes) widens it with theirs, so that the
// label never says "last active" before something it shows.
func (c Chats) Span(ctx context.Context, route string) (first, last time.Time, ok bool) {
	if c.Futures == nil || route == "" || strings.HasPrefix(route, dispatch.AnonymousPrefix) {
		return time.Time{}, time.Time{}, false
	}
	first, last, ok, err := c.Futures.ChatSeen(ctx, route)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	return first, last, ok
}

// LabelOfFuture is Label for the conversation that made a call.
func (c Chats) LabelOfFuture(ctx context.Context, futureID string) string {
	if c.Futures == nil || futureID == "" {
		return "a chat"
	}
	route, _, _, err := c.Futures.CallOf(ctx, futureID)
	if err != nil {
		return "a chat"
	}
	return c.Label(ctx, route)
}

// ChatSpan is "the chat begun at 14:02 (last active at 14:09)" (a date is
// added for a day other than now's).
func ChatSpan(first, last, now time.Time) string {
	s := "the chat begun at " + Clock(first, now)
	if last.Sub(first) >= time.Minute {
		s += " (last active at " + Clock(last, now) + ")"
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
