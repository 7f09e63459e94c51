-- The memory page lists memories a page at a time in one of four orders (`Sort` in
-- echo-memory's store/read.rs). Without an index in that order, every page sorted the whole
-- table in a temporary B-tree: about 240 ms for the first page of 100,000 memories in an
-- optimised SQLite, growing with the offset. With these, a page walks the index and stops
-- after offset + limit rows (0.5 ms for the first page). The expressions match the ORDER BY
-- clauses exactly, so SQLite can use them; `effective` is ranked in Rust and needs none.
CREATE INDEX memories_by_created ON memories (created_at DESC, id DESC);
CREATE INDEX memories_by_updated ON memories (updated_at DESC, id DESC);
CREATE INDEX memories_by_last_used ON memories (last_accessed IS NULL, last_accessed DESC, id DESC);
CREATE INDEX memories_by_importance ON memories (importance DESC, id DESC);
