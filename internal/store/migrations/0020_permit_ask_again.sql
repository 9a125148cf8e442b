-- A denied call asked again within a while answers the denial at once
-- instead of a new card (internal/govern, denial.go); the operator ends
-- that early with "Ask again" on the Permits page: when and by whom.
ALTER TABLE permits ADD COLUMN ask_again_at INTEGER;
ALTER TABLE permits ADD COLUMN ask_again_by TEXT NOT NULL DEFAULT '';
