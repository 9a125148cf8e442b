-- Core dispatch state: futures, per-conversation mailboxes and cursors, artifacts.
CREATE TABLE futures (
    id          TEXT PRIMARY KEY,
    route       TEXT NOT NULL,
    primitive   TEXT NOT NULL,
    input       TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    state       TEXT NOT NULL,          -- queued, running, completed, failed, blocked, cancelled
    detached    INTEGER NOT NULL DEFAULT 0,
    result      TEXT,                   -- JSON envelope once terminal
    outcome     TEXT,                   -- unknown when interrupted
    created_at  INTEGER NOT NULL,       -- unix milliseconds
    started_at  INTEGER,
    finished_at INTEGER
) STRICT;
CREATE INDEX futures_route ON futures(route, created_at);
CREATE INDEX futures_state ON futures(state);

CREATE TABLE arrivals (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    route      TEXT NOT NULL,
    future_id  TEXT NOT NULL,
    payload    TEXT NOT NULL,           -- JSON
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX arrivals_route ON arrivals(route, seq);

-- cursors hold at-least-once delivery state: what the last distinct request
-- of a conversation was offered, and what is acknowledged.
CREATE TABLE cursors (
    route       TEXT PRIMARY KEY,
    acked_seq   INTEGER NOT NULL DEFAULT 0,
    offered_seq INTEGER NOT NULL DEFAULT 0,
    offered_fp  TEXT NOT NULL DEFAULT '',
    offered     TEXT NOT NULL DEFAULT '[]' -- JSON array of seqs offered to offered_fp
) STRICT;

CREATE TABLE artifacts (
    id         TEXT PRIMARY KEY,
    route      TEXT NOT NULL,
    name       TEXT NOT NULL,
    mime       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    file       TEXT NOT NULL,           -- relative to the artifacts directory
    source     TEXT NOT NULL,           -- primitive or future that produced it
    truncated  INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX artifacts_created ON artifacts(created_at);
