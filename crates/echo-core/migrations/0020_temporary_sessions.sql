-- A temporary chat is a session kept only while the process that opened it runs:
-- `temporary` says whether it may recall memories (`sealed`: no, `recall`: yes; NULL for a
-- kept session) and `temporary_owner` is that process's instance id. It is deleted when it is
-- left, when its process closes, and by the next process to open the data directory after
-- a crash. Lists never show it.
ALTER TABLE sessions ADD COLUMN temporary TEXT;
ALTER TABLE sessions ADD COLUMN temporary_owner TEXT;
