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
// conversation that its jobs ended, so it refuses to start.
func TestQueueStartRefusedWithoutArrivalWriter(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := &jobs.Queue{DB: db, MaxConcurrent: 1}
	err = q.Start(context.Background())
	if err == nil {
		q.Stop()
		t.Fatal("a queue without an arrival writer started")
	}
	if !strings.Contains(err.Error(), "Arrivals") {
		t.Fatalf("the refusal does not name the missing field Arrivals: %v", err)
	}
}
