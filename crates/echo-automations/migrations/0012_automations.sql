-- Automations: watch rules and schedules that run the assistant unattended.
--
-- `spec` is the automation's definition as JSON (echo-automations' `Spec`: the trigger, the
-- prompt template, the tools it may use, its pre-approvals, limits), validated before it is
-- stored. The process that watches/schedules an automation owns it (`owner`, an instance id,
-- taken over when that process is gone), so two open processes never both run it.
CREATE TABLE automations (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    enabled       INTEGER NOT NULL DEFAULT 1,
    spec          TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    owner         TEXT,
    state         TEXT NOT NULL DEFAULT 'idle'
        CHECK (state IN ('active', 'paused', 'error', 'rate_limited', 'idle')),
    state_reason  TEXT,
    -- Schedules: the last fire time that was handled (run, queued or skipped).
    last_fire     TEXT
);

-- Every run, queued to finished, in arrival order (`seq`). The queue is this table: a run is
-- claimed by turning `queued` into `running` in one statement, so nothing is lost when a
-- process ends and nothing runs twice. `dedup` makes the same event (a file at one size and
-- mtime, a schedule's fire time) queue once, whichever process saw it.
CREATE TABLE automation_runs (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT NOT NULL UNIQUE,
    automation_id  TEXT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
    status         TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'waiting_for_approval', 'done', 'failed', 'skipped')),
    cause          TEXT NOT NULL CHECK (cause IN ('file', 'schedule', 'manual')),
    event          TEXT CHECK (event IN ('created', 'modified', 'deleted', 'renamed')),
    path           TEXT,
    old_path       TEXT,
    fire_time      TEXT,
    dedup          TEXT,
    -- Automations whose runs led to this one (a file one of them wrote), as a JSON array.
    chain          TEXT NOT NULL DEFAULT '[]',
    reason         TEXT,
    session        TEXT,
    turn_id        TEXT,
    owner          TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    started_at     TEXT,
    finished_at    TEXT,
    UNIQUE (automation_id, dedup)
);
CREATE INDEX automation_runs_queue ON automation_runs (status, seq);
CREATE INDEX automation_runs_by_automation ON automation_runs (automation_id, seq);

-- Files the assistant wrote during a run, with the file's size and mtime right after the
-- write: an event on a file still in that state is the assistant's own write, and a run it
-- sets off inherits the writer's chain (so A → B → A stops).
CREATE TABLE automation_writes (
    path         TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    chain        TEXT NOT NULL,
    size         INTEGER,
    mtime_ns     INTEGER,
    written_at   TEXT NOT NULL
);
CREATE INDEX automation_writes_by_path ON automation_writes (path, written_at);

-- Approval questions of unattended runs: the run waits on its row; the person answers from any
-- process (the app, `echod`), or the row expires.
CREATE TABLE approval_queue (
    id                 TEXT PRIMARY KEY,
    run_id             TEXT NOT NULL,
    automation_id      TEXT NOT NULL,
    turn_id            TEXT NOT NULL,
    call_id            TEXT NOT NULL,
    tool               TEXT NOT NULL,
    risk               TEXT NOT NULL,
    detail             TEXT NOT NULL,
    reason             TEXT NOT NULL,
    suggested_pattern  TEXT,
    status             TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'allowed', 'denied', 'expired')),
    answer             TEXT,
    created_at         TEXT NOT NULL,
    expires_at         TEXT NOT NULL,
    answered_at        TEXT
);
CREATE INDEX approval_queue_by_status ON approval_queue (status, created_at);
