//! The gateway's OpenAPI document is generated from the operation table and the wire types;
//! the repository keeps a copy (`docs/openapi.json`) for people and client generators. This
//! test fails when the copy is stale; `ECHO_UPDATE_OPENAPI=1 cargo test -p echo-agent --test
//! openapi` rewrites it.

use echo_agent::{OPERATIONS, openapi_document, path_params};
use serde_json::Value;

fn committed_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json")
}

#[test]
fn the_committed_openapi_document_is_current() {
    let want = format!(
        "{}\n",
        serde_json::to_string_pretty(&openapi_document()).expect("the document serialises")
    );
    let path = committed_path();
    if std::env::var_os("ECHO_UPDATE_OPENAPI").is_some() {
        assert!(
            std::env::var_os("CI").is_none(),
            "ECHO_UPDATE_OPENAPI is set on CI, where it would rewrite docs/openapi.json instead of checking it"
        );
        std::fs::write(&path, &want).expect("write docs/openapi.json");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is out of date with the operation table; run `ECHO_UPDATE_OPENAPI=1 cargo test -p echo-agent --test openapi`",
        path.display()
    );
}

/// Every `$ref` in `value`.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref"
                    && let Some(r) = v.as_str()
                {
                    out.push(r.to_string());
                }
                refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn every_operation_has_real_schemas_and_every_reference_resolves() {
    let doc = openapi_document();
    let schemas = doc["components"]["schemas"]
        .as_object()
        .expect("components.schemas");
    let mut found = Vec::new();
    refs(&doc, &mut found);
    for r in &found {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected reference {r}"));
        assert!(schemas.contains_key(name), "{r} does not resolve");
    }
    for op in OPERATIONS {
        let method = op.method.as_str().to_ascii_lowercase();
        let operation = &doc["paths"][op.path][&method];
        assert_eq!(
            operation["operationId"],
            op.name,
            "{} {} is not in the document",
            op.method.as_str(),
            op.path
        );
        let responses = operation["responses"].as_object().expect("responses");
        let ok = responses
            .get("200")
            .or_else(|| responses.get("204"))
            .unwrap_or_else(|| panic!("{} has no success response", op.name));
        if let Some(schema) = ok.pointer("/content/application~1json/schema") {
            assert_ne!(
                schema,
                &serde_json::json!({"type": "object"}),
                "{} answers with a bare Object",
                op.name
            );
        }
        for param in path_params(op.path) {
            let declared = operation["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == param && p["in"] == "path"));
            assert!(
                declared,
                "{}: path parameter {param} is not declared",
                op.name
            );
        }
    }
}
