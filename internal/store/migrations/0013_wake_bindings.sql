-- Wake (internal/wake): which ChatGPT tab of Hearth's own browser window
-- shows which conversation. Only the route fingerprint, the CDP target id
-- and the stable /c/<id> conversation URL identify a binding; no page
-- content, cookie or title is ever stored. The rest is Hearth's own wake
-- bookkeeping: when it was bound, when it was last woken, and how many
-- wakes were sent since the conversation last called.
CREATE TABLE wake_bindings (
    route        TEXT PRIMARY KEY,
    target_id    TEXT NOT NULL,
    conv_url     TEXT NOT NULL,
    bound_at     INTEGER NOT NULL,       -- unix milliseconds
    last_wake_at INTEGER,
    attempts     INTEGER NOT NULL DEFAULT 0,
    gave_up      INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX wake_bindings_target ON wake_bindings(target_id);
CREATE UNIQUE INDEX wake_bindings_url ON wake_bindings(conv_url);

-- A due browser_tab continuation is typed into its conversation's bound
-- tab while wake is armed: the new state 'woken'. SQLite cannot change a
-- CHECK constraint in place, so the table is rebuilt with the same rows.
CREATE TABLE continuations_woken (
    id          TEXT PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs(id),
    route       TEXT NOT NULL,
    prompt      TEXT NOT NULL,
    target_kind TEXT NOT NULL DEFAULT '' CHECK (target_kind IN ('', 'session', 'browser_tab')),
    target      TEXT NOT NULL DEFAULT '',
    due_at      INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('scheduled', 'blocked', 'dry_run', 'ready', 'woken')),
    reason      TEXT NOT NULL DEFAULT '',
    command     TEXT,                    -- JSON argv, once settled with a target
    created_at  INTEGER NOT NULL,
    settled_at  INTEGER
) STRICT;
INSERT INTO continuations_woken SELECT id, run_id, route, prompt, target_kind, target, due_at, state, reason, command, created_at, settled_at FROM continuations;
DROP TABLE continuations;
ALTER TABLE continuations_woken RENAME TO continuations;
CREATE INDEX continuations_due ON continuations(due_at) WHERE state = 'scheduled';
CREATE INDEX continuations_run ON continuations(run_id, created_at);
