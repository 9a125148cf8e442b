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
	rs, err := q.list(ctx, "", limit)
	if err != nil {
		return nil, fmt.Errorf("list all jobs: %w", err)
	}
	out := []Listed{}
	for _, r := range rs {
		runAt := r.RunAt
		out = append(out, Listed{Route: r.route, Summary: Summary{Kind: "job", ID: r.ID, State: r.State, Command: r.Command,
			Attempts: r.Attempts, ExitCode: r.ExitCode, Reason: r.Reason, Outcome: r.Outcome, StoppedBy: r.StoppedBy, RunAt: &runAt,
			CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}})
	}
	return out, nil
}
