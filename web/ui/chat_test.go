package ui

import (
	"testing"
	"time"
)

func TestChatSpanAndClock(t *testing.T) {
	now := time.Date(2026, 3, 4, 15, 0, 0, 0, time.Local)
	first := time.Date(2026, 3, 4, 14, 2, 0, 0, time.Local)
	if got := ChatSpan(first, first.Add(7*time.Minute), now); got != "the chat begun at 14:02 (last active at 14:09)" {
		t.Errorf("ChatSpan = %q", got)
	}
	if got := ChatSpan(first, first.Add(10*time.Second), now); got != "the chat begun at 14:02" {
		t.Errorf("ChatSpan within a minute = %q", got)
	}
	if got := Clock(first.AddDate(0, 0, -1), now); got != "3 Mar 14:02" {
		t.Errorf("Clock yesterday = %q", got)
	}
	if got := Clock(first.AddDate(-1, 0, 0), now); got != "4 Mar 2025 14:02" {
		t.Errorf("Clock last year = %q", got)
	}
	if got := (Chats{}).Label(t.Context(), "anon:req_1"); got != "a single call from no named chat" {
		t.Errorf("anonymous label = %q", got)
	}
}

func TestPageTitle(t *testing.T) {
	if got := PageTitle("Permits", 0); got != "Permits · Hearth control panel" {
		t.Errorf("no count: %q", got)
	}
	if got := PageTitle("Status", 3); got != "(3) Status · Hearth control panel" {
		t.Errorf("with count: %q", got)
	}
}
