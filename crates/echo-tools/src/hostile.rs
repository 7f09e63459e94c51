//! Hostile input to the tools, as property tests: any arguments a model writes for any
//! built-in tool (JSON or not) end in a prepared call or a message for the model — never a panic. `PROPTEST_CASES` sets the case count
//! (docs/reliability.md). SKILL.md parsing has its own in `skills/tests.rs`.

use crate::ToolRegistry;
use crate::test_support::{TestDir, ctx};
use echo_core::ToolCall;
use proptest::prelude::*;
use serde_json::Value;

/// Any JSON value, nested a little.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        ".{0,16}".prop_map(Value::String),
        Just(Value::String("../../../../etc/passwd".into())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
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
                ]),
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_arguments_for_any_built_in_tool_are_prepared_or_refused(
        tool in 0usize..32,
        args in prop_oneof![json_value().prop_map(|v| v.to_string()), ".{0,40}"],
    ) {
        let registry = ToolRegistry::with_builtins();
        let names = registry.names();
        let name = names[tool % names.len()].clone();
        let dir = TestDir::new();
        let call = ToolCall { id: "c1".into(), name, arguments: args };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        // Preparing validates and describes the call; it never runs it.
        let _ = runtime.block_on(registry.prepare(&call, &ctx(dir.path())));
    }

}
