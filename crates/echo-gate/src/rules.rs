//! The user's rules: a tool (name or glob) plus an optional argument pattern, with a
//! decision, for one session or always. Stored in SQLite.

use crate::GateError;
use crate::policy::{RuleDecision, expand_home, normalize, parse_decision};
use crate::shell;
use echo_tools::Action;
use globset::{Glob, GlobBuilder};
use serde::Serialize;
use sqlx::{Row, SqlitePool};
use std::path::{Path, PathBuf};

pub use echo_core::vocab::RuleScope;

/// A stored scope, or an error naming it.
fn parse_scope(s: &str) -> Result<RuleScope, GateError> {
    RuleScope::parse(s).ok_or_else(|| {
        GateError::Invalid(format!(
            "unknown scope {s:?}; expected {}",
            RuleScope::expected()
        ))
    })
}

/// A stored rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id (`r-` + 8 hex digits).
    pub id: String,
    /// Tool name, or a glob over names (`github__*`, `*`).
    pub tool: String,
    /// Argument pattern: a command prefix for `shell`, a path glob for file tools, a host
    /// (`example.com`, `*.example.com`) for network tools, a server name for MCP tools.
    /// `None` matches every call of the tool.
    pub pattern: Option<String>,
    /// What to do with a matching call.
    pub decision: RuleDecision,
    /// How long it holds.
    pub scope: RuleScope,
    /// The session of a session rule.
    pub session_id: Option<String>,
    /// Who made it (`cli`, `user`, `settings`).
    pub created_by: String,
    /// When (RFC 3339).
    pub created_at: String,
}

/// A rule to add.
#[derive(Clone, Debug)]
pub struct NewRule {
    /// Tool name or glob.
    pub tool: String,
    /// Argument pattern, see [`Rule::pattern`].
    pub pattern: Option<String>,
    /// Decision.
    pub decision: RuleDecision,
    /// Scope.
    pub scope: RuleScope,
    /// Required for session rules.
    pub session_id: Option<String>,
    /// Who makes it.
    pub created_by: String,
}

/// One part of a call a rule pattern is matched against.
#[derive(Debug)]
pub(crate) enum Subject {
    /// One simple command of a shell command line.
    Command(Vec<String>),
    /// A path, before and after following symlinks.
    Path { lexical: PathBuf, resolved: PathBuf },
    /// A URL's host.
    Host(String),
    /// An MCP server.
    Server(String),
    /// A call with nothing to match a pattern against.
    Whole,
}

impl Rule {
    /// Whether the rule is about this tool and in force for this session.
    pub(crate) fn applies_to(&self, tool: &str, session_id: &str) -> bool {
        let in_force = match self.scope {
            RuleScope::Always => true,
            RuleScope::Session => self.session_id.as_deref() == Some(session_id),
        };
        in_force && name_matches(&self.tool, tool)
    }

    /// Whether the pattern covers this part of the call.
    pub(crate) fn matches(&self, subject: &Subject, home: Option<&Path>) -> bool {
        let Some(pattern) = self.pattern.as_deref() else {
            return true;
        };
        match subject {
            Subject::Whole => false,
            Subject::Command(words) => command_prefix_matches(pattern, words),
            Subject::Host(host) => host_matches(pattern, host),
            Subject::Server(server) => pattern == server,
            Subject::Path { lexical, resolved } => {
                let Some(glob) = path_glob(pattern, home) else {
                    // A pattern that does not compile cannot say which paths it covers (a
                    // pattern ending in `*` is not checked as a glob when the rule is added):
                    // a deny or ask rule then covers every path, an allow rule none.
                    return self.decision != RuleDecision::Allow;
                };
                // For an allow both must match, so a symlink cannot smuggle a path in; for
                // deny and ask either is enough. Matching both is the conservative middle
                // for allow; deny/ask callers get the same answer when both match.
                match self.decision {
                    RuleDecision::Allow => glob.is_match(lexical) && glob.is_match(resolved),
                    _ => glob.is_match(lexical) || glob.is_match(resolved),
                }
            }
        }
    }

