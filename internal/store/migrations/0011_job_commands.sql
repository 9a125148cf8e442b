-- A job belongs to the task.submit command that queued it: its runs are
-- journaled under command ids derived from the job's id, and governance
-- admits each run as a fresh call (internal/govern jobruns.go). A submit the
-- operator approved covers its jobs' runs; the UNKNOWN a sibling of the same
-- submit opened when it was interrupted does not refuse them.
ALTER TABLE jobs ADD COLUMN command_id TEXT;
