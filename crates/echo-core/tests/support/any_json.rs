//! Any JSON value, for hostile-input property tests: shared by the test suites that include
//! it with `#[path]` (echo-tools' tool arguments, echod's gateway bodies and trace edits).

use proptest::prelude::*;
use serde_json::Value;

/// Any JSON value, nested a little. Object keys are often one of `keys` (the names the code
/// under test looks for), and strings are sometimes one of `strings` (values it should refuse,
/// such as a path out of the workspace).
pub fn any_json(
    keys: &'static [&'static str],
    strings: &'static [&'static str],
) -> impl Strategy<Value = Value> {
    let mut leaves = vec![
        Just(Value::Null).boxed(),
        any::<bool>().prop_map(Value::Bool).boxed(),
        any::<i64>().prop_map(Value::from).boxed(),
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number))
            .boxed(),
        ".{0,40}".prop_map(Value::String).boxed(),
    ];
    if !strings.is_empty() {
        leaves.push(prop::sample::select(strings).prop_map(Value::from).boxed());
    }
    let key = if keys.is_empty() {
        ".{0,12}".boxed()
    } else {
        prop_oneof![
            ".{0,12}",
            prop::sample::select(keys).prop_map(str::to_string),
        ]
        .boxed()
    };
    proptest::strategy::Union::new(leaves).prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
