-- The four-tier memory. SQLite is the source of truth; the FTS table and the LanceDB vector
-- index are derived from `memories` and can be rebuilt from it.

CREATE TABLE memories (
    id                 TEXT PRIMARY KEY,
    tier               TEXT NOT NULL CHECK (tier IN ('working', 'episodic', 'semantic', 'archival')),
    kind               TEXT NOT NULL,
    subject            TEXT NOT NULL DEFAULT 'user',
    slot               TEXT,
    content            TEXT NOT NULL,
    value              TEXT,
    source             TEXT NOT NULL CHECK (source IN ('user_stated', 'consolidated', 'inferred', 'manual')),
    confidence         REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    importance         REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
    pinned             INTEGER NOT NULL DEFAULT 0,
    access_count       INTEGER NOT NULL DEFAULT 0,
    last_accessed      TEXT,
    stability          REAL NOT NULL,            -- half-life in days; grows with real use
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    valid_from         TEXT,
    valid_until        TEXT,
    status             TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'archived', 'deleted')),
    superseded_by      TEXT,
    invalid_at         TEXT,
    archived_from      TEXT,                     -- tier before archival, for restore
    version            INTEGER NOT NULL DEFAULT 1,
    scope              TEXT NOT NULL DEFAULT 'global',  -- 'global' or 'session:<id>'
    source_session_id  TEXT,
    source_turn_id     TEXT,
    source_message_id  TEXT,
    evidence           TEXT,
    context            TEXT                      -- indexed for search, never shown or injected
);
CREATE INDEX memories_by_slot ON memories (subject, slot) WHERE slot IS NOT NULL;
CREATE INDEX memories_by_status ON memories (status, tier);
CREATE INDEX memories_by_scope ON memories (scope);

-- BM25 over content and slot; `terms` holds the text after CJK bigram expansion.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    memory_id UNINDEXED,
    terms,
    context,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Every change, so any change can be undone: the row before and after, who, when, why.
CREATE TABLE memory_history (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    change_id   TEXT NOT NULL,                -- rows of one change share it; undo reverts them together
    memory_id   TEXT NOT NULL,
    action      TEXT NOT NULL,
    actor       TEXT NOT NULL,
    reason      TEXT,
    before      TEXT,
    after       TEXT,
    at          TEXT NOT NULL
);
CREATE INDEX memory_history_by_memory ON memory_history (memory_id, id);

-- Embedding work for the derived vector index: one row per memory to (re)embed or drop.
CREATE TABLE memory_outbox (
    memory_id    TEXT PRIMARY KEY,
    op           TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    enqueued_at  TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT
);

-- Conflicts the policy could not settle (a full tie): neither side is injected until the
-- person decides. Resolved conflicts stay for the record.
CREATE TABLE memory_conflicts (
    id           TEXT PRIMARY KEY,
    memory_a     TEXT NOT NULL,
    memory_b     TEXT NOT NULL,
    verdict      TEXT NOT NULL,
    explanation  TEXT,
    status       TEXT NOT NULL CHECK (status IN ('open', 'resolved')),
    resolution   TEXT,
    created_at   TEXT NOT NULL,
    resolved_at  TEXT
);
CREATE INDEX memory_conflicts_open ON memory_conflicts (status);

-- The memory block of a session's prompt, frozen until invalidated (consolidation, review,
-- a user edit), so a long task sees a stable background and the prefix cache holds.
CREATE TABLE memory_snapshots (
    session_id   TEXT PRIMARY KEY,
    memory_ids   TEXT NOT NULL,   -- JSON array, in injection order
    created_at   TEXT NOT NULL
);

ALTER TABLE sessions ADD COLUMN consolidated_seq INTEGER NOT NULL DEFAULT 0;
