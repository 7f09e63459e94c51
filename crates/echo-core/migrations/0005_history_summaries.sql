-- Long conversations: the rolling summary and the archive of what it replaced.
--
-- Each compression of a session's history writes one row here: the middle segment
-- (from_seq, to_seq] it archived and the rolling summary as of to_seq (the previous summary
-- folded in). The newest live row is the summary a request carries; the messages it covers
-- leave the request but never the database. A failed attempt is recorded too (status
-- 'failed', empty summary) so the cooldown counts from it. An edit or regenerate that sets
-- aside a message a summary covers discards that summary (`discarded_by` names the turn).
CREATE TABLE history_summaries (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id       TEXT,
    status        TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    from_seq      INTEGER NOT NULL,
    to_seq        INTEGER NOT NULL,
    at_seq        INTEGER NOT NULL,   -- the session's last message when it ran
    summary       TEXT NOT NULL,
    error         TEXT,
    created_at    TEXT NOT NULL,
    discarded_by  TEXT
);
CREATE INDEX history_summaries_by_session ON history_summaries (session_id, created_at);

-- The archived segments, searchable (BM25; `terms` holds the text after CJK bigram expansion).
CREATE VIRTUAL TABLE history_archive_fts USING fts5 (
    summary_id UNINDEXED,
    session_id UNINDEXED,
    terms,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
