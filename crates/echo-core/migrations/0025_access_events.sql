-- The sign-in log of `echod serve`: pairings made, codes traded for tokens (by a device or a
-- browser page), wrong codes, the wrong-code lock, revocations. `peer` is the address the
-- request came from (a reverse proxy's, behind one). No code or token is ever written here.
-- The store keeps the newest entries only (see `store/devices.rs`).
CREATE TABLE access_events (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    device_id   TEXT,
    device_name TEXT,
    peer        TEXT,
    at          TEXT NOT NULL
);
CREATE INDEX access_events_at ON access_events (at);
