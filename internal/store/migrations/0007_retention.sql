-- Retention (config artifact_retention_days, receipt_retention_days):
-- artifacts and fs undo receipts older than the limit are pruned.

-- The receipt pruner selects by age.
CREATE INDEX fs_receipts_created ON fs_receipts(created_at);

-- A pruned receipt leaves its id behind, so that undo of it says the
-- receipt expired instead of that it never existed. Written only by
-- internal/fsops, in the transaction that deletes the receipt.
CREATE TABLE fs_receipts_pruned (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,        -- the receipt's own created_at
    pruned_at  INTEGER NOT NULL         -- unix milliseconds
) STRICT, WITHOUT ROWID;
