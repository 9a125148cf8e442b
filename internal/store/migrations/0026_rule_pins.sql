-- An allow-rule pins what the permit card showed (internal/govern,
-- rulepins.go): the program's file and every file the card's arguments
-- named, by real path and SHA-256, and the folder by its real path, as
-- JSON. A rule made before has no pins (NULL): a call under it whose
-- arguments name an existing file asks.
ALTER TABLE rules ADD COLUMN pins TEXT;
-- A rule with no arguments made before this change covered the program
-- with any arguments (a rule from before 0023, or a custom one). It is
-- narrowed to the program with no arguments; the Permits page says so.
ALTER TABLE rules ADD COLUMN narrowed INTEGER NOT NULL DEFAULT 0;
UPDATE rules SET narrowed = 1 WHERE args = '[]';
