-- Devices that reach `echod serve` with a token of their own. A row starts as a pairing:
-- the SHA-256 of a one-time code and when it expires. Redeeming the code clears it and
-- keeps the SHA-256 of the device's token instead; revoking keeps the row (the person sees
-- what was revoked and when) and no token matches it any more. Neither code nor token is
-- stored in clear.
CREATE TABLE devices (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    code_hash       TEXT UNIQUE,
    code_expires_at TEXT,
    token_hash      TEXT UNIQUE,
    created_at      TEXT NOT NULL,
    paired_at       TEXT,
    last_seen_at    TEXT,
    revoked_at      TEXT
);
