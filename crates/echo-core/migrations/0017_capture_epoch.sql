-- A count of deletions from trace_blobs. A process remembers which blobs it has written, so
-- that a call whose history it captured before checks and sends only its new messages; the
-- count tells it, inside the capturing transaction, that blobs were deleted since (by itself
-- or another process: retention, a deleted session, delete-all) and what it remembers is void.
CREATE TABLE capture_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    epoch  INTEGER NOT NULL
);
INSERT INTO capture_epoch (id, epoch) VALUES (1, 0);
CREATE TRIGGER trace_blobs_deleted AFTER DELETE ON trace_blobs
BEGIN
    UPDATE capture_epoch SET epoch = epoch + 1 WHERE id = 1;
END;
