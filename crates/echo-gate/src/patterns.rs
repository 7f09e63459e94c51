//! Every regular expression a safety check of the gate relies on — the hard-deny patterns
//! and the secret masking of the audit log — in one table ([`PATTERNS`]), compiled by one
//! function ([`build`]) that names the pattern that does not compile.
//!
//! The checks fail closed. The table is compiled once, on first use, into a
//! `Result<SafetyPatterns, PatternError>`; it is never reduced to the patterns that happened
//! to compile. If any pattern fails, every shell command is refused by the hard-deny check
//! (the verdict's reason names the broken pattern) and [`crate::mask_secrets`] returns the
//! mask alone instead of the arguments. A unit test compiles the whole table, so a broken
//! pattern fails the build's tests long before it could reach a user.

use regex::Regex;
use std::sync::LazyLock;

/// What a pattern of the table is used for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Use {
    /// A command line matching it is refused; the text says what the command does.
    HardDeny(&'static str),
    /// A JSON object key matching it names a secret: its value is masked whole.
    SecretKey,
    /// Text matching it is a secret and is replaced by this (`$1` names a group).
    SecretValue(&'static str),
}

/// One pattern of the table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pattern {
    /// Short stable name, for error messages.
    pub name: &'static str,
    /// The regular expression.
    pub regex: &'static str,
    /// What it is for.
    pub used_as: Use,
}

const fn p(name: &'static str, regex: &'static str, used_as: Use) -> Pattern {
    Pattern {
        name,
        regex,
        used_as,
    }
}

/// Every safety pattern of the gate. The masking patterns run in this order.
pub(crate) const PATTERNS: &[Pattern] = &[
    p(
        "fork_bomb",
        r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",
        Use::HardDeny("a fork bomb"),
    ),
    p(
        "block_device_redirect",
        r">\s*/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|loop\d)",
        Use::HardDeny("writing to a block device"),
    ),
    p(
        "secret_key_name",
        r"(?i)(api[_-]?key|token|secret|passw(or)?d|authorization|cookie|credential|private[_-]?key)",
        Use::SecretKey,
    ),
    p(
        "openai_anthropic_key",
        r"sk-(ant-)?[A-Za-z0-9_\-]{16,}",
        Use::SecretValue("sk-***"),
    ),
    p(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{20,}",
        Use::SecretValue("gh*_***"),
    ),
    p(
        "slack_token",
        r"xox[abprs]-[A-Za-z0-9\-]{10,}",
        Use::SecretValue("xox*-***"),
    ),
    p(
        "aws_access_key_id",
        r"AKIA[0-9A-Z]{16}",
        Use::SecretValue("AKIA***"),
    ),
    p(
        "http_auth_credentials",
        r"(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}",
        Use::SecretValue("$1 ***"),
    ),
    p(
        "secret_assignment",
        r"(?i)\b(api[_-]?key|token|secret|password|passwd|pwd)\s*([=:])\s*[^\s&;]+",
        Use::SecretValue("$1$2***"),
    ),
    // Secret-named keys in JSON-like text that is not parsed as JSON: truncated or invalid
    // arguments, a JSON body inside a command (`curl -d '{"password":"…"}'`), Python dicts.
    p(
        "quoted_secret_field",
        r#"(?i)("[^"]*(?:api[_-]?key|token|secret|passw(?:or)?d|authorization|cookie|credential|private[_-]?key)[^"]*"\s*:\s*)"(?:[^"\\]|\\.)*("|$)"#,
        Use::SecretValue(r#"${1}"***""#),
    ),
    p(
        "single_quoted_secret_field",
        r"(?i)('[^']*(?:api[_-]?key|token|secret|passw(?:or)?d|authorization|cookie|credential|private[_-]?key)[^']*'\s*:\s*)'(?:[^'\\]|\\.)*('|$)",
        Use::SecretValue("${1}'***'"),
    ),
    p(
        "pem_private_key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)",
        Use::SecretValue("[private key]"),
    ),
];

/// The compiled table.
#[derive(Debug)]
pub(crate) struct SafetyPatterns {
    /// Hard-deny patterns with what a matching command does.
    pub hard_deny: Vec<(Regex, &'static str)>,
    /// Patterns of object keys whose values are secrets.
    pub secret_keys: Vec<Regex>,
    /// Secret shapes in text with their replacement, in table order.
    pub secret_values: Vec<(Regex, &'static str)>,
}

/// A safety pattern that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("the safety pattern {name} does not compile: {error}")]
pub(crate) struct PatternError {
    /// The pattern's name in the table.
    pub name: &'static str,
    /// What the regex compiler said.
    #[source]
    pub error: regex::Error,
}

/// Compiles every pattern of `table`, or says which one does not compile. All or nothing: a
/// check is never built from part of its patterns.
pub(crate) fn build(table: &[Pattern]) -> Result<SafetyPatterns, PatternError> {
    let mut out = SafetyPatterns {
        hard_deny: Vec::new(),
        secret_keys: Vec::new(),
        secret_values: Vec::new(),
    };
    for pattern in table {
        let re = Regex::new(pattern.regex).map_err(|error| PatternError {
            name: pattern.name,
            error,
        })?;
        match pattern.used_as {
            Use::HardDeny(what) => out.hard_deny.push((re, what)),
            Use::SecretKey => out.secret_keys.push(re),
            Use::SecretValue(with) => out.secret_values.push((re, with)),
        }
    }
    Ok(out)
}

static SAFETY: LazyLock<Result<SafetyPatterns, PatternError>> = LazyLock::new(|| build(PATTERNS));

/// The gate's compiled safety patterns, or why they could not be compiled (callers then fail
/// closed, see the module docs).
pub(crate) fn safety() -> Result<&'static SafetyPatterns, &'static PatternError> {
    SAFETY.as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_safety_pattern_compiles() {
        for pattern in PATTERNS {
            if let Err(e) = build(std::slice::from_ref(pattern)) {
                panic!("{e}");
            }
        }
        let all = build(PATTERNS).unwrap_or_else(|e| panic!("{e}"));
        let kinds = |f: fn(&Use) -> bool| PATTERNS.iter().filter(|p| f(&p.used_as)).count();
        assert_eq!(
            all.hard_deny.len(),
            kinds(|u| matches!(u, Use::HardDeny(_)))
        );
        assert_eq!(
            all.secret_keys.len(),
            kinds(|u| matches!(u, Use::SecretKey))
        );
        assert_eq!(
            all.secret_values.len(),
            kinds(|u| matches!(u, Use::SecretValue(_)))
        );
        assert!(safety().is_ok());
    }

    #[test]
    fn pattern_names_are_unique() {
        let mut names: Vec<&str> = PATTERNS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PATTERNS.len());
    }

    #[test]
    fn a_broken_pattern_fails_the_whole_build_and_is_named() {
        let table = [
            PATTERNS[0],
            p("unclosed_group", r"(sk-[a-z]+", Use::SecretValue("***")),
        ];
        let err = build(&table).err().map(|e| e.to_string());
        let err = err.unwrap_or_default();
        assert!(
            err.starts_with("the safety pattern unclosed_group does not compile"),
            "{err}"
        );
    }
}
