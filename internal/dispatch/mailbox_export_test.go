package dispatch

import (
	"context"
	"testing"
)

// OpenMailboxCache gives d (a literal used for its mailbox) the cache
// Start gives a running dispatcher.
func OpenMailboxCache(t testing.TB, d *Dispatcher) {
	t.Helper()
	if err := d.mailbox.open(context.Background(), d.DB.Path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.mailbox.close)
}

// MailboxProbes is how many times d's Deliver read a mailbox.
func MailboxProbes(d *Dispatcher) int64 { return d.mailbox.probes.Load() }
