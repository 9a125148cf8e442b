package govern

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// TestLiveQueriesUseIndexes checks that every query of LiveText reads
// through an index (a partial one, where the table keeps its finished
// history): a plain "SCAN table" would read every finished row each batch
// of the artifact prune, with the write connection held.
func TestLiveQueriesUseIndexes(t *testing.T) {
	storetest.ReadThroughIndexes(t, livePermits)
}

// TestFutureLookupsUseIndexes: a future's permits are found through
// permits_future, not by reading every permit ever asked.
func TestFutureLookupsUseIndexes(t *testing.T) {
	storetest.ReadThroughIndexes(t, approvedOfFuture, pendingOfFuture, latestOfFuture, approvalsOf+")")
}
