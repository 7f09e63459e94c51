//! The wire format (what `docs/openapi.json` and `ui/src/generated/engine.ts` are generated
//! from) is declared in one place: `echo-agent`'s `wire` module, whose types mirror the
//! engine's with `From<domain>`. So a stored row can change (a column renamed, a field
//! added for the engine's own use) without changing what a front end receives: only the
//! `From` impl in `wire/` follows. This file checks that from the tree:
//!
//! - no type that maps database rows (`FromRow`, or declared in a `store` module) derives
//!   `TS` or `ToSchema`, wherever it is;
//! - outside `wire`, only the files in [`OUTSIDE_WIRE`] derive them, each for the reason
//!   given; the list may shrink, never grow, and a file that stops deriving must leave it;
//! - only `echo-core` and `echo-agent` depend on `ts-rs` and `utoipa`.

#[path = "support/tree.rs"]
mod tree;

use std::path::Path;
use tree::{files_under, read, rel, report, root};

/// The wire module.
const WIRE: &[&str] = &[
    "crates/echo-agent/src/wire.rs",
    "crates/echo-agent/src/wire/",
];

/// Files outside [`WIRE`] that still declare wire types, and why.
const OUTSIDE_WIRE: &[(&str, &str)] = &[
    (
        "crates/echo-core/src/vocab.rs",
        "closed vocabularies: one enum each, the same on the wire, in storage and in the engine",
    ),
    (
        "crates/echo-core/src/ids.rs",
        "id newtypes: a string on the wire, a distinct type in the engine",
    ),
];

/// The crates that may depend on the wire derives.
const WIRE_CRATES: &[&str] = &["echo-core", "echo-agent"];

/// One `#[derive(...)]` of a file: its derives, and whether the item it is on maps rows.
struct Derive {
    names: Vec<String>,
    line: usize,
}

fn derives(text: &str) -> Vec<Derive> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(at) = rest.find("#[derive(") {
        let start = at + "#[derive(".len();
        let Some(len) = rest[start..].find(")]") else {
            break;
        };
        let names = rest[start..start + len]
            .split(',')
            .map(|n| n.trim().rsplit("::").next().unwrap_or("").to_string())
            .filter(|n| !n.is_empty())
            .collect();
        let line = text[..offset + at].lines().count() + 1;
        out.push(Derive { names, line });
        offset += start + len;
        rest = &rest[start + len..];
    }
    out
}

fn is_wire_derive(d: &Derive) -> bool {
    d.names.iter().any(|n| n == "TS" || n == "ToSchema")
}

fn in_wire(path: &str) -> bool {
    WIRE.iter()
        .any(|w| path == *w || (w.ends_with('/') && path.starts_with(w)))
}

fn is_store_module(path: &str) -> bool {
    path.contains("/store/") || path.ends_with("/store.rs")
}

fn product_files() -> Vec<String> {
    let skip = |name: &str| matches!(name, "tests" | "target" | "node_modules" | "fuzz");
    let mut files = Vec::new();
    for dir in ["crates", "src-tauri/src"] {
        files.extend(files_under(&root().join(dir), &skip, &["rs"]));
    }
    files.iter().map(|p| rel(p)).collect()
}

#[test]
fn no_stored_row_is_a_wire_type() {
    let mut problems = Vec::new();
    for path in product_files() {
        let text = read(&root().join(&path));
        for d in derives(&text) {
            let row = d.names.iter().any(|n| n == "FromRow") || is_store_module(&path);
            if row && is_wire_derive(&d) {
                problems.push(format!(
                    "{path}:{}: a stored row derives TS/ToSchema; declare its wire type in \
                     crates/echo-agent/src/wire/ with From<row>",
                    d.line
                ));
            }
        }
    }
    report("stored rows used as wire types", problems);
}

#[test]
fn wire_types_are_declared_in_the_wire_module() {
    let mut problems = Vec::new();
    let mut deriving = Vec::new();
    for path in product_files() {
        let text = read(&root().join(&path));
        if derives(&text).iter().any(is_wire_derive) {
            deriving.push(path.clone());
            if !in_wire(&path) && !OUTSIDE_WIRE.iter().any(|(f, _)| *f == path) {
                problems.push(format!(
                    "{path} derives TS/ToSchema outside crates/echo-agent/src/wire/: move the \
                     type there (with From<domain> if the engine keeps its own)"
                ));
            }
        }
    }
    for (file, _) in OUTSIDE_WIRE {
        if !deriving.iter().any(|p| p == file) {
            problems.push(format!(
                "{file} no longer declares a wire type: drop it from OUTSIDE_WIRE"
            ));
        }
    }
    report("wire types outside the wire module", problems);
}

#[test]
fn only_the_wire_crates_depend_on_the_wire_derives() {
    let mut problems = Vec::new();
    for dir in ["crates", "src-tauri"] {
        let base = root().join(dir);
        let manifests: Vec<_> = if dir == "src-tauri" {
            vec![base.join("Cargo.toml")]
        } else {
            std::fs::read_dir(&base)
                .expect("crates/")
                .map(|e| e.expect("entry").path().join("Cargo.toml"))
                .filter(|p| p.is_file())
                .collect()
        };
        for manifest in manifests {
            let table: toml::Table = read(&manifest).parse().expect("a manifest");
            let name = table["package"]["name"].as_str().unwrap_or("").to_string();
            let deps = table.get("dependencies").and_then(|d| d.as_table());
            for derive in ["ts-rs", "utoipa"] {
                if deps.is_some_and(|d| d.contains_key(derive))
                    && !WIRE_CRATES.contains(&name.as_str())
                {
                    problems.push(format!(
                        "{}: {name} depends on {derive}; only {WIRE_CRATES:?} declare wire types",
                        rel(Path::new(&manifest))
                    ));
                }
            }
        }
    }
    report("crates depending on the wire derives", problems);
}

#[test]
fn the_derive_reader_finds_what_it_should() {
    let text = "struct A;\n#[derive(Clone, ts_rs::TS)]\nstruct B;\n#[derive(\n    Debug,\n    sqlx::FromRow,\n)]\nstruct C;";
    let found = derives(text);
    assert_eq!(found.len(), 2);
    assert!(is_wire_derive(&found[0]));
    assert_eq!(found[0].line, 2);
    assert!(!is_wire_derive(&found[1]));
    assert!(found[1].names.iter().any(|n| n == "FromRow"));
    assert!(in_wire("crates/echo-agent/src/wire/memory.rs"));
    assert!(!in_wire("crates/echo-agent/src/wired.rs"));
    assert!(is_store_module("crates/echo-core/src/store/turns.rs"));
}
