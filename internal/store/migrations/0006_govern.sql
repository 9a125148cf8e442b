-- Governance: command ids, open UNKNOWN outcomes, permits, allow-rules and
-- the operator-controlled settings (e-stop latch, held queue, policy mode).
ALTER TABLE futures ADD COLUMN command_id TEXT;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE commands (
    command_id   TEXT PRIMARY KEY,
    route        TEXT NOT NULL,
    primitive    TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    future_id    TEXT NOT NULL,
    state        TEXT NOT NULL,        -- running, or the terminal envelope state, or unknown
    envelope     TEXT,
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER
) STRICT;
CREATE INDEX commands_state ON commands(state);

CREATE TABLE unknowns (
    command_id    TEXT PRIMARY KEY,
    route         TEXT NOT NULL,
    primitive     TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    reconciled_at INTEGER,
    reconciled_by TEXT,
    observed      TEXT
) STRICT;
CREATE INDEX unknowns_open ON unknowns(route) WHERE reconciled_at IS NULL;

CREATE TABLE permits (
    id           TEXT PRIMARY KEY,
    route        TEXT NOT NULL,
    primitive    TEXT NOT NULL,
    input        TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    future_id    TEXT NOT NULL,
    command_id   TEXT NOT NULL,
    state        TEXT NOT NULL,        -- pending, approved, denied, expired
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    decided_at   INTEGER,
    decided_by   TEXT
) STRICT;
CREATE INDEX permits_pending ON permits(expires_at) WHERE state = 'pending';

CREATE TABLE rules (
    id          TEXT PRIMARY KEY,
    program     TEXT NOT NULL,          -- absolute path, base name, or glob
    cwd_root    TEXT NOT NULL DEFAULT '',
    interpreter INTEGER NOT NULL DEFAULT 0,
    created_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;
