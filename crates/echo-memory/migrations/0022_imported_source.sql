-- no-transaction
-- A memory's source may be `imported` (brought from another assistant's memory and kept in the
-- import's review). SQLite cannot change a CHECK constraint in place, so `memories` is rebuilt
-- the documented way (https://sqlite.org/lang_altertable.html#otheralter): with foreign keys
-- off, so dropping the old table does not cascade into `memory_reads`, and in one transaction,
-- so a process that stops half-way leaves the old table. The same columns in the same order;
-- the indexes and the change-log triggers are made again.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE memories_rebuilt (
    id                 TEXT PRIMARY KEY,
    tier               TEXT NOT NULL CHECK (tier IN ('working', 'episodic', 'semantic', 'archival')),
    kind               TEXT NOT NULL,
    subject            TEXT NOT NULL DEFAULT 'user',
    slot               TEXT,
    content            TEXT NOT NULL,
    value              TEXT,
    source             TEXT NOT NULL CHECK (source IN ('user_stated', 'consolidated', 'inferred', 'manual', 'imported')),
    confidence         REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    importance         REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
    pinned             INTEGER NOT NULL DEFAULT 0,
    access_count       INTEGER NOT NULL DEFAULT 0,
    last_accessed      TEXT,
    stability          REAL NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    valid_from         TEXT,
    valid_until        TEXT,
    status             TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'archived', 'deleted')),
    superseded_by      TEXT,
    invalid_at         TEXT,
    archived_from      TEXT,
    version            INTEGER NOT NULL DEFAULT 1,
    scope              TEXT NOT NULL DEFAULT 'global',
    source_session_id  TEXT,
    source_turn_id     TEXT,
    source_message_id  TEXT,
    evidence           TEXT,
    context            TEXT
);

INSERT INTO memories_rebuilt (id, tier, kind, subject, slot, content, value, source, confidence,
    importance, pinned, access_count, last_accessed, stability, created_at, updated_at,
    valid_from, valid_until, status, superseded_by, invalid_at, archived_from, version, scope,
    source_session_id, source_turn_id, source_message_id, evidence, context)
SELECT id, tier, kind, subject, slot, content, value, source, confidence,
    importance, pinned, access_count, last_accessed, stability, created_at, updated_at,
    valid_from, valid_until, status, superseded_by, invalid_at, archived_from, version, scope,
    source_session_id, source_turn_id, source_message_id, evidence, context
FROM memories;

DROP TABLE memories;
ALTER TABLE memories_rebuilt RENAME TO memories;

CREATE INDEX memories_by_slot ON memories (subject, slot) WHERE slot IS NOT NULL;
CREATE INDEX memories_by_status ON memories (status, tier);
CREATE INDEX memories_by_scope ON memories (scope);
CREATE INDEX memories_by_created ON memories (created_at DESC, id DESC);
CREATE INDEX memories_by_updated ON memories (updated_at DESC, id DESC);
CREATE INDEX memories_by_last_used ON memories (last_accessed IS NULL, last_accessed DESC, id DESC);
CREATE INDEX memories_by_importance ON memories (importance DESC, id DESC);

CREATE TRIGGER memory_changes_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;

CREATE TRIGGER memory_changes_update AFTER UPDATE OF content, slot, value, context, status ON memories
WHEN old.content IS NOT new.content OR old.slot IS NOT new.slot OR old.value IS NOT new.value
  OR old.context IS NOT new.context OR old.status IS NOT new.status OR old.id IS NOT new.id
BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (new.id);
END;

CREATE TRIGGER memory_changes_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO memory_changes (memory_id) VALUES (old.id);
END;

COMMIT;
PRAGMA foreign_keys = ON;
