-- Dependent futures (internal/dispatch/deps.go), the run tool's durable
-- state and event log (internal/runs), and recipes (internal/recipes).

-- future_deps: future_id (state 'waiting' until then) runs only after every
-- dep_id settled. Written by dispatch.Enqueue in the same transaction as the
-- future.
CREATE TABLE future_deps (
    future_id TEXT NOT NULL,
    dep_id    TEXT NOT NULL,
    PRIMARY KEY (future_id, dep_id)
) STRICT;
CREATE INDEX future_deps_dep ON future_deps(dep_id);

-- events: the append-only log runs, continuations, recipes and scatter write
-- to. route is '' for entities every conversation sees (runs, recipes) and
-- the conversation's route hash otherwise (scatter, call history). Kind
-- 'call' rows are the per-conversation history of top-level primitive
-- calls recipe.suggest reads (entity_id is the primitive); they are the
-- only rows ever deleted, to keep that history bounded.
CREATE TABLE events (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,          -- unix milliseconds
    route     TEXT NOT NULL DEFAULT '',
    kind      TEXT NOT NULL,
    entity_id TEXT NOT NULL DEFAULT '',
    data      TEXT NOT NULL DEFAULT '{}' -- JSON object
) STRICT;
CREATE INDEX events_entity ON events(entity_id, seq);
CREATE INDEX events_route_kind ON events(route, kind, seq);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events WHEN OLD.kind <> 'call'
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;

-- runs: durable objectives with their latest checkpoint. Visible to every
-- conversation (a run is how work continues in a new one); route records
-- which conversation created it.
CREATE TABLE runs (
    id                  TEXT PRIMARY KEY,
    route               TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    objective           TEXT NOT NULL,
    acceptance_criteria TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    summary             TEXT NOT NULL DEFAULT '',
    next_actions        TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    pending_task_ids    TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    version             INTEGER NOT NULL DEFAULT 1,  -- checkpoints applied
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    closed_at           INTEGER
) STRICT;
CREATE INDEX runs_updated ON runs(updated_at);

-- continuations: a prompt to resume a run later. Hearth never resumes a
-- conversation by itself: a due record becomes 'blocked' (no target),
-- 'dry_run' (a target, oracle not armed) or 'ready' (armed: the command is
-- built but still not run). No secret is stored.
CREATE TABLE continuations (
    id          TEXT PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs(id),
    route       TEXT NOT NULL,
    prompt      TEXT NOT NULL,
    target_kind TEXT NOT NULL DEFAULT '' CHECK (target_kind IN ('', 'session', 'browser_tab')),
    target      TEXT NOT NULL DEFAULT '',
    due_at      INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('scheduled', 'blocked', 'dry_run', 'ready')),
    reason      TEXT NOT NULL DEFAULT '',
    command     TEXT,                    -- JSON argv, once settled with a target
    created_at  INTEGER NOT NULL,
    settled_at  INTEGER
) STRICT;
CREATE INDEX continuations_due ON continuations(due_at) WHERE state = 'scheduled';
CREATE INDEX continuations_run ON continuations(run_id, created_at);

-- recipes: named sequences of primitive steps, shared by every conversation.
CREATE TABLE recipes (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    steps       TEXT NOT NULL,           -- JSON [{primitive, input}]
    params      TEXT NOT NULL DEFAULT '[]', -- JSON array of placeholder names
    route       TEXT NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

-- recipe_runs: one finished recipe run with its trace (per step: primitive,
-- input sha256, state, timing). Kept after the recipe is deleted.
CREATE TABLE recipe_runs (
    id          TEXT PRIMARY KEY,
    recipe_id   TEXT NOT NULL,
    recipe_name TEXT NOT NULL,
    route       TEXT NOT NULL,
    state       TEXT NOT NULL,
    failed_step INTEGER,
    trace       TEXT NOT NULL DEFAULT '[]',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL
) STRICT;
CREATE INDEX recipe_runs_recipe ON recipe_runs(recipe_id, started_at);
