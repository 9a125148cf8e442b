package govern

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Approval is the operator's approval a call ran under.
type Approval struct {
	PermitID string
	By       string
	At       time.Time
}

// approvalsOf is the approvals of some futures, less the closing ")" and
// a "?" for each future after the first.
const approvalsOf = `SELECT future_id, id, COALESCE(decided_by, ''), COALESCE(decided_at, 0) FROM permits
			WHERE state = 'approved' AND future_id IN (?`

// ApprovalsOf returns the approvals of the calls futureIDs (at most 500
// looked up; a call that ran without asking has none), for the panel's
// Changes page.
func (o *Decisions) ApprovalsOf(ctx context.Context, futureIDs []string) (map[string]Approval, error) {
	out := map[string]Approval{}
	for len(futureIDs) > 0 {
		n := min(len(futureIDs), 500)
		batch := futureIDs[:n]
		futureIDs = futureIDs[n:]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		rows, err := o.G.DB.R.QueryContext(ctx, approvalsOf+strings.Repeat(",?", len(batch)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up approvals: %w", err)
		}
		for rows.Next() {
			var fut string
			var a Approval
			var at int64
			if err := rows.Scan(&fut, &a.PermitID, &a.By, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("look up approvals: %w", err)
			}
			a.At = time.UnixMilli(at)
			out[fut] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("look up approvals: %w", err)
		}
	}
	return out, nil
}
