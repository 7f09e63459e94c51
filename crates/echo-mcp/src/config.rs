//! Checks an MCP server's configuration before anything is started, so a bad entry fails on
//! its own with a message that names the field.

use echo_core::config::McpServerConfig;

/// Longest server name accepted; tool names must stay short enough for providers.
const MAX_NAME_LEN: usize = 32;

/// What is wrong with one `[[tools.mcp]]` entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The name cannot prefix tool names unambiguously.
    #[error("invalid MCP server name {name:?}: {reason}")]
    BadName {
        /// The name as configured.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two servers share a name.
    #[error("MCP server name {name:?} is used twice")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// Neither `command` nor `url` is set, or both are.
    #[error("MCP server {name}: set exactly one of `command` (stdio) or `url` (streamable HTTP)")]
    Transport {
        /// The server.
        name: String,
    },
    /// The URL is not an `http://` or `https://` URL.
    #[error("MCP server {name}: `url` must start with http:// or https://, not {url:?}")]
    BadUrl {
        /// The server.
        name: String,
        /// The URL as configured.
        url: String,
    },
    /// A header name or value cannot be sent.
    #[error("MCP server {name}: header {header:?} is not a valid HTTP header")]
    BadHeader {
        /// The server.
        name: String,
        /// The header name.
        header: String,
    },
}

/// Checks a server name: 1 to 32 letters, digits, `-` and `_`, neither starting nor ending
/// with `_` and without `__`, so `{name}__` prefixes exactly this server's tools.
pub fn validate_server_name(name: &str) -> Result<(), ConfigError> {
    let bad = |reason| {
        Err(ConfigError::BadName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad("it is longer than 32 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return bad("use only letters, digits, '-' and '_'");
    }
    if name.starts_with('_') || name.ends_with('_') || name.contains("__") {
        return bad("'_' may not start or end it, nor appear twice in a row");
    }
    Ok(())
}

/// Checks a whole list the way starting it would: every entry, and names unique. For settings
/// pages, so a bad list is refused before it is saved.
pub fn validate_servers(configs: &[McpServerConfig]) -> Result<(), ConfigError> {
    let mut names = std::collections::HashSet::new();
    for config in configs {
        validate(config)?;
        if !names.insert(config.name.as_str()) {
            return Err(ConfigError::DuplicateName {
                name: config.name.clone(),
            });
        }
    }
    Ok(())
}

/// Checks everything about one entry except name uniqueness.
pub(crate) fn validate(config: &McpServerConfig) -> Result<(), ConfigError> {
    validate_server_name(&config.name)?;
    let name = || config.name.clone();
    match (&config.command, &config.url) {
        (Some(command), None) if !command.trim().is_empty() => {}
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::BadUrl {
                    name: name(),
                    url: url.clone(),
                });
            }
            for (header, value) in &config.headers {
                let ok = http::HeaderName::from_bytes(header.as_bytes()).is_ok()
                    && http::HeaderValue::from_str(value).is_ok();
                if !ok {
                    return Err(ConfigError::BadHeader {
                        name: name(),
                        header: header.clone(),
                    });
                }
            }
        }
        _ => return Err(ConfigError::Transport { name: name() }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, ok: bool) {
        assert_eq!(validate_server_name(name).is_ok(), ok, "{name:?}");
    }

    #[test]
    fn server_names() {
        for good in ["files", "git-hub", "my_server", "a1", "X"] {
            check(good, true);
        }
        for bad in [
            "",
            "has space",
            "dot.ted",
            "slash/y",
            "a__b",
            "_a",
            "a_",
            "ünï",
            &"x".repeat(33),
        ] {
            check(bad, false);
        }
    }

    #[test]
    fn transports_and_headers() {
        let base = McpServerConfig {
            name: "s".into(),
            command: None,
            args: vec![],
            env: Default::default(),
            url: None,
            headers: Default::default(),
            enabled: true,
        };
        assert!(matches!(
            validate(&base),
            Err(ConfigError::Transport { .. })
        ));
        let both = McpServerConfig {
            command: Some("x".into()),
            url: Some("http://h".into()),
            ..base.clone()
        };
        assert!(matches!(
            validate(&both),
            Err(ConfigError::Transport { .. })
        ));
        let ftp = McpServerConfig {
            url: Some("ftp://h".into()),
            ..base.clone()
        };
        assert!(matches!(validate(&ftp), Err(ConfigError::BadUrl { .. })));
        let mut header = McpServerConfig {
            url: Some("https://h/mcp".into()),
            ..base.clone()
        };
        header
            .headers
            .insert("Authorization".into(), "Bearer t".into());
        assert_eq!(validate(&header), Ok(()));
        header.headers.insert("bad header".into(), "v".into());
        assert!(matches!(
            validate(&header),
            Err(ConfigError::BadHeader { .. })
        ));
    }
}
