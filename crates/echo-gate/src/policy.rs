//! The decision itself: hard-deny → path policy → rules → risk.

use crate::GateError;
use crate::patterns::PatternError;
use crate::rules::{Rule, Subject};
use crate::shell;
use echo_core::config::ToolsConfig;
use echo_tools::{Action, Risk};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;
use std::path::{Component, Path, PathBuf};

pub use echo_core::{DecidedBy, RuleDecision};

/// Parses a decision as rules store it and the CLI takes it.
pub fn parse_decision(s: &str) -> Result<RuleDecision, GateError> {
    RuleDecision::parse(s).ok_or_else(|| {
        GateError::Invalid(format!(
            "unknown decision {s:?}; expected {}",
            RuleDecision::expected()
        ))
    })
}

/// How strict a decision is: deny > ask > allow (the strictest matching rule wins).
fn strictness(d: RuleDecision) -> u8 {
    match d {
        RuleDecision::Allow => 0,
        RuleDecision::Ask => 1,
        RuleDecision::Deny => 2,
    }
}

/// The gate's answer for one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Allow, ask or deny.
    pub decision: RuleDecision,
    /// Which step decided.
    pub by: DecidedBy,
    /// The rule that decided, when one did.
    pub rule_id: Option<String>,
    /// One sentence for the user and the model.
    pub reason: String,
}

impl Verdict {
    fn new(decision: RuleDecision, by: DecidedBy, reason: String) -> Self {
        Self {
            decision,
            by,
            rule_id: None,
            reason,
        }
    }
}

/// The verdict of the hard-deny check: a refusal when the command matches a hard-deny
/// pattern, and also when the patterns could not be compiled — the check fails closed, so a
/// broken pattern refuses every command instead of letting every command through.
fn hard_deny_verdict(found: Result<Option<String>, &PatternError>) -> Option<Verdict> {
    let reason = match found {
        Ok(None) => return None,
        Ok(Some(what)) => format!("refused: the command does {what}, which is never allowed"),
        Err(e) => format!(
            "refused: the command cannot be checked against the hard-deny patterns ({e}), so it is not run"
        ),
    };
    Some(Verdict::new(
        RuleDecision::Deny,
        DecidedBy::HardDeny,
        reason,
    ))
}

/// A path of a call, before and after following symlinks.
struct Located {
    lexical: PathBuf,
    resolved: PathBuf,
}

/// One call as the gate sees it.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// The tool's risk level.
    pub risk: Risk,
    /// What the call would do.
    pub action: &'a Action,
    /// Session of the turn (for session rules).
    pub session_id: &'a str,
    /// Directory relative paths are resolved against.
    pub workdir: &'a Path,
    /// Where writes are allowed instead of the settings' workspace roots (a project's
    /// folders); empty: the settings' roots. The skills folder stays writable either way.
    pub roots: &'a [PathBuf],
}

/// Fixed policy built from settings: secret paths, workspace roots, disabled tools.
#[derive(Debug)]
pub struct Policy {
    user_home: Option<PathBuf>,
    data_dirs: Vec<PathBuf>,
    roots: Vec<PathBuf>,
    /// The data directory's `skills/` folder, a write root in every conversation.
    skills: PathBuf,
    extra_secrets: GlobSet,
    disabled: Vec<String>,
}

/// Directories (as path components) that hold credentials wherever they appear.
const SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".azure",
    ".password-store",
    "keyrings",
    "Keychains",
];
/// Files under the user's home that hold credentials.
const SECRET_HOME_PATHS: &[&str] = &[
    ".config/gcloud",
    ".config/gh",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
];
/// File names that hold credentials wherever they are.
const SECRET_FILE_NAMES: &[&str] = &[
    ".netrc",
    ".git-credentials",
    ".pgpass",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];
/// System files that hold credentials.
const SECRET_SYSTEM_PATHS: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh"];

