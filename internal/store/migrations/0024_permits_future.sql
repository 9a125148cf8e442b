-- A future's permits are looked up by the future: whether one was
-- approved (start-up, the Ledger and Changes pages' approvals), the
-- pending one to withdraw when the call is cancelled, the latest for
-- parked work. Without this each lookup read every permit ever asked.
CREATE INDEX permits_future ON permits(future_id, created_at);
