-- The fs file operations (move, copy, mkdir, trash) leave receipts in
-- fs_receipts like write and patch, so the Changes page, fs.changes, Undo
-- all, Redo and retention see them. Written only by internal/fsops.
--
-- op keeps the values 0003's CHECK allows: 'write' for an operation,
-- 'undo' for the operation that undoes one. action says what it did:
-- move, copy, mkdir, trash; restore (back from the bin) and rmdir (an
-- empty folder removed) are undos only. path is where the item is after
-- (trash: where it was), from_path where it was before (move, copy: the
-- source; restore: its place in the bin).
-- is_dir: the item is a folder; its pre/post fingerprint is then one of
-- its whole tree (names, sizes, times), not a SHA-256 of content.
-- bin_path: where the item went in the bin (trash, and the source of a
-- move across volumes); replaced_bin: where the file an overwrite
-- replaced went, so undo brings it back.
-- step: the journal of a move across volumes: NULL until the copy at the
-- destination is verified, then 'copied'; recovery at start-up finishes or
-- rolls back by it.
-- call_batch: the call that did several items at once; the Changes page
-- shows them as one change.
ALTER TABLE fs_receipts ADD COLUMN action TEXT CHECK (action IN ('move', 'copy', 'mkdir', 'trash', 'restore', 'rmdir'));
ALTER TABLE fs_receipts ADD COLUMN from_path TEXT;
ALTER TABLE fs_receipts ADD COLUMN is_dir INTEGER NOT NULL DEFAULT 0 CHECK (is_dir IN (0, 1));
ALTER TABLE fs_receipts ADD COLUMN bin_path TEXT;
ALTER TABLE fs_receipts ADD COLUMN replaced_bin TEXT;
ALTER TABLE fs_receipts ADD COLUMN step TEXT CHECK (step IN ('copied'));
ALTER TABLE fs_receipts ADD COLUMN call_batch TEXT;
CREATE INDEX fs_receipts_call_batch ON fs_receipts(call_batch) WHERE call_batch IS NOT NULL;