    /// `tool` or `tool pattern`, for messages.
    pub(crate) fn describe(&self) -> String {
        match &self.pattern {
            Some(p) => format!("{} {p:?}", self.tool),
            None => self.tool.clone(),
        }
    }
}

fn name_matches(pattern: &str, tool: &str) -> bool {
    if pattern == tool {
        return true;
    }
    pattern.contains(['*', '?', '['])
        && Glob::new(pattern).is_ok_and(|g| g.compile_matcher().is_match(tool))
}

/// Word-wise prefix: `git status` covers `git status -s` but not `git stash`; a last pattern
/// word ending in `*` matches by prefix (`npm run *`); `*` alone matches every command.
fn command_prefix_matches(pattern: &str, words: &[String]) -> bool {
    let Some(pat) = shlex::split(pattern) else {
        return false;
    };
    if pat.len() == 1 && pat[0] == "*" {
        return true;
    }
    if pat.is_empty() || pat.len() > words.len() {
        return false;
    }
    pat.iter().zip(words).enumerate().all(|(i, (p, w))| {
        let w = if i == 0 {
            shell::basename(w)
        } else {
            w.as_str()
        };
        let p = if i == 0 {
            shell::basename(p)
        } else {
            p.as_str()
        };
        match p.strip_suffix('*') {
            Some(prefix) if i == pat.len() - 1 => w.starts_with(prefix),
            _ => p == w,
        }
    })
}

fn host_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
        None => pattern == host,
    }
}

