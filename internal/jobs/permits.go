package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// A due job whose run now needs the operator's permit (the policy was
// tightened, an allow-rule removed since it was submitted) parks: it is
// queued again with one more condition to wait for (waiting counts the
// permit like a dependency), its attempt is not counted, and its arrival
// says that it waits and for which permit. The operator's approval
// releases it — it runs once, admitted again — and a denial or expiry
// blocks it (and its dependents) with the reason.

// parkTx parks j, claimed for a run that needs permitID, inside the
// transaction that requests the permit.
func (q *Queue) parkTx(ctx context.Context, tx *sql.Tx, j *jobRow, permitID string) error {
	reason := fmt.Sprintf("waiting for operator permit %s: the policy in force when it came due requires one", permitID)
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', attempts = attempts - 1, waiting = waiting + 1, started_at = NULL, reason = ?
		WHERE id = ? AND state = 'running'`, reason, j.ID)
	if err != nil {
		return fmt.Errorf("park job %s: %w", j.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("park job %s: it is no longer running", j.ID)
	}
	r, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, j.ID))
	if err != nil {
		return fmt.Errorf("read parked job %s: %w", j.ID, err)
	}
	return queueArrival(ctx, tx, r, "", permitID, time.Now())
}

// ReleaseTx releases, inside the operator's approval transaction, a job
// parked for a permit. It fails when the job no longer waits (cancelled
// meanwhile), which refuses the approval.
func (q *Queue) ReleaseTx(ctx context.Context, tx *sql.Tx, jobID string) error {
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET waiting = waiting - 1, reason = 'permit approved by the operator' WHERE id = ? AND state = 'queued' AND waiting > 0`, jobID)
	if err != nil {
		return fmt.Errorf("release job %s: %w", jobID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("job %s is not waiting for a permit (cancelled or settled)", jobID)
	}
	return nil
}

// RefuseTx blocks, inside the transaction that denies or expires its
// permit, a job parked for it, with why; its dependents are blocked too.
func (q *Queue) RefuseTx(ctx context.Context, tx *sql.Tx, jobID string, why *primitive.Error) error {
	now := time.Now()
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'blocked', reason = ?, finished_at = ? WHERE id = ? AND state = 'queued' AND waiting > 0`,
		why.Message, now.UnixMilli(), jobID)
	if err != nil {
		return fmt.Errorf("block job %s: %w", jobID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // cancelled meanwhile
	}
	r, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, jobID))
	if err != nil {
		return fmt.Errorf("read blocked job %s: %w", jobID, err)
	}
	if err := queueArrival(ctx, tx, r, why.Code, "", now); err != nil {
		return err
	}
	blocked, err := blockDependents(ctx, tx, jobID, StateBlocked, now)
	q.mu.Lock()
	if q.refused == nil {
		q.refused = map[string][]string{}
	}
	q.refused[jobID] = blocked
	q.mu.Unlock()
	return err
}

// Changed tells the queue, after the operator's decision committed, that
// job id (and the dependents its refusal blocked) changed: their waiters
// wake and the scheduler looks for due work.
func (q *Queue) Changed(jobID string) {
	q.mu.Lock()
	changed := append([]string{jobID}, q.refused[jobID]...)
	delete(q.refused, jobID)
	q.mu.Unlock()
	q.notify(changed)
	if q.wakeCh != nil {
		q.wake()
	}
}
