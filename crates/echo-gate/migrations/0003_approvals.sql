-- The approval gate's rules and its audit log.

-- A rule matches a tool (name or glob) and optionally an argument pattern: a command prefix
-- for `shell`, a path glob for file tools, a host for network tools, a server for MCP tools.
-- Session rules hold for one session; `always` rules for every session.
CREATE TABLE approval_rules (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    pattern     TEXT,
    decision    TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
    scope       TEXT NOT NULL CHECK (scope IN ('session', 'always')),
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    created_by  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    CHECK ((scope = 'session') = (session_id IS NOT NULL))
);
CREATE INDEX approval_rules_by_tool ON approval_rules (tool);

-- Every decision of the gate, in the order taken. Arguments are stored with secrets masked.
-- `decided_by`: hard_deny, path_policy, risk, rule, user, timeout, non_interactive, disabled.
CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    session_id  TEXT,
    turn_id     TEXT,
    call_id     TEXT NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    risk        TEXT NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
    decided_by  TEXT NOT NULL,
    rule_id     TEXT,
    reason      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX approvals_by_time ON approvals (created_at);
CREATE INDEX approvals_by_turn ON approvals (turn_id);
