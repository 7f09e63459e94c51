-- Every forgetting sweep: as of when it judged (`at`, which `memory sweep --now` sets), when it
-- ran, how many memories it looked at and archived. A process starting within
-- `memory.sweep_interval_hours` of the last sweep skips its start-up sweep (injection leaves
-- out lapsed memories by itself, so the sweep is bookkeeping, not a gate).
CREATE TABLE memory_sweeps (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TEXT NOT NULL,
    swept_at  TEXT NOT NULL,
    checked   INTEGER NOT NULL,
    archived  INTEGER NOT NULL
);