/// A path pattern as a glob: `~` expanded; a pattern that is not absolute matches at any
/// depth; a plain directory also covers everything below it.
fn path_glob(pattern: &str, home: Option<&Path>) -> Option<globset::GlobMatcher> {
    let expanded = expand_home(Path::new(pattern), home);
    let mut text = if expanded.is_absolute() {
        normalize(&expanded).to_string_lossy().into_owned()
    } else {
        format!("**/{}", pattern.trim_start_matches("./"))
    };
    if !text.contains(['*', '?', '[', '{']) {
        text = format!("{{{text},{}/**}}", text.trim_end_matches('/'));
    }
    GlobBuilder::new(&text)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The narrowest pattern that would cover this call, for "allow for session / always" and for
/// telling a non-interactive user which rule would let it through: the first one or two words
/// of a command, the directory of a path (`/dir/**`), the host, the server.
pub fn suggest_pattern(action: &Action) -> Option<String> {
    if let Some(command) = &action.command {
        let segments = shell::segments(command);
        if segments.len() != 1 {
            return None;
        }
        let words = &segments[0];
        let take = match words.get(1) {
            Some(w) if !w.starts_with('-') && !w.contains('/') && !w.contains('.') => 2,
            _ => 1,
        };
        return shlex::try_join(words.iter().take(take).map(String::as_str)).ok();
    }
    if let Some(server) = &action.server {
        return Some(server.clone());
    }
    if let Some(host) = &action.host {
        return Some(host.clone());
    }
    let path = action.writes.first().or(action.reads.first())?;
    let dir = path.parent().unwrap_or(path);
    Some(format!("{}/**", dir.display()))
}

/// The rules in SQLite.
#[derive(Clone, Debug)]
pub struct RuleBook {
    pool: SqlitePool,
}

impl RuleBook {
    /// Rules in the engine's database (see `echo_core::Store::pool`).
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Rules in force for `session` (its session rules and every `always` rule), or every
    /// rule when `session` is `None`; oldest first.
    pub async fn list(&self, session: Option<&str>) -> Result<Vec<Rule>, GateError> {
        let rows = sqlx::query(
            "SELECT id, tool, pattern, decision, scope, session_id, created_by, created_at
             FROM approval_rules
             WHERE ?1 IS NULL OR scope = 'always' OR session_id = ?1
             ORDER BY created_at, id",
        )
        .bind(session)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Rule {
                    id: row.try_get("id")?,
                    tool: row.try_get("tool")?,
                    pattern: row.try_get("pattern")?,
                    decision: parse_decision(&row.try_get::<String, _>("decision")?)?,
                    scope: parse_scope(&row.try_get::<String, _>("scope")?)?,
                    session_id: row.try_get("session_id")?,
                    created_by: row.try_get("created_by")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }

    /// Adds a rule after checking it.
    pub async fn add(&self, rule: NewRule) -> Result<Rule, GateError> {
        let tool = rule.tool.trim().to_string();
        if tool.is_empty() {
            return Err(GateError::Invalid("a rule needs a tool name".into()));
        }
        if tool.contains(['*', '?', '[']) {
            Glob::new(&tool)
                .map_err(|e| GateError::Invalid(format!("bad tool pattern {tool:?}: {e}")))?;
        }
        let pattern = rule
            .pattern
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty());
        if let Some(p) = &pattern {
            if p.len() > 1000 {
                return Err(GateError::Invalid(
                    "a rule pattern may be at most 1000 characters".into(),
                ));
            }
            if shlex::split(p).is_none() {
                return Err(GateError::Invalid(format!(
                    "pattern {p:?} has unbalanced quotes"
                )));
            }
            if p.contains(['*', '?', '[', '{']) && !p.ends_with('*') {
                GlobBuilder::new(p)
                    .build()
                    .map_err(|e| GateError::Invalid(format!("bad pattern {p:?}: {e}")))?;
            }
        }
        let session_id = match (rule.scope, rule.session_id) {
            (RuleScope::Session, Some(s)) => Some(s),
            (RuleScope::Session, None) => {
                return Err(GateError::Invalid("a session rule needs a session".into()));
            }
            (RuleScope::Always, _) => None,
        };
        let id = format!("r-{}", &uuid::Uuid::now_v7().simple().to_string()[24..]);
        let created_at = echo_core::time::now_rfc3339();
        sqlx::query(
            "INSERT INTO approval_rules (id, tool, pattern, decision, scope, session_id, created_by, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(&tool)
        .bind(&pattern)
        .bind(rule.decision.as_str())
        .bind(rule.scope.as_str())
        .bind(&session_id)
        .bind(&rule.created_by)
        .bind(&created_at)
        .execute(&self.pool)
        .await?;
        Ok(Rule {
            id,
            tool,
            pattern,
            decision: rule.decision,
            scope: rule.scope,
            session_id,
            created_by: rule.created_by,
            created_at,
        })
    }

    /// Removes a rule; returns what it was.
    pub async fn remove(&self, id: &str) -> Result<Rule, GateError> {
        let all = self.list(None).await?;
        let rule = all
            .into_iter()
            .find(|r| r.id == id)
            .ok_or_else(|| GateError::NoSuchRule(id.to_string()))?;
        sqlx::query("DELETE FROM approval_rules WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(decision: RuleDecision, pattern: &str) -> Rule {
        Rule {
            id: "r-1".into(),
            tool: "write_file".into(),
            pattern: Some(pattern.into()),
            decision,
            scope: RuleScope::Always,
            session_id: None,
            created_by: "user".into(),
            created_at: String::new(),
        }
    }

    #[test]
    fn a_path_pattern_that_does_not_compile_fails_closed() {
        let broken = "/srv/[abc*";
        assert!(path_glob(broken, None).is_none(), "the pattern compiled");
        let path = Subject::Path {
            lexical: PathBuf::from("/home/u/notes.txt"),
            resolved: PathBuf::from("/home/u/notes.txt"),
        };
        assert!(rule(RuleDecision::Deny, broken).matches(&path, None));
        assert!(rule(RuleDecision::Ask, broken).matches(&path, None));
        assert!(!rule(RuleDecision::Allow, broken).matches(&path, None));
        // A pattern that compiles still matches only its own paths.
        assert!(!rule(RuleDecision::Deny, "/srv/**").matches(&path, None));
    }
}
