-- Retention (internal/artifacts, internal/fsops) reads only the few live
-- rows of tables that grow for ever; these partial indexes let it find
-- them without scanning the finished ones.

-- Unfinished futures: their input and result, and the results of the
-- dependencies a waiting future will read back, keep artifacts alive.
CREATE INDEX futures_unfinished ON futures(id) WHERE finished_at IS NULL;

-- Open runs: their checkpoint text may name artifacts.
CREATE INDEX runs_open ON runs(id) WHERE state = 'open';

-- Arrivals older than the artifact limit are expired by the artifact pass.
CREATE INDEX arrivals_created ON arrivals(created_at);

-- Deleting a receipt looks up the receipts that point at it (the prune's
-- own checks and the foreign-key checks of both self-references); without
-- these, each of those lookups scans the whole table.
CREATE INDEX fs_receipts_undoes ON fs_receipts(undoes) WHERE undoes IS NOT NULL;
CREATE INDEX fs_receipts_undone_by ON fs_receipts(undone_by) WHERE undone_by IS NOT NULL;
