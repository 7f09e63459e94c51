-- A project keeps work apart: conversations belong to one project or to none, and a
-- project's memories (scope `project:<id>`, owned by echo-memory) are recalled only in its
-- conversations, beside the global ones. `folders` is a JSON array of absolute paths, the
-- tools' workspace roots in its conversations (empty: the settings' roots); `instructions`
-- stand in every request of its conversations.
CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    instructions TEXT,
    folders      TEXT NOT NULL DEFAULT '[]',
    created_at   TEXT NOT NULL
);
ALTER TABLE sessions ADD COLUMN project_id TEXT REFERENCES projects (id) ON DELETE SET NULL;
CREATE INDEX sessions_by_project ON sessions (project_id);
