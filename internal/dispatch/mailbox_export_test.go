package dispatch

import (
	"context"
	"sync/atomic"
	"testing"
)

// OpenMailboxCache gives d (a literal used for its mailbox) the cache
// Start gives a running dispatcher, and counts the reads of its mailbox
// from then on (MailboxProbes).
func OpenMailboxCache(t testing.TB, d *Dispatcher) {
	t.Helper()
	if err := d.mailbox.open(context.Background(), d.DB.Path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.mailbox.close)
	d.seams.probes = new(atomic.Int64)
}

// MailboxProbes is how many times d's Deliver read a mailbox since
// OpenMailboxCache.
func MailboxProbes(d *Dispatcher) int64 { return d.seams.probes.Load() }
