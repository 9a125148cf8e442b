-- A file operation that asks (fs.move, copy, trash, mkdir of one item or
-- many) keeps the items that make it ask, as JSON: each item's index in
-- the call's items, the file of it that asks and why (internal/govern,
-- writes.go). The Permits card names them ("… including setup.exe") and
-- lists every item under Details; the exact input stays in input. Empty
-- for every other permit, and for those asked before this change.
ALTER TABLE permits ADD COLUMN asks TEXT NOT NULL DEFAULT '';
