-- The Changes page (web/changes) and fs.changes list a conversation's fs
-- receipts; an operator's undo of them is a receipt too. Written only by
-- internal/fsops.
--
-- future_id: the call that made the receipt, so the page can name the
-- approval (permits.future_id) that allowed it; NULL for receipts made
-- before this migration and for the operator's own.
-- operator: the operator's name when the receipt is an undo (or redo) the
-- operator made on the Changes page, NULL when a conversation made it. It
-- keeps the conversation's route, so the page shows it with that chat.
-- batch: the one "Undo all" (or its "Redo") the receipt belongs to.
ALTER TABLE fs_receipts ADD COLUMN future_id TEXT;
ALTER TABLE fs_receipts ADD COLUMN operator TEXT;
ALTER TABLE fs_receipts ADD COLUMN batch TEXT;
CREATE INDEX fs_receipts_route ON fs_receipts(route, created_at);
CREATE INDEX fs_receipts_batch ON fs_receipts(batch) WHERE batch IS NOT NULL;
-- The page finds a spilled copy of a content by its hash.
CREATE INDEX fs_receipts_spilled ON fs_receipts(pre_sha256) WHERE prior_file IS NOT NULL;

-- A pruned receipt's tombstone keeps its path, so the page can say which
-- file's earlier changes can no longer be undone.
ALTER TABLE fs_receipts_pruned ADD COLUMN path TEXT;
