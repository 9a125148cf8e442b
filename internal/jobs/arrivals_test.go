package jobs_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// A queue without its parts cannot become the engine's job class: the
// refusal names the missing field. (Its arrivals are the engine's,
// through the one writer, and it reaches the engine through the calls it
// serves, dispatch.WithEngine.)
func TestQueueRefusedWithoutItsParts(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		field string
		q     *jobs.Queue
	}{
		{"DB", &jobs.Queue{Exec: noExec, MaxConcurrent: 1}},
		{"Exec", &jobs.Queue{DB: db, MaxConcurrent: 1}},
	} {
		_, err := tc.q.EngineClass()
		if err == nil {
			t.Fatalf("a queue without %s became a class", tc.field)
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Fatalf("the refusal does not name the missing field %s: %v", tc.field, err)
		}
	}
}

func noExec(context.Context, *primitive.Call, machine.ExecInput) (*machine.ExecResult, error) {
	return nil, errors.New("not run")
}
