package jobs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/store"
)

// A queue without the shared arrival writer could not tell any
// conversation that its jobs ended: it refuses to start, naming the
// missing field. (task.* reports generic futures through the dispatcher
// running each call, dispatch.WithEngine, which refuses a call outside a
// dispatcher; the queue holds none.)
func TestQueueStartRefusedWithoutItsParts(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		field string
		q     *jobs.Queue
	}{
		{"Arrivals", &jobs.Queue{DB: db, MaxConcurrent: 1}},
	} {
		err := tc.q.Start(context.Background())
		if err == nil {
			tc.q.Stop()
			t.Fatalf("a queue without %s started", tc.field)
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Fatalf("the refusal does not name the missing field %s: %v", tc.field, err)
		}
	}
}
