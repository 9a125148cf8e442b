// Package jobstest writes the job view for other packages' tests, so that
// they set up a job without naming the jobs table or its columns
// (internal/jobs owns it: docs/ARCHITECTURE.md, "Who owns which table").
package jobstest

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// Job is a job's row beside its future (which the caller writes, through
// dispatchtest, with the same id and class "job"), as InsertJobs writes it.
type Job struct {
	ID, Command string
	// Args is the JSON array of the command's arguments; "" writes [].
	Args      string
	TimeoutMS int64
	// Result is the run's JSON result once it ended; "" before.
	Result string
}

// InsertJobs writes js, as the job queue records a submitted job (and its
// result once it ran), failing the test on an error. Many rows are best
// written through a transaction (ex a *sql.Tx).
func InsertJobs(t testing.TB, ex storetest.Execer, js ...Job) {
	t.Helper()
	ctx := context.Background()
	st, err := ex.PrepareContext(ctx, `INSERT INTO jobs(id, command, args, timeout_ms, result) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatalf("insert jobs: %v", err)
	}
	defer st.Close()
	for _, j := range js {
		args := j.Args
		if args == "" {
			args = "[]"
		}
		var result any
		if j.Result != "" {
			result = j.Result
		}
		if _, err := st.ExecContext(ctx, j.ID, j.Command, args, j.TimeoutMS, result); err != nil {
			t.Fatalf("insert job %s: %v", j.ID, err)
		}
	}
}
