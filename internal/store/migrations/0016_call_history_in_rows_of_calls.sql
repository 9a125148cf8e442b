-- Call history leaves events for a table of its own, rows of a
-- conversation's calls instead of a row per call: the recorder writes each
-- conversation's part of a batch as one row (or a few: at most 64 calls a
-- row), and a conversation's history is trimmed by a range of its key.
-- total is a running count of the conversation's recorded calls, up to and
-- including the row's last; sigs holds the row's primitives, oldest first,
-- one per line (primitive names hold no newline).
CREATE TABLE call_history (
    route TEXT NOT NULL,
    total INTEGER NOT NULL,
    calls INTEGER NOT NULL CHECK (calls > 0),
    at    INTEGER NOT NULL,          -- unix milliseconds of the row's last call
    sigs  TEXT NOT NULL,
    PRIMARY KEY (route, total)
) STRICT, WITHOUT ROWID;
INSERT INTO call_history(route, total, calls, at, sigs)
    SELECT route, row_number() OVER (PARTITION BY route ORDER BY seq), 1, at, entity_id
    FROM events WHERE kind = 'call';
DELETE FROM events WHERE kind = 'call';
-- events is now append-only without exception, and its entity index
-- needs no condition to leave call history out.
DROP TRIGGER events_no_delete;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
DROP INDEX events_entity;
CREATE INDEX events_entity ON events(entity_id, seq);
