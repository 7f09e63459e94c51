-- Memory search moved from FTS5 into each process (echo-memory/src/bm25.rs): FTS5 scored every
-- row a query term reached, which made search linear in the store. Each process keeps its own
-- index derived from `memories` and, before every search, applies the changes logged here,
-- so a memory written by the desktop app is found by `echod` and the other way round.
-- Triggers fill the log, so no writer can forget it. Old entries are pruned by the sweep; a
-- process that has fallen behind the pruned log rebuilds its index from `memories`.
CREATE TABLE memory_changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id  TEXT NOT NULL
);

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

DROP TABLE memories_fts_vocab;
DROP TABLE memories_fts;
