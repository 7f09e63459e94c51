-- Sessions are listed with the automation whose run they are (the chat sidebar keeps runs
-- out of the way); this finds a session's run by its name.
CREATE INDEX automation_runs_by_session ON automation_runs (session);
-- The desktop asks every 2 s which runs ended since its cursor (`automation_notices`).
CREATE INDEX automation_runs_by_finish ON automation_runs (finished_at);
