package jobs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/store"
)

// A queue without the shared arrival writer could not tell any
// conversation that its jobs ended, and one without the dispatcher would
// silently leave generic futures out of task.*: both refuse to start,
// naming the missing field.
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
		{"Arrivals", &jobs.Queue{DB: db, MaxConcurrent: 1, Dispatcher: &dispatch.Dispatcher{DB: db}}},
		{"Dispatcher", &jobs.Queue{DB: db, MaxConcurrent: 1, Arrivals: &dispatch.Arrivals{}}},
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
