package autostart

import (
	"errors"
	"testing"
)

// TestLogonStateAsksOnce: the logon task's state is read from Task
// Scheduler once, however often a page shows it, and again only after
// Hearth changed the task (Enable, Disable) or Forget; a failed read is
// asked again.
func TestLogonStateAsksOnce(t *testing.T) {
	queries, registered := 0, false
	fail := errors.New("schtasks failed")
	var next error
	l := &LogonState{
		query: func() (bool, error) {
			queries++
			if next != nil {
				err := next
				next = nil
				return false, err
			}
			return registered, nil
		},
		enable:  func(string) error { registered = true; return nil },
		disable: func() error { registered = false; return nil },
	}
	read := func(want bool) {
		t.Helper()
		on, err := l.Enabled()
		if err != nil || on != want {
			t.Fatalf("Enabled: %v %v, want %v", on, err, want)
		}
	}
	for range 40 {
		read(false)
	}
	if queries != 1 {
		t.Fatalf("40 reads started schtasks %d times, want 1", queries)
	}
	if err := l.Enable(`C:\Hearth\hearth-tray.exe`); err != nil {
		t.Fatal(err)
	}
	read(true)
	read(true)
	if err := l.Disable(); err != nil {
		t.Fatal(err)
	}
	read(false)
	if queries != 3 {
		t.Fatalf("after Enable and Disable: %d queries, want 3", queries)
	}
	l.Forget()
	next = fail
	if _, err := l.Enabled(); !errors.Is(err, fail) {
		t.Fatalf("a failed read: %v", err)
	}
	read(false)
	if queries != 5 {
		t.Fatalf("a failed read was remembered: %d queries, want 5", queries)
	}
}
