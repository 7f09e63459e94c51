-- A session's history version, bumped by triggers whenever a stored message is set aside (an
-- edit or regenerate) or removed. Messages are otherwise only appended, so a process that
-- keeps a session's decoded history between turns reads just the new rows while the version
-- stays the same, and everything again when it changed (`Store::history`).
ALTER TABLE sessions ADD COLUMN history_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER messages_set_aside AFTER UPDATE OF replaced_by ON messages
BEGIN
    UPDATE sessions SET history_version = history_version + 1 WHERE id = new.session_id;
END;

CREATE TRIGGER messages_removed AFTER DELETE ON messages
BEGIN
    UPDATE sessions SET history_version = history_version + 1 WHERE id = old.session_id;
END;
