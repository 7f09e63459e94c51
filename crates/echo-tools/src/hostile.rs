//! Hostile input to the tools, as property tests: any arguments a model writes for any
//! built-in tool (JSON or not) end in a prepared call or a message for the model that names the
//! problem — never a panic. `PROPTEST_CASES` sets the case count (docs/reliability.md). SKILL.md
//! parsing has its own in `skills/tests.rs`.

use crate::ToolRegistry;
use crate::test_support::{TestDir, ctx};
use echo_core::ToolCall;
use proptest::prelude::*;

#[path = "../../echo-core/tests/support/any_json.rs"]
mod any_json;

/// The argument names of the built-in tools, and a value each should refuse.
const KEYS: &[&str] = &[
    "path",
    "command",
    "content",
    "query",
    "start_line",
    "max_lines",
    "timeout_secs",
    "pattern",
    "old",
    "new",
    "url",
    "id",
    "name",
    "x",
];
const STRINGS: &[&str] = &["../../../../etc/passwd"];

proptest! {
    #[test]
    fn any_arguments_for_any_built_in_tool_are_prepared_or_refused(
        tool in 0usize..32,
        args in prop_oneof![any_json::any_json(KEYS, STRINGS).prop_map(|v| v.to_string()), ".{0,40}"],
    ) {
        let registry = ToolRegistry::with_builtins();
        let names = registry.names();
        let name = names[tool % names.len()].clone();
        let dir = TestDir::new();
        let call = ToolCall { id: "c1".into(), name, arguments: args.clone() };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        // Preparing validates and describes the call; it never runs it.
        let text = if args.trim().is_empty() { "{}" } else { args.as_str() };
        let parsed = serde_json::from_str::<serde_json::Value>(text);
        match runtime.block_on(registry.prepare(&call, &ctx(dir.path()))) {
            Ok(prepared) => {
                prop_assert_eq!(Some(&prepared.args), parsed.as_ref().ok(), "prepared from other arguments");
                prop_assert!(prepared.args.is_object(), "prepared with {} (not an object)", prepared.args);
            }
            Err(out) => {
                prop_assert!(!out.ok);
                let kind = out.error_kind.unwrap_or_default();
                // The message is for the model: it says what was wrong, not just that it was.
                prop_assert!(
                    out.content.to_lowercase().starts_with("error:") && out.content.len() > 12,
                    "{kind}: {:?}", out.content
                );
                if parsed.is_err() {
                    prop_assert_eq!(kind, "invalid_json", "{}", out.content);
                    prop_assert!(out.content.contains("not valid JSON"), "{}", out.content);
                    prop_assert!(out.content.contains(&call.name), "{}", out.content);
                } else {
                    prop_assert!(
                        ["invalid_arguments", "failed"].contains(&kind),
                        "JSON arguments failed as {kind}: {}", out.content
                    );
                }
            }
        }
    }

}