impl Policy {
    /// Builds the policy. `data_dir` is the assistant's own data directory (its database,
    /// settings and rules), which tools may not touch except its `skills/` folder; `workdir`
    /// is the workspace root when settings name none.
    pub fn new(
        cfg: &ToolsConfig,
        data_dir: &Path,
        workdir: &Path,
        user_home: Option<PathBuf>,
    ) -> Result<Self, GateError> {
        let expand = |p: &Path| expand_home(p, user_home.as_deref());
        let roots = if cfg.workspace_roots.is_empty() {
            vec![resolve_links(&normalize(workdir))]
        } else {
            cfg.workspace_roots
                .iter()
                .map(|r| {
                    let r = expand(r);
                    let r = if r.is_absolute() { r } else { workdir.join(r) };
                    resolve_links(&normalize(&r))
                })
                .collect()
        };
        let mut builder = GlobSetBuilder::new();
        for pattern in &cfg.secret_paths {
            let expanded = expand(Path::new(pattern)).to_string_lossy().into_owned();
            let glob = Glob::new(&expanded).map_err(|e| {
                GateError::Invalid(format!("tools.secret_paths: bad pattern {pattern:?}: {e}"))
            })?;
            builder.add(glob);
        }
        let extra_secrets = builder
            .build()
            .map_err(|e| GateError::Invalid(format!("tools.secret_paths: {e}")))?;
        let data = normalize(data_dir);
        let data_dirs = vec![resolve_links(&data), data.clone()];
        // Skills live in the data directory and are written through `skill_manage` (which
        // always asks), so their folder is a write root of its own.
        let skills = resolve_links(&data.join("skills"));
        let mut roots = roots;
        roots.push(skills.clone());
        Ok(Self {
            user_home: user_home.map(|h| normalize(&h)),
            data_dirs,
            roots,
            skills,
            extra_secrets,
            disabled: cfg.disabled.clone(),
        })
    }

    /// The directories writes are allowed in.
    pub fn workspace_roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether the tool may be offered to the model at all: not switched off and not denied
    /// outright by a rule without a pattern.
    pub fn offered(&self, tool: &str, rules: &[Rule], session_id: &str) -> bool {
        !self.disabled.iter().any(|d| d == tool)
            && !rules.iter().any(|r| {
                r.decision == RuleDecision::Deny
                    && r.pattern.is_none()
                    && r.applies_to(tool, session_id)
            })
    }

    /// Decides one call.
    pub fn evaluate(&self, req: &Request<'_>, rules: &[Rule]) -> Verdict {
        if self.disabled.iter().any(|d| d == req.tool) {
            return Verdict::new(
                RuleDecision::Deny,
                DecidedBy::Disabled,
                format!("the tool {} is switched off in settings", req.tool),
            );
        }
        let action = req.action;
        if let Some(command) = &action.command {
            if let Some(verdict) = hard_deny_verdict(shell::hard_deny(command)) {
                return verdict;
            }
            for word in shell::path_words(command) {
                let path = self.locate(Path::new(&word), req.workdir);
                if let Some(why) = self.forbidden_either(&path) {
                    return Verdict::new(
                        RuleDecision::Deny,
                        DecidedBy::PathPolicy,
                        format!("refused: the command touches {word}, {why}"),
                    );
                }
            }
        }
        // Each path is made absolute and followed through symlinks once, here; the rule
        // matching below works on the same pairs.
        let located: Vec<Located> = action
            .writes
            .iter()
            .chain(&action.reads)
            .map(|p| self.locate(p, req.workdir))
            .collect();
        let (written, _) = located.split_at(action.writes.len());
        for (path, at) in action.writes.iter().chain(&action.reads).zip(&located) {
            if let Some(why) = self.forbidden_either(at) {
                return Verdict::new(
                    RuleDecision::Deny,
                    DecidedBy::PathPolicy,
                    format!("refused: {} is {why}", path.display()),
                );
            }
        }
        let project_roots: Vec<PathBuf>;
        let roots = if req.roots.is_empty() {
            &self.roots
        } else {
            project_roots = req
                .roots
                .iter()
                .map(|r| resolve_links(&normalize(r)))
                .chain([self.skills.clone()])
                .collect();
            &project_roots
        };
        for (path, at) in action.writes.iter().zip(written) {
            if !roots.iter().any(|root| at.resolved.starts_with(root)) {
                let listed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
                let fix = if req.roots.is_empty() {
                    "add its directory to tools.workspace_roots to allow writes there"
                } else {
                    "add its directory to the project's folders to allow writes there"
                };
                return Verdict::new(
                    RuleDecision::Deny,
                    DecidedBy::PathPolicy,
                    format!(
                        "refused: {} is outside the workspace roots ({}); {fix}",
                        path.display(),
                        listed.join(", ")
                    ),
                );
            }
        }
        self.by_rules_and_risk(req, located, rules)
    }

