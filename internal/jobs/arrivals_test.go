package jobs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/store"
)

// A queue without the dispatcher — the engine that schedules its jobs and
// whose generic futures task.* reports — refuses to start, naming the
// missing field. (Its arrivals are the engine's, through the one writer.)
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
		{"Dispatcher", &jobs.Queue{DB: db, MaxConcurrent: 1}},
	} {
		err := tc.q.Start(context.Background())
		if err == nil {
			t.Fatalf("a queue without %s started", tc.field)
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Fatalf("the refusal does not name the missing field %s: %v", tc.field, err)
		}
	}
}
