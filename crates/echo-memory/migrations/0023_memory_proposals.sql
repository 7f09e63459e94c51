-- "Ask before remembering" (`memory.ask_before_remembering`): what a turn's extraction found
-- waits here, not in `memories`, until the person keeps it (then it goes through the write
-- path) or discards it. A proposal holds what was said: it goes with its conversation, with
-- "delete all memories" and with "delete all data".
CREATE TABLE memory_proposals (
    id          TEXT PRIMARY KEY,
    turn_id     TEXT NOT NULL,
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    draft       TEXT NOT NULL,   -- the write path's input (`NewMemory`), JSON
    created_at  TEXT NOT NULL
);
CREATE INDEX memory_proposals_by_turn ON memory_proposals (turn_id);
