-- Which turns read each memory: it was in the request a model answered from (the session's
-- snapshot, recalled for the message, found by the memory_recall tool or by research). A
-- memory's "used in N answers", and how a wrong memory that keeps steering answers is found.
-- Kept to the newest rows per memory (see `store/reads.rs`); rows go with their memory and
-- with the session of their turn.
CREATE TABLE memory_reads (
    memory_id  TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    turn_id    TEXT NOT NULL,
    session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    how        TEXT NOT NULL,
    at         TEXT NOT NULL
);
CREATE INDEX memory_reads_by_memory ON memory_reads (memory_id, at);
CREATE INDEX memory_reads_by_session ON memory_reads (session_id);
