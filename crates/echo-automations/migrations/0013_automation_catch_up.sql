-- Watch rules: the time up to which the rule's file events were seen and queued. When a
-- process takes the rule up again (after a quit, a crash, an edit, a folder that came back),
-- files that changed after it, while nothing watched, are queued then: nothing that arrived
-- while the app and `echod serve` were closed is lost. NULL: never watched yet (files that
-- were there before the rule existed do not run it). Resuming a paused rule moves it to now:
-- what changed while it was paused is not replayed.
ALTER TABLE automations ADD COLUMN watched_until TEXT;
