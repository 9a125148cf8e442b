package jobs

import (
	"context"
	"fmt"
)

// Listed is a job as the operator's control panel lists it: the summary
// task.list gives, plus the conversation (route hash) it belongs to.
type Listed struct {
	Summary
	Route string
}

// ListAllJobs returns the jobs of every conversation, newest first,
// without results or environment values. It is for the operator's control
// panel; tools use ListJobs, scoped to their own conversation.
func (q *Queue) ListAllJobs(ctx context.Context, limit int) ([]Listed, error) {
	rows, err := q.DB.R.QueryContext(ctx, `SELECT `+jobCols+jobFrom+`WHERE f.class = 'job' ORDER BY f.created_at DESC, f.rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list all jobs: %w", err)
	}
	defer rows.Close()
	out := []Listed{}
	for rows.Next() {
		r, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list all jobs: %w", err)
		}
		runAt := r.RunAt
		out = append(out, Listed{Route: r.route, Summary: Summary{Kind: "job", ID: r.ID, State: r.State, Command: r.Command,
			Attempts: r.Attempts, ExitCode: r.ExitCode, Reason: r.Reason, Outcome: r.Outcome, RunAt: &runAt,
			CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}})
	}
	return out, rows.Err()
}
