-- Sessions, turns, messages and trace spans: the engine's source of truth.
-- Times are RFC 3339 UTC text with milliseconds, so they sort as text.

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    title       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

-- accepted -> running -> completed | failed | interrupted
-- `owner` is the instance id of the process that accepted the turn; a turn whose owner is
-- gone while it is accepted/running was cut short by a crash.
CREATE TABLE turns (
    id             TEXT PRIMARY KEY,
    session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    status         TEXT NOT NULL CHECK (status IN ('accepted', 'running', 'completed', 'failed', 'interrupted')),
    input          TEXT NOT NULL,
    entry_point    TEXT NOT NULL,
    owner          TEXT NOT NULL,
    model          TEXT,
    error_code     TEXT,
    error          TEXT,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    started_at     TEXT,
    finished_at    TEXT
);
CREATE INDEX turns_by_session ON turns (session_id, created_at);
CREATE INDEX turns_by_status ON turns (status);

-- `seq` orders a session's messages; `status` is 'partial' for an answer cut short.
CREATE TABLE messages (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id       TEXT REFERENCES turns(id) ON DELETE SET NULL,
    seq           INTEGER NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content       TEXT NOT NULL,
    reasoning     TEXT,
    tool_calls    TEXT,
    tool_call_id  TEXT,
    name          TEXT,
    status        TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'partial')),
    created_at    TEXT NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE INDEX messages_by_turn ON messages (turn_id);

-- Turn -> Node -> Call. A span is written when it starts (status 'running') and updated
-- when it ends, so a crash leaves visible evidence.
CREATE TABLE spans (
    id               TEXT PRIMARY KEY,
    turn_id          TEXT NOT NULL,
    parent_id        TEXT,
    level            TEXT NOT NULL CHECK (level IN ('turn', 'node', 'call')),
    name             TEXT NOT NULL,
    started_at       TEXT NOT NULL,
    duration_ms      REAL,
    status           TEXT NOT NULL CHECK (status IN ('running', 'ok', 'error', 'cancelled')),
    model            TEXT,
    tokens_in        INTEGER,
    tokens_out       INTEGER,
    degraded         INTEGER NOT NULL DEFAULT 0,
    degraded_reason  TEXT,
    error            TEXT,
    attrs            TEXT
);
CREATE INDEX spans_by_turn ON spans (turn_id, started_at);
