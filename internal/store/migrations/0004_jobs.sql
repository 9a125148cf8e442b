-- Durable job queue (the task tool). Written only by internal/jobs.
-- A job is one executable command with its schedule, dependencies and
-- outcome. Rows are never deleted by Hearth: a terminal job keeps its result
-- so that get/wait/list can report it later.
CREATE TABLE jobs (
    id            TEXT PRIMARY KEY,
    route         TEXT NOT NULL,           -- conversation route hash
    command       TEXT NOT NULL,
    args          TEXT NOT NULL,           -- JSON array of strings
    cwd           TEXT NOT NULL DEFAULT '',
    env           TEXT NOT NULL DEFAULT '{}', -- JSON object of strings
    timeout_ms    INTEGER NOT NULL,        -- effective timeout, resolved at submit
    run_at        INTEGER NOT NULL,        -- unix milliseconds; due when <= now
    on_interrupt  TEXT NOT NULL CHECK (on_interrupt IN ('requeue', 'block')),
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'blocked', 'cancelled')),
    -- waiting counts dependencies that have not completed yet; a queued job
    -- is runnable when waiting = 0 and run_at has passed.
    waiting       INTEGER NOT NULL DEFAULT 0,
    attempts      INTEGER NOT NULL DEFAULT 0, -- times started
    interruptions INTEGER NOT NULL DEFAULT 0, -- times Hearth stopped while it ran
    exit_code     INTEGER,
    result        TEXT,                    -- JSON exec result (bounded like machine.exec)
    reason        TEXT NOT NULL DEFAULT '', -- why failed, blocked, cancelled or requeued
    outcome       TEXT,                    -- 'unknown' when interrupted with on_interrupt 'block'
    created_at    INTEGER NOT NULL,
    started_at    INTEGER,
    finished_at   INTEGER
) STRICT;
CREATE INDEX jobs_route ON jobs(route, created_at);
CREATE INDEX jobs_runnable ON jobs(waiting, run_at) WHERE state = 'queued';
CREATE INDEX jobs_running ON jobs(state) WHERE state = 'running';

-- job_deps: job_id runs only after dep_id completed.
CREATE TABLE job_deps (
    job_id TEXT NOT NULL REFERENCES jobs(id),
    dep_id TEXT NOT NULL REFERENCES jobs(id),
    PRIMARY KEY (job_id, dep_id)
) STRICT;
CREATE INDEX job_deps_dep ON job_deps(dep_id);
