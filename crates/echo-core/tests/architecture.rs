//! `ARCHITECTURE.md` as a map that stays short and true: at most [`MAX_LINES`] lines, every
//! workspace member and every `Api` domain module named in its code map, every invariant
//! naming a test that exists; and two of those invariants, which are about where code may
//! live, checked here on the tree: a model request is built in one place outside echo-llm,
//! and a memory row is inserted in one place; one name per closed vocabulary; and one
//! turn's walk of at most [`MAX_WALK`] files, none entered twice. It lives in `echo-core`
//! beside `tidy.rs` because that crate builds fastest; it reads the tree with `std::fs`.

#[path = "support/tree.rs"]
mod tree;

use std::fs;
use std::path::PathBuf;
use tree::{files_under, read, rel, report, root};

/// The most lines `ARCHITECTURE.md` may have: a map, not a manual (detail lives in the `//!`
/// of the module it describes).
const MAX_LINES: usize = 250;

/// The folder of `Api`'s domain modules, each of which the code map names.
const API_DIR: &str = "crates/echo-agent/src/api";

fn architecture() -> String {
    read(&root().join("ARCHITECTURE.md"))
}

/// The lines of `text` from the heading `## {title}` up to the next `## ` heading.
fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    let heading = format!("## {title}");
    text.lines()
        .skip_while(|l| l.trim() != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect()
}

#[test]
fn the_map_is_short_and_names_every_room() {
    let text = architecture();
    let mut problems = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_LINES {
        problems.push(format!(
            "ARCHITECTURE.md has {lines} lines, more than {MAX_LINES}: move how a part works \
             into the `//!` docs of its module and keep here what rarely changes"
        ));
    }
    let map = section(&text, "Code map");
    if map.is_empty() {
        problems.push("ARCHITECTURE.md: no \"## Code map\" section".into());
    }
    let workspace: toml::Table = read(&root().join("Cargo.toml"))
        .parse()
        .expect("Cargo.toml");
    let members = workspace["workspace"]["members"]
        .as_array()
        .expect("workspace.members");
    for member in members {
        let dir = member
            .as_str()
            .expect("a member is a path")
            .trim_end_matches('/');
        let named = map.iter().any(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|first| first.trim_end_matches('/') == dir)
        });
        if !named {
            problems.push(format!(
                "ARCHITECTURE.md: the code map has no line for workspace member `{dir}`: add \
                 one (at most four lines) saying what the room is for"
            ));
        }
    }
    let words: Vec<&str> = map.iter().flat_map(|l| l.split_whitespace()).collect();
    for file in files_under(&root().join(API_DIR), &|_| true, &["rs"]) {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !words.contains(&name) {
            problems.push(format!(
                "ARCHITECTURE.md: the code map does not list `{API_DIR}/{name}`: add it to the \
                 list of `Api`'s domain modules"
            ));
        }
    }
    report("gaps in ARCHITECTURE.md's map", problems);
}

#[test]
fn every_invariant_names_a_test_that_exists() {
    let text = architecture();
    let invariants = bullets(&section(&text, "Invariants"));
    let mut problems = Vec::new();
    if invariants.is_empty() {
        problems.push("ARCHITECTURE.md: no bullets under \"## Invariants\"".into());
    }
    for invariant in &invariants {
        let short: String = invariant.chars().take(70).collect();
        let tests: Vec<&str> = invariant
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| s.contains(".rs::"))
            .collect();
        if tests.is_empty() {
            problems.push(format!(
                "ARCHITECTURE.md invariant \"{short}…\" names no test: add \
                 `path/to/file.rs::test_name` of the test that fails when it breaks"
            ));
        }
        for test in tests {
            if let Err(why) = test_exists(test) {
                problems.push(format!("ARCHITECTURE.md invariant \"{short}…\": {why}"));
            }
        }
    }
    report("invariants without a test", problems);
}

