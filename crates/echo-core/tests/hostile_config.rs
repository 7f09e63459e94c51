//! The config file under hostile input, as property tests: any text, and TOML built from
//! the real sections and keys with values of every type, is a config or a clear error —
//! never a panic. A clear error names the file, a line and column inside the text, and what
//! is wrong; text that is not TOML at all is never a config. `PROPTEST_CASES` sets the case
//! count (docs/reliability.md).

use echo_core::config::{Config, ConfigError};
use proptest::prelude::*;
use std::path::Path;

/// A TOML value of any type, some of them out of every range.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        Just("nan".to_string()),
        Just("-inf".to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        ".{0,12}".prop_map(|s| format!("{s:?}")),
        Just("\"http://[::1\"".to_string()),
        Just("[\"a\", 1, true]".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("[]".to_string()),
    ]
}

fn section() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "llm",
        "llm.timeouts",
        "llm.retry",
        "agent",
        "memory",
        "context",
        "tools",
        "trace",
        "routing",
        "desktop",
        "automations",
        "nonsense",
    ])
}

fn key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "kind",
        "base_url",
        "model",
        "fallback_models",
        "max_tokens",
        "context_window",
        "reserve_output",
        "temperature",
        "connect_secs",
        "first_byte_secs",
        "idle_secs",
        "max_retries",
        "initial_backoff_ms",
        "max_backoff_ms",
        "max_iterations",
        "background_wait_secs",
        "extraction",
        "embedder",
        "recall_k",
        "half_life_days",
        "capture",
        "chat",
        "unknown_key",
    ])
}

/// `Config::parse`'s answer for `text` is a config only when the text is TOML, and otherwise
/// an error at a place inside the text that says what is wrong there.
fn check(text: &str) -> Result<(), TestCaseError> {
    let is_toml = text.parse::<toml::Table>().is_ok();
    match Config::parse(text, Path::new("config.toml")) {
        Ok(_) => prop_assert!(is_toml, "{text:?} is not TOML but was taken as a config"),
        Err(e) => {
            let shown = e.to_string();
            let ConfigError::File {
                path,
                line,
                column,
                message,
                ..
            } = e
            else {
                return Err(TestCaseError::fail(format!("not a file error: {shown}")));
            };
            prop_assert_eq!(path, Path::new("config.toml"));
            let lines = text.split('\n').count();
            prop_assert!(
                (1..=lines).contains(&line),
                "line {line} of {lines}: {shown}"
            );
            prop_assert!(column >= 1, "{shown}");
            prop_assert!(!message.trim().is_empty(), "no reason: {shown}");
            prop_assert!(
                shown.starts_with(&format!("config.toml:{line}:{column}: ")),
                "{shown}"
            );
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn any_text_is_a_config_or_an_error(text in prop_oneof![
        ".{0,200}",
        "[a-z_\\[\\]=\"0-9. \n]{0,80}",
    ]) {
        check(&text)?;
    }

    #[test]
    fn real_sections_and_keys_with_any_values_are_a_config_or_an_error(
        lines in prop::collection::vec((section(), key(), value()), 0..12)
    ) {
        let mut text = String::new();
        for (section, key, value) in lines {
            text.push_str(&format!("[{section}]\n{key} = {value}\n"));
        }
        check(&text)?;
    }
}
