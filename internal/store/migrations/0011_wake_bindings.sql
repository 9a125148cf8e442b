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
