-- Regenerate and edit-and-resend: a new turn can set aside a user message and everything
-- after it. Those messages stay in the database (nothing is lost; traces still point at
-- them) but leave the session's history: `replaced_by` names the turn that replaced them.
ALTER TABLE messages ADD COLUMN replaced_by TEXT;
CREATE INDEX messages_in_history ON messages (session_id, replaced_by, seq);
