-- Sessions are listed with the automation whose run they are (the chat sidebar keeps runs
-- out of the way); this finds a session's run by its name.
CREATE INDEX automation_runs_by_session ON automation_runs (session);
