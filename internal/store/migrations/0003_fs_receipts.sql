-- fs undo receipts. Every fs write, patch and undo inserts one row in state
-- 'pending' before the temporary file is renamed over the target, and marks it
-- 'committed' once the rename has happened; a row left 'pending' by a crash is
-- settled at the next start by comparing the file's hash with pre/post
-- ('committed' if the new content is there, 'void' otherwise).
CREATE TABLE fs_receipts (
    id             TEXT PRIMARY KEY,
    route          TEXT NOT NULL,            -- conversation route hash ('' when none)
    op             TEXT NOT NULL CHECK (op IN ('write', 'patch', 'undo')),
    path           TEXT NOT NULL,            -- resolved absolute path
    existed_before INTEGER NOT NULL CHECK (existed_before IN (0, 1)),
    pre_sha256     TEXT,                     -- NULL when the file did not exist before
    post_sha256    TEXT,                     -- NULL when the operation removed the file
    prior          BLOB,                     -- content before, when kept inline
    prior_file     TEXT,                     -- file name under the spill directory, when spilled
    prior_size     INTEGER NOT NULL DEFAULT 0,
    undoes         TEXT REFERENCES fs_receipts(id), -- for op 'undo': the receipt it reverted
    state          TEXT NOT NULL CHECK (state IN ('pending', 'committed', 'void')),
    created_at     INTEGER NOT NULL,         -- unix milliseconds
    committed_at   INTEGER,
    undone_at      INTEGER,
    undone_by      TEXT REFERENCES fs_receipts(id),
    CHECK (prior IS NULL OR prior_file IS NULL)
) STRICT;
CREATE INDEX fs_receipts_path ON fs_receipts(path, created_at);
CREATE INDEX fs_receipts_pending ON fs_receipts(state) WHERE state = 'pending';

-- Directories fs has created temporary files in, so that a start-up sweep can
-- remove '.hearth-tmp-*' files a crash left behind.
CREATE TABLE fs_touched_dirs (
    dir        TEXT PRIMARY KEY,
    touched_at INTEGER NOT NULL
) STRICT;