/// Bullets (`- …` and their continuation lines) joined into one string each.
fn bullets(lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("- ") {
            out.push(rest.to_string());
        } else if line.starts_with("  ")
            && let Some(last) = out.last_mut()
        {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    out
}

/// Whether `path::name` is a file of the repository with a `fn name(` in it.
fn test_exists(reference: &str) -> Result<(), String> {
    let (path, name) = reference
        .rsplit_once("::")
        .ok_or_else(|| format!("`{reference}` is not `path::test_name`"))?;
    let file = root().join(path);
    let code = fs::read_to_string(&file)
        .map_err(|e| format!("`{reference}`: cannot read {path} ({e})"))?;
    if code.contains(&format!("fn {name}(")) {
        Ok(())
    } else {
        Err(format!(
            "`{reference}`: {path} has no `fn {name}(`; say where the test is now"
        ))
    }
}

/// Most files one turn's input may pass through from the gateway to the model request.
const MAX_WALK: usize = 6;

#[test]
fn one_turns_walk_is_short_and_goes_one_way() {
    // The walk is the code block of "One turn, file by file": one file a line, in order.
    let text = architecture();
    let walk: Vec<String> = section(&text, "One turn, file by file")
        .into_iter()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    let mut problems = Vec::new();
    if walk.is_empty() || walk.len() > MAX_WALK {
        problems.push(format!(
            "the walk lists {} files; it must list between 1 and {MAX_WALK}",
            walk.len()
        ));
    }
    let mut sources: Vec<(String, String)> = Vec::new();
    for path in &walk {
        if sources.iter().any(|(p, _)| p == path) {
            problems.push(format!("{path} is entered twice"));
            continue;
        }
        let file = root().join(path);
        if !file.is_file() {
            problems.push(format!("{path} is not a file"));
            continue;
        }
        let source = read(&file);
        // Some function it declares is called by a file before it (`.name(` or `::name(`).
        if !sources.is_empty() {
            let called = declared_functions(&source).into_iter().any(|name| {
                sources.iter().any(|(_, earlier)| {
                    earlier.contains(&format!(".{name}("))
                        || earlier.contains(&format!("::{name}("))
                })
            });
            if !called {
                problems.push(format!(
                    "no file before {path} in the walk calls a function it declares"
                ));
            }
        }
        sources.push((path.clone(), source));
    }
    report("one turn's walk", problems);
}

/// The names of the functions `source` declares.
fn declared_functions(source: &str) -> Vec<String> {
    source
        .split("fn ")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

#[test]
fn a_model_request_is_built_in_one_place() {
    // echo-llm defines the request and its providers build their own in their tests; every
    // other crate goes through echo-agent's `ModelCall`, which builds and records it.
    let allowed = ["crates/echo-agent/src/model_calls.rs"];
    let found = occurrences("ChatRequest {", |path| {
        !path.starts_with("crates/echo-llm/")
    });
    let problems = found
        .into_iter()
        .filter(|(path, _)| !allowed.contains(&path.as_str()))
        .map(|(path, n)| {
            format!(
                "{path}:{n}: builds a `ChatRequest` by hand: build it with \
                 `model_calls::ModelCall`, so it is fitted, sent and recorded like every call"
            )
        })
        .collect();
    report("model requests built outside ModelCall", problems);
}

#[test]
fn memories_enter_the_store_in_one_place() {
    let mut problems: Vec<String> = occurrences("INSERT INTO memories ", |_| true)
        .into_iter()
        .filter(|(path, _)| path != "crates/echo-memory/src/store/rows.rs")
        .map(|(path, n)| {
            format!(
                "{path}:{n}: inserts a memory row directly: go through echo-memory's write \
                 path, which checks, judges conflicts and writes history and outbox"
            )
        })
        .collect();
    problems.extend(
        occurrences("insert_tx(", |_| true)
            .into_iter()
            .filter(|(path, _)| {
                path != "crates/echo-memory/src/store/rows.rs"
                    && path != "crates/echo-memory/src/write.rs"
            })
            .map(|(path, n)| {
                format!("{path}:{n}: calls `insert_tx` outside the write path (`write.rs`)")
            }),
    );
    report("memory rows inserted outside the write path", problems);
}

#[test]
fn every_closed_vocabulary_has_one_name() {
    // `closed_enum!(Name as WireName = "WireName" …)` in echo-core's vocab.rs: the Rust name,
    // the TypeScript/OpenAPI name, and no `use … as …` giving it a third.
    let vocab = read(&root().join("crates/echo-core/src/vocab.rs"));
    let mut names = Vec::new();
    let mut problems = Vec::new();
    for line in vocab.lines().map(str::trim) {
        let Some((name, rest)) = line.split_once(" as ") else {
            continue;
        };
        let Some((wire, _)) = rest.split_once(" = \"") else {
            continue;
        };
        if name.contains(char::is_whitespace) || !line.ends_with('{') {
            continue;
        }
        if name != wire {
            problems.push(format!(
                "crates/echo-core/src/vocab.rs: `{name}` is `{wire}` on the wire: give it one name"
            ));
        }
        names.push(name.to_string());
    }
    assert!(
        names.len() > 10,
        "no closed vocabularies found in vocab.rs ({names:?})"
    );
    for top in ["crates", "src-tauri"] {
        for file in rust_files_under(top) {
            for (n, line) in read(&file).lines().enumerate() {
                let words: Vec<&str> = line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .collect();
                for pair in words.windows(3) {
                    let [from, "as", to] = pair else { continue };
                    let renamed = from != to
                        && (names.iter().any(|v| v == from) || names.iter().any(|v| v == to));
                    if renamed && !line.trim_start().starts_with("//") {
                        problems.push(format!(
                            "{}:{}: `{from} as {to}` gives a closed vocabulary a second name: \
                             use its own",
                            rel(&file),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    report("closed vocabularies with more than one name", problems);
}

/// `(file, line)` of every occurrence of `needle` in the non-test Rust code under `crates/`
/// and `src-tauri/` of the files `keep` accepts. A top-level `#[cfg(test)] mod … { … }`,
/// `tests/` folders and `tests.rs` files are test code.
fn occurrences(needle: &str, keep: impl Fn(&str) -> bool) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for top in ["crates", "src-tauri"] {
        for file in rust_files_under(top) {
            let path = rel(&file);
            if !keep(&path) || path.contains("/tests/") || path.ends_with("/tests.rs") {
                continue;
            }
            let text = read(&file);
            let mut in_tests = false;
            let mut after_cfg_test = false;
            for (n, line) in text.lines().enumerate() {
                if in_tests {
                    in_tests = line != "}";
                    continue;
                }
                if after_cfg_test && line.starts_with("mod ") && line.ends_with('{') {
                    in_tests = true;
                    continue;
                }
                after_cfg_test = line.trim() == "#[cfg(test)]";
                if line.contains(needle) && !line.trim_start().starts_with("//") {
                    found.push((path.clone(), n + 1));
                }
            }
        }
    }
    found
}

/// The Rust files below `top` (a folder of the workspace root), without build output.
fn rust_files_under(top: &str) -> Vec<PathBuf> {
    let skip = |name: &str| name == "target" || name == "gen";
    files_under(&root().join(top), &skip, &["rs"])
}
