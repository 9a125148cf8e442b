-- The risk table's case of a permit's call (internal/risk), what it acts
-- on (a path, an application) and what it would do in plain words, for
-- the operator's card. An approved permit of a UI call with case
-- 'ui_app' allows that application for the rest of its conversation.
ALTER TABLE permits ADD COLUMN risk_case TEXT NOT NULL DEFAULT '';
ALTER TABLE permits ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE permits ADD COLUMN said TEXT NOT NULL DEFAULT '';

-- Writes that make a program start by itself, run without asking because
-- the mode trusts them: journaled as flagged (the intent's "flagged") and
-- listed on the Status page from here.
CREATE TABLE flagged_writes (
    command_id TEXT PRIMARY KEY,
    primitive  TEXT NOT NULL,
    path       TEXT NOT NULL,
    said       TEXT NOT NULL,
    at         INTEGER NOT NULL      -- unix milliseconds
) STRICT;
CREATE INDEX flagged_writes_at ON flagged_writes(at);
