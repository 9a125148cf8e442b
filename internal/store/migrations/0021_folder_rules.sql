-- The operator's folder rules (internal/govern, folders.go): "always allow
-- hidden files and programs in this folder", made from a permit card.
-- They cover writes the allowlist of ordinary writes leaves out, never a
-- persistence place or a file inside .git.
CREATE TABLE folder_rules (
    id         TEXT PRIMARY KEY,
    folder     TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
