-- A research run's state, written after every node of its graph, so a process that dies
-- resumes it from the last node that finished. `turn_id` is the turn running it now (a
-- resumed run moves to its new turn); the run's id never changes.
CREATE TABLE research_runs (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id     TEXT NOT NULL,
    question    TEXT NOT NULL,
    state       TEXT NOT NULL,
    finished    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX research_runs_by_turn ON research_runs (turn_id);

-- What research searches and fetches answered, by session: a node that keeps failing is
-- served from here before it is skipped. A deleted conversation takes its copies with it.
CREATE TABLE research_cache (
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    body        TEXT NOT NULL,
    fetched_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
