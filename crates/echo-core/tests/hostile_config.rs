//! The config file under hostile input, as property tests: any text, and TOML built from
//! the real sections and keys with values of every type, is a config or a clear error —
//! never a panic. `PROPTEST_CASES` sets the case count (docs/reliability.md).

use echo_core::config::Config;
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

proptest! {
    #[test]
    fn any_text_is_a_config_or_an_error(text in ".{0,200}") {
        let _ = Config::parse(&text, Path::new("config.toml"));
    }

    #[test]
    fn real_sections_and_keys_with_any_values_are_a_config_or_an_error(
        lines in prop::collection::vec((section(), key(), value()), 0..12)
    ) {
        let mut text = String::new();
        for (section, key, value) in lines {
            text.push_str(&format!("[{section}]\n{key} = {value}\n"));
        }
        if let Err(e) = Config::parse(&text, Path::new("config.toml")) {
            // The error names the file, on the first line.
            prop_assert!(e.to_string().contains("config.toml"), "{e}");
        }
    }
}
