-- A durable job is a future of the dispatcher (internal/dispatch
-- schedule.go): one engine, one dependency table (future_deps), one
-- recovery, one id space. The engine's scheduling options live on the
-- future: its class (NULL for a call's future, 'job' for a job), its due
-- time, its attempts and interruptions, its interruption rule and the
-- command that queued it (parent: its approval covers the runs). What only
-- a job has (its command, arguments, environment, exit code, exec result and
-- the reason task.* reports) stays in jobs, keyed by the future id.
ALTER TABLE futures ADD COLUMN class TEXT;
ALTER TABLE futures ADD COLUMN run_at INTEGER;              -- unix ms; due when <= now
ALTER TABLE futures ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE futures ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE futures ADD COLUMN on_interrupt TEXT;           -- requeue | block; NULL: a call's (unknown)
ALTER TABLE futures ADD COLUMN parent TEXT;                 -- command id of the task.submit that queued it
CREATE INDEX futures_due ON futures(class, run_at) WHERE state = 'queued' AND class IS NOT NULL;
CREATE INDEX futures_class ON futures(class, created_at) WHERE class IS NOT NULL;

-- Every job of the old queue becomes a future: a queued job held for a
-- permit (pending, or decided by the operator but not yet carried out when
-- the old queue stopped) is parked, so the decision is carried out at
-- start-up; queued with dependencies outstanding is waiting; the rest keep
-- their state. The input is what governance saw of the run: the job
-- with its environment's names only. A job that asked for a permit keeps
-- the exact text that permit was asked for (the old code's Go encoding,
-- which escapes & < > and sorts the environment's names, unlike
-- json_object), so the permit's digest still matches the run it covers
-- and an approval is not asked for again.
INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at, started_at, finished_at, outcome,
                    command_id, class, run_at, attempts, interruptions, on_interrupt, parent)
SELECT j.id, j.route, 'task.submit',
       COALESCE((SELECT p.input FROM permits p WHERE p.future_id = j.id ORDER BY p.created_at DESC, p.rowid DESC LIMIT 1),
                json_object('job', json_object('command', j.command, 'args', json(j.args), 'cwd', j.cwd,
                   'env', (SELECT json_group_object(e.key, '') FROM json_each(j.env) e), 'timeout_ms', j.timeout_ms))),
       '',
       CASE WHEN j.state = 'queued' AND EXISTS (SELECT 1 FROM permits p WHERE p.future_id = j.id AND p.state = 'pending') THEN 'permit'
            WHEN j.state = 'queued' AND j.waiting > 0 AND EXISTS (SELECT 1 FROM permits p WHERE p.future_id = j.id) THEN 'permit'
            WHEN j.state = 'queued' AND j.waiting > 0 THEN 'waiting'
            ELSE j.state END,
       1, j.created_at, j.started_at, j.finished_at, j.outcome,
       CASE WHEN j.attempts > 0 THEN j.id || '/run' || j.attempts END,
       'job', j.run_at, j.attempts, j.interruptions, j.on_interrupt, j.command_id
FROM jobs j ORDER BY j.rowid;

INSERT INTO future_deps(future_id, dep_id) SELECT job_id, dep_id FROM job_deps ORDER BY rowid;

CREATE TABLE jobs_view (
    id          TEXT PRIMARY KEY,        -- the job's future id
    command     TEXT NOT NULL,
    args        TEXT NOT NULL,           -- JSON array of strings
    cwd         TEXT NOT NULL DEFAULT '',
    env         TEXT NOT NULL DEFAULT '{}', -- JSON object of strings (values never reported)
    timeout_ms  INTEGER NOT NULL,        -- effective timeout, resolved at submit
    exit_code   INTEGER,
    result      TEXT,                    -- JSON exec result (bounded like machine.exec)
    reason      TEXT NOT NULL DEFAULT '', -- why failed, blocked, cancelled, requeued or waiting
    root_cause  TEXT NOT NULL DEFAULT ''  -- for a job blocked by a dependency: the failure at its root
) STRICT;
INSERT INTO jobs_view(id, command, args, cwd, env, timeout_ms, exit_code, result, reason)
SELECT id, command, args, cwd, env, timeout_ms, exit_code, result, reason FROM jobs ORDER BY rowid;
DROP TABLE job_deps;
DROP TABLE jobs;
ALTER TABLE jobs_view RENAME TO jobs;
