-- Traces for the trace viewer: each span says what it covers (its kind), and each model call
-- keeps the exact request and response it exchanged.
--
-- A request is stored compactly: every message (and the offered tools) is one row of
-- `trace_blobs`, keyed by the BLAKE3 hash of its JSON, and a call lists the hashes in order.
-- Consecutive calls of a turn (and of a session) repeat almost all of their history, so each
-- message is written once however many calls send it. The sweep drops calls older than
-- `[trace] retention_days` and then the blobs no call refers to any more.
ALTER TABLE spans ADD COLUMN kind TEXT NOT NULL DEFAULT 'stage'
    CHECK (kind IN ('stage', 'model', 'tool', 'approval', 'memory_read', 'memory_write', 'background'));

UPDATE spans SET kind = CASE
    WHEN name IN ('model_request', 'approval_explain') THEN 'model'
    WHEN name LIKE 'tool:%' THEN 'tool'
    WHEN name = 'approval' THEN 'approval'
    WHEN name IN ('background:extract_memories', 'background:consolidate') THEN 'memory_write'
    WHEN name LIKE 'background:%' THEN 'background'
    ELSE 'stage'
END;

CREATE TABLE trace_blobs (
    hash  TEXT PRIMARY KEY,
    body  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE model_calls (
    span_id     TEXT PRIMARY KEY,
    turn_id     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    model       TEXT NOT NULL,
    -- JSON array of trace_blobs hashes, one per message, in request order.
    messages    TEXT NOT NULL,
    -- trace_blobs hash of the offered tools (a JSON array).
    tools       TEXT NOT NULL,
    -- JSON {max_tokens, temperature, tool_choice}.
    params      TEXT NOT NULL,
    -- JSON of the response (text, reasoning, tool_calls, usage, finish_reason); NULL when the
    -- attempt failed.
    response    TEXT,
    error       TEXT
);
CREATE INDEX model_calls_by_turn ON model_calls (turn_id, created_at);
CREATE INDEX model_calls_by_time ON model_calls (created_at);