    fn by_rules_and_risk(
        &self,
        req: &Request<'_>,
        located: Vec<Located>,
        rules: &[Rule],
    ) -> Verdict {
        let action = req.action;
        let subjects: Vec<Subject> = if let Some(command) = &action.command {
            shell::segments(command)
                .into_iter()
                .map(Subject::Command)
                .collect()
        } else if let Some(server) = &action.server {
            vec![Subject::Server(server.clone())]
        } else if let Some(host) = &action.host {
            vec![Subject::Host(host.to_ascii_lowercase())]
        } else if !located.is_empty() {
            located
                .into_iter()
                .map(|Located { lexical, resolved }| Subject::Path { lexical, resolved })
                .collect()
        } else {
            vec![Subject::Whole]
        };
        let subjects = if subjects.is_empty() {
            vec![Subject::Whole]
        } else {
            subjects
        };
        let applicable: Vec<&Rule> = rules
            .iter()
            .filter(|r| r.applies_to(req.tool, req.session_id))
            .collect();
        let home = self.user_home.as_deref();
        // The strictest rule matching any part of the call wins (deny > ask > allow); an
        // allow needs every part (each command of a pipeline, each path) covered.
        let mut strictest: Option<&Rule> = None;
        for rule in &applicable {
            if rule.decision == RuleDecision::Allow {
                continue;
            }
            if subjects.iter().any(|s| rule.matches(s, home)) {
                let stricter =
                    strictest.is_none_or(|s| strictness(rule.decision) > strictness(s.decision));
                if stricter {
                    strictest = Some(rule);
                }
            }
        }
        if let Some(rule) = strictest {
            let mut v = Verdict::new(
                rule.decision,
                DecidedBy::Rule,
                format!(
                    "rule {} ({}) says {}",
                    rule.id,
                    rule.describe(),
                    rule.decision.as_str()
                ),
            );
            v.rule_id = Some(rule.id.clone());
            return v;
        }
        let allows: Vec<&Rule> = subjects
            .iter()
            .map(|s| {
                applicable
                    .iter()
                    .copied()
                    .find(|r| r.decision == RuleDecision::Allow && r.matches(s, home))
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        if let Some(first) = allows.first() {
            if req.risk == Risk::Dangerous {
                return Verdict::new(
                    RuleDecision::Ask,
                    DecidedBy::Risk,
                    format!(
                        "{} is dangerous, so it always asks (rule {} does not apply to dangerous tools)",
                        req.tool, first.id
                    ),
                );
            }
            let mut v = Verdict::new(
                RuleDecision::Allow,
                DecidedBy::Rule,
                format!("rule {} ({}) allows it", first.id, first.describe()),
            );
            v.rule_id = Some(first.id.clone());
            return v;
        }
        match req.risk {
            Risk::ReadOnly => {
                Verdict::new(RuleDecision::Allow, DecidedBy::Risk, "read-only".into())
            }
            risk => Verdict::new(
                RuleDecision::Ask,
                DecidedBy::Risk,
                format!(
                    "{} is {} tool and no rule allows this call",
                    req.tool,
                    match risk {
                        Risk::Exec => "an exec",
                        Risk::Write => "a write",
                        Risk::Network => "a network",
                        _ => "a dangerous",
                    }
                ),
            ),
        }
    }

    /// Why the tools may not touch `path` (already resolved), if they may not.
    fn forbidden(&self, path: &Path) -> Option<String> {
        for data in &self.data_dirs {
            if let Ok(rest) = path.strip_prefix(data)
                && rest.components().next() != Some(Component::Normal("skills".as_ref()))
            {
                return Some("inside the assistant's own data directory (settings, rules and memory are changed through the app, not by tools)".into());
            }
        }
        let s = path.to_string_lossy();
        if SECRET_SYSTEM_PATHS.iter().any(|p| path.starts_with(p)) {
            return Some(format!("a protected system credential file ({s})"));
        }
        for c in path.components() {
            if let Component::Normal(name) = c {
                let name = name.to_string_lossy();
                if SECRET_DIRS.contains(&name.as_ref()) {
                    return Some(format!("inside a secrets directory ({name})"));
                }
            }
        }
        if let Some(home) = &self.user_home
            && let Ok(rest) = path.strip_prefix(home)
            && SECRET_HOME_PATHS.iter().any(|p| rest.starts_with(p))
        {
            return Some("a credentials file".into());
        }
        if let Some(name) = path.file_name().map(|n| n.to_string_lossy()) {
            let env_file = name == ".env"
                || (name.starts_with(".env.")
                    && ![".example", ".sample", ".template", ".dist"]
                        .iter()
                        .any(|suffix| name.ends_with(suffix)));
            let key_file = SECRET_FILE_NAMES
                .iter()
                .any(|n| name == *n || (name.starts_with(n) && !name.ends_with(".pub")));
            let keychain = name.ends_with(".keychain") || name.ends_with(".keychain-db");
            if env_file {
                return Some("an environment file with secrets (.env)".into());
            }
            if key_file || keychain {
                return Some(format!("a private key or keychain ({name})"));
            }
        }
        if self.extra_secrets.is_match(path) {
            return Some("listed in tools.secret_paths".into());
        }
        None
    }

    fn resolve_lexical(&self, path: &Path, workdir: &Path) -> PathBuf {
        let p = expand_home(path, self.user_home.as_deref());
        let p = if p.is_absolute() { p } else { workdir.join(p) };
        normalize(&p)
    }

    /// The path made absolute and `..`-free, and that path with symlinks followed (as far
    /// as it exists).
    fn locate(&self, path: &Path, workdir: &Path) -> Located {
        let lexical = self.resolve_lexical(path, workdir);
        let resolved = resolve_links(&lexical);
        Located { lexical, resolved }
    }

    /// A secret reached through a symlink is still a secret, and so is a symlink whose own
    /// name looks like one: both forms are checked.
    fn forbidden_either(&self, at: &Located) -> Option<String> {
        self.forbidden(&at.lexical)
            .or_else(|| self.forbidden(&at.resolved))
    }
}

/// `~` and `~/x` → the user's home.
pub(crate) fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    let s = path.to_string_lossy();
    match (home, s.strip_prefix('~')) {
        (Some(home), Some("")) => home.to_path_buf(),
        (Some(home), Some(rest)) if rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => {
            let s = s.replace("${HOME}", "~").replace("$HOME", "~");
            if s.starts_with('~') && home.is_some() && s != path.to_string_lossy() {
                expand_home(Path::new(&s), home)
            } else {
                path.to_path_buf()
            }
        }
    }
}

/// Removes `.` and resolves `..` without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Follows symlinks for the longest existing prefix of `path` and appends the rest.
pub(crate) fn resolve_links(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::{self, Pattern, Use};

    #[test]
    fn hard_deny_refuses_every_command_when_its_patterns_do_not_compile() {
        let broken = [Pattern {
            name: "broken",
            regex: "(",
            used_as: Use::HardDeny("x"),
        }];
        let Err(e) = patterns::build(&broken) else {
            panic!("an unclosed group compiled");
        };
        let verdict = hard_deny_verdict(Err(&e)).map(|v| (v.decision, v.by, v.reason));
        let Some((decision, by, reason)) = verdict else {
            panic!("an unchecked command was not refused");
        };
        assert_eq!((decision, by), (RuleDecision::Deny, DecidedBy::HardDeny));
        assert!(
            reason.contains("the safety pattern broken does not compile"),
            "{reason}"
        );
        assert_eq!(hard_deny_verdict(Ok(None)), None);
        let fork = hard_deny_verdict(Ok(Some("a fork bomb".into()))).map(|v| v.reason);
        assert_eq!(
            fork.as_deref(),
            Some("refused: the command does a fork bomb, which is never allowed")
        );
    }
}
