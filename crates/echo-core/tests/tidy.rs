//! Tidy checks over the whole repository (rust-analyzer's `tidy` idea): every Rust file opens
//! with a `//!` header, no test is switched off, stale words stay out of the prose, the prose
//! names commits and dates rather than the units of work that made them, source files stay
//! small, `ARCHITECTURE.md` says what the code does and the README lists every `echod`
//! command. Each failure names the file and line and says how to fix it. It lives in
//! `echo-core` because that crate builds fastest; it reads the tree with `std::fs` from the
//! workspace root.

#[path = "support/tree.rs"]
mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use tree::{files_under, read, rel, report, root};

/// Folders never walked: build output, installed packages, generated Tauri files, and hidden
/// folders (`.git`, `.cargo`, `.ci`).
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", "gen", "dist"];

/// Text files the stale-word check reads, by extension.
const TEXT_EXTENSIONS: &[&str] = &[
    "rs", "md", "ts", "tsx", "js", "mjs", "sh", "toml", "sql", "html", "css", "yml", "yaml",
];

/// This file, from the workspace root.
const ME: &str = "crates/echo-core/tests/tidy.rs";

/// The most lines a source file may have, unless [`LONG_FILES`] lists it.
const MAX_LINES: usize = 800;

/// Source files over [`MAX_LINES`] today, each with its current length as a ceiling: a file
/// may shrink, never grow past it, and leaves this list once it is under the limit. The way
/// out is to split the file along its seams, not to raise a number here.
const LONG_FILES: &[(&str, usize)] = &[];

/// A word that once described the code and no longer does, with the few places it may stay.
struct Stale {
    /// Matched case-insensitively.
    word: &'static str,
    /// What to write instead.
    fix: &'static str,
    /// Path prefixes (from the repository root) where the word is still true.
    allowed_in: &'static [&'static str],
    /// A line containing one of these says the word is history (or names the one true use).
    allowed_on_lines_with: &'static [&'static str],
}

const STALE: &[Stale] = &[
    Stale {
        word: "FTS5",
        fix: "memory search is the in-process BM25 index (echo-memory/src/bm25.rs); FTS5 was \
              dropped for memories in migration 0007 (only the history archive still uses it)",
        allowed_in: &[
            // The schema's history: 0002/0006 created FTS5 tables, 0007 dropped them.
            "crates/echo-memory/migrations/",
            // The history archive's table (migration 0005) is FTS5.
            "crates/echo-core/migrations/0005_history_summaries.sql",
            // Measurements taken while FTS5 was the index.
            "docs/benchmarks.md",
            // The history archive (migration 0005) still searches with FTS5.
            "crates/echo-core/src/text.rs",
            "crates/echo-core/src/store/archive.rs",
            // Reproduces FTS5's bm25() formula and says why it replaced FTS5.
            "crates/echo-memory/src/bm25.rs",
        ],
        allowed_on_lines_with: &["replaced"],
    },
    Stale {
        word: "memories_fts",
        fix: "the memory FTS tables were dropped in migration 0007; memory search is bm25.rs",
        allowed_in: &["crates/echo-memory/migrations/"],
        allowed_on_lines_with: &[],
    },
    Stale {
        word: "mirrored by hand",
        fix: "every wire type the UI uses is generated (ui/src/generated/engine.ts, from the \
              Rust types by ts-rs); say so instead",
        allowed_in: &[],
        allowed_on_lines_with: &[],
    },
    Stale {
        word: "#token=",
        fix: "the gateway's printed address carries a one-time `#pair=` code, traded for a \
              per-process token (POST /api/pair); no lasting token is in an address any more",
        // The history of the fix: the token the browser kept, found by the profile scan.
        allowed_in: &["docs/reliability.md"],
        allowed_on_lines_with: &[],
    },
    Stale {
        word: "one integration-test binary per crate",
        fix: "crates have as many test binaries as they need (echod has one per area)",
        allowed_in: &[],
        allowed_on_lines_with: &[],
    },
];

#[test]
fn every_rust_file_opens_with_a_doc_comment() {
    let mut problems = Vec::new();
    for file in files_with_extensions(&["rs"]) {
        let text = read(&file);
        let first = text
            .lines()
            .enumerate()
            .find(|(_, line)| !line.trim().is_empty());
        match first {
            Some((_, line)) if line.trim_start().starts_with("//!") => {}
            Some((n, _)) => problems.push(format!(
                "{}:{}: the file must open with a `//!` doc comment; add one line above it \
                 saying what the file is for",
                rel(&file),
                n + 1
            )),
            None => problems.push(format!(
                "{}:1: the file is empty; delete it or open it with a `//!` doc comment",
                rel(&file)
            )),
        }
    }
    report("Rust files without a `//!` header", problems);
}

#[test]
fn no_test_is_ignored_or_expects_a_panic() {
    // Built with concat! so this file does not match its own needles.
    let needles = [
        (
            concat!("#[", "ignore"),
            "delete the attribute: a test runs every time, or it is deleted; put a slow test \
             behind an environment variable that .ci/run sets",
        ),
        (
            concat!("should", "_panic"),
            "assert on the error instead (a `Result` test, `matches!` on the error value)",
        ),
    ];
    let mut problems = Vec::new();
    for file in files_with_extensions(&["rs"]) {
        for (n, line) in read(&file).lines().enumerate() {
            for (needle, fix) in needles {
                if line.contains(needle) {
                    problems.push(format!("{}:{}: `{needle}`: {fix}", rel(&file), n + 1));
                }
            }
        }
    }
    report("switched-off tests", problems);
}

/// The one file allowed unsafe code: glibc's allocator is tuned through `mallopt`, a C call.
const UNSAFE_FILES: &[&str] = &["crates/echo-core/src/allocator.rs"];

#[test]
fn unsafe_code_stays_in_its_one_file() {
    // The workspace denies `unsafe_code` (it cannot forbid it, or no file could allow it);
    // this keeps the allowance to one reviewed place. Built with concat! so this file does
    // not match its own needle.
    let needle = concat!("allow(", "unsafe_code)");
    let mut problems = Vec::new();
    for file in files_with_extensions(&["rs"]) {
        if UNSAFE_FILES.contains(&rel(&file).as_str()) {
            continue;
        }
        for (n, line) in read(&file).lines().enumerate() {
            if line.contains(needle) {
                problems.push(format!(
                    "{}:{}: `{needle}`: unsafe code lives only in {UNSAFE_FILES:?}; \
                     find a safe way (a maintained crate) or argue for it in review",
                    rel(&file),
                    n + 1
                ));
            }
        }
    }
    report("unsafe code outside its file", problems);
}

#[test]
fn stale_words_stay_where_they_are_still_true() {
    let mut problems = Vec::new();
    for_each_prose_line(|path, n, line| {
        let lower = line.to_lowercase();
        for stale in STALE {
            if !lower.contains(&stale.word.to_lowercase())
                || stale.allowed_in.iter().any(|p| path.starts_with(p))
                || stale.allowed_on_lines_with.iter().any(|w| line.contains(w))
            {
                continue;
            }
            problems.push(format!(
                "{path}:{n}: stale word `{}`: {}. (Where it is still true, add the path to \
                 its `allowed_in` in {ME} with a comment saying why.)",
                stale.word, stale.fix
            ));
        }
    });
    report("stale words", problems);
}

/// Calls `f` with the path, 1-based number and text of every line of every text file but
/// this one (which spells out every word its checks refuse).
fn for_each_prose_line(mut f: impl FnMut(&str, usize, &str)) {
    for file in files_with_extensions(TEXT_EXTENSIONS) {
        let path = rel(&file);
        if path == ME {
            continue;
        }
        for (n, line) in read(&file).lines().enumerate() {
            f(&path, n + 1, line);
        }
    }
}

/// Phrases of the development process, not of the project. The prose (docs, comments,
/// scripts) names a commit and its date instead, which a reader can look up.
const PROCESS_PHRASES: &[&str] = &["this stop", "whose work did not land"];

#[test]
fn prose_names_commits_and_dates_not_stops() {
    let mut problems = Vec::new();
    for_each_prose_line(|path, n, line| {
        let lower = line.to_lowercase();
        let hit = PROCESS_PHRASES.iter().find(|p| has_word(&lower, p));
        let found = hit.map(|p| p.to_string()).or_else(|| stop_number(&lower));
        if let Some(found) = found {
            problems.push(format!(
                "{path}:{n}: `{found}` names a unit of the development process: name the \
                 commit and its date instead (`git log --format='%h %ad %s' --date=short`, \
                 `git log -S'…'`), or drop history that no longer helps a reader"
            ));
        }
    });
    report("development-process words", problems);
}

/// Whether `phrase` occurs in `text` as whole words (no letter, digit or `_` on either side).
fn has_word(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + phrase.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first "stop 36" or "stops 32" of a lowercased line: the word `stop` or `stops`, one
/// space, a number. "Stop" the button, `stop()` and "stopped 3" do not match.
fn stop_number(lower: &str) -> Option<String> {
    lower.match_indices("stop").find_map(|(i, _)| {
        if lower[..i].chars().next_back().is_some_and(is_word_char) {
            return None;
        }
        let rest = &lower[i + "stop".len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let digits = rest.strip_prefix(' ')?;
        let len = digits.chars().take_while(char::is_ascii_digit).count();
        (len > 0).then(|| lower[i..lower.len() - digits.len() + len].to_string())
    })
}

#[test]
fn the_process_word_matchers_match_what_they_should() {
    for line in ["stop 36", "in stop 27's ci", "(stops 32 and 33)"] {
        assert!(stop_number(line).is_some(), "{line:?} should match");
    }
    for line in ["stop()", "stopped 3", "stops at 3", "nonstop 5"] {
        assert_eq!(stop_number(line), None, "{line:?} should not match");
    }
    assert_eq!(stop_number("by stops 32 and 33"), Some("stops 32".into()));
    assert!(has_word("made by this stop's work", "this stop"));
    assert!(!has_word("this stops the turn", "this stop"));
}

/// Every subcommand the `echod` parser knows (crates/echod/src/cli.rs and the enums it
/// dispatches to) has a line in the README's command list, and every line there names one
/// the parser knows.
#[test]
fn every_echod_subcommand_is_in_the_readme() {
    let known = echod_commands();
    let all: BTreeSet<String> = known
        .iter()
        .flat_map(|(top, subs)| {
            if subs.is_empty() {
                vec![top.clone()]
            } else {
                subs.iter().map(|s| format!("{top} {s}")).collect()
            }
        })
        .collect();
    let readme = read(&root().join("README.md"));
    let (block, lines) = readme_command_list(&readme);
    let mut problems = Vec::new();
    let mut listed = BTreeSet::new();
    for (n, line) in lines {
        for command in commands_on_line(line, &known) {
            if !all.contains(&command) {
                problems.push(format!(
                    "README.md:{n}: names `echod {command}`, which crates/echod/src does not \
                     parse: correct the line or remove it"
                ));
            }
            listed.insert(command);
        }
    }
    for command in all.difference(&listed) {
        problems.push(format!(
            "README.md:{block}: `echod {command}` is missing from the command list under \
             \"Using `echod`\": add a line `echod {command} …` with its arguments (from \
             crates/echod/src) and what it does"
        ));
    }
    report("README command list against echod's parser", problems);
}

/// `echod`'s commands from its parser's source: each top-level word with its subcommands
/// (none for a command such as `ask`). clap names a variant in kebab case (`DeleteAll` is
/// `delete-all`) unless `#[command(name = "…")]` says otherwise.
fn echod_commands() -> BTreeMap<String, Vec<String>> {
    let sources: Vec<String> = fs::read_dir(root().join("crates/echod/src"))
        .expect("crates/echod/src")
        .map(|e| read(&e.expect("directory entry").path()))
        .collect();
    let top = subcommand_type(&block(&sources, "struct Cli {"))
        .expect("crates/echod/src: `struct Cli` has no `#[command(subcommand)]` field");
    let mut out = BTreeMap::new();
    for (word, body) in variants(&block(&sources, &format!("enum {top} {{"))) {
        let subs = subcommand_type(&body).map_or_else(Vec::new, |name| {
            variants(&block(&sources, &format!("enum {name} {{")))
                .into_iter()
                .map(|(sub, body)| {
                    assert!(
                        subcommand_type(&body).is_none(),
                        "`echod {word} {sub}` has subcommands of its own: teach \
                         every_echod_subcommand_is_in_the_readme in {ME} a third level"
                    );
                    sub
                })
                .collect()
        });
        out.insert(word, subs);
    }
    out
}

/// The lines inside the `{ … }` block whose opening line ends with `header` (`enum Command {`),
/// in one of `sources`; doc and line comments left out.
fn block<'a>(sources: &'a [String], header: &str) -> Vec<&'a str> {
    for text in sources {
        let mut lines = text.lines();
        if lines.by_ref().any(|l| l.trim_end().ends_with(header)) {
            let mut depth = 1usize;
            let mut out = Vec::new();
            for line in lines.filter(|l| !l.trim_start().starts_with("//")) {
                depth = depth + line.matches('{').count() - line.matches('}').count();
                if depth == 0 {
                    return out;
                }
                out.push(line);
            }
        }
    }
    panic!(
        "crates/echod/src: no `{header}`: point every_echod_subcommand_is_in_the_readme in \
         {ME} at where echod's commands are parsed now"
    );
}

/// An enum block's variants: each one's command word and the lines of its body.
fn variants<'a>(lines: &[&'a str]) -> Vec<(String, Vec<&'a str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    let (mut depth, mut name) = (0usize, None);
    for line in lines {
        let t = line.trim();
        if depth == 0 {
            if let Some(given) = t.strip_prefix("#[command(name = \"") {
                name = given.split('"').next().map(str::to_string);
            } else if t.starts_with(|c: char| c.is_ascii_uppercase()) {
                let ident: String = t.chars().take_while(|c| c.is_alphanumeric()).collect();
                out.push((name.take().unwrap_or_else(|| kebab(&ident)), Vec::new()));
            }
        } else if let Some((_, body)) = out.last_mut() {
            body.push(line);
        }
        depth = depth + line.matches('{').count() - line.matches('}').count();
    }
    out
}

/// The type of the field after `#[command(subcommand)]` (`Box<…>` and paths stripped).
fn subcommand_type(lines: &[&str]) -> Option<String> {
    const ATTRIBUTE: &str = "#[command(subcommand)]";
    let mut after = lines.iter().skip_while(|l| l.trim() != ATTRIBUTE);
    let field = after.find(|l| !l.trim().starts_with("#["))?;
    let ty = field.split_once(':')?.1.trim().trim_end_matches(',');
    let ty = ty.trim_start_matches("Box<").trim_end_matches('>');
    ty.rsplit("::").next().map(str::to_string)
}

/// `DeleteAll` → `delete-all`, as clap names subcommands.
fn kebab(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The line number of the fenced block under "## Using `echod`", and its `echod …` lines with
/// their numbers.
fn readme_command_list(readme: &str) -> (usize, Vec<(usize, &str)>) {
    let mut lines = readme
        .lines()
        .enumerate()
        .skip_while(|(_, l)| *l != "## Using `echod`")
        .skip_while(|(_, l)| !l.starts_with("```"));
    let (fence, _) = lines
        .next()
        .expect("README.md: no fenced command list under \"## Using `echod`\"");
    let listed = lines
        .take_while(|(_, l)| !l.starts_with("```"))
        .filter(|(_, l)| l.starts_with("echod "))
        .map(|(n, l)| (n + 1, l))
        .collect();
    (fence + 1, listed)
}

/// The commands a README line names: `echod ask …` names `ask`; `echod memory edit ID TEXT |
/// pin ID` names `memory edit` and `memory pin`, and `echod automations list|show NAME`
/// `automations list` and `automations show`. A `|` inside an argument (`keep|forget`) does
/// not start a command: only the first word and the words after ` | ` do.
fn commands_on_line(line: &str, known: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let rest = line.trim_start_matches("echod ");
    let top = rest.split_whitespace().next().unwrap_or_default();
    if known.get(top).is_none_or(|subs| subs.is_empty()) {
        return vec![top.to_string()];
    }
    let after = rest[top.len()..].trim_start();
    let first = after.split_whitespace().next().unwrap_or_default();
    let alternatives = after.split(" | ").skip(1);
    let words = first
        .split('|')
        .chain(alternatives.filter_map(|a| a.split_whitespace().next()));
    words
        .filter(|w| w.starts_with(|c: char| c.is_ascii_lowercase()))
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(|w| format!("{top} {w}"))
        .collect()
}

#[test]
fn every_library_crate_denies_missing_docs() {
    let mut problems = Vec::new();
    for (dir, _) in member_manifests() {
        let lib = root().join(&dir).join("src/lib.rs");
        if lib.exists() && !read(&lib).contains("#![deny(missing_docs)]") {
            problems.push(format!(
                "{}:1: add `#![deny(missing_docs)]` after the `//!` header: every public \
                 item of a library says what it is for",
                rel(&lib)
            ));
        }
    }
    report("library crates without deny(missing_docs)", problems);
}

#[test]
fn source_files_stay_under_the_line_limit() {
    let ceilings: BTreeMap<&str, usize> = LONG_FILES.iter().copied().collect();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in files_with_extensions(&["rs", "ts", "tsx"]) {
        let path = rel(&file);
        if !counts_for_size(&path) {
            continue;
        }
        let lines = read(&file).lines().count();
        match ceilings.get(path.as_str()) {
            Some(&ceiling) => {
                seen.insert(path.clone());
                if lines > ceiling {
                    problems.push(format!(
                        "{path}:{lines}: {lines} lines, past its ceiling of {ceiling} in \
                         LONG_FILES: split the file (move a part into its own module) instead \
                         of raising the ceiling"
                    ));
                } else if lines <= MAX_LINES {
                    problems.push(format!(
                        "{path}:1: now {lines} lines, under the limit of {MAX_LINES}: remove \
                         it from LONG_FILES in {ME}"
                    ));
                }
            }
            None if lines > MAX_LINES => problems.push(format!(
                "{path}:{}: {lines} lines, over the limit of {MAX_LINES}: split the file \
                 (move a part into its own module)",
                MAX_LINES + 1
            )),
            None => {}
        }
    }
    for (path, _) in LONG_FILES {
        if !seen.contains(*path) {
            problems.push(format!(
                "{path}: listed in LONG_FILES but not found: remove it from the list"
            ));
        }
    }
    report("files over the line limit", problems);
}

/// Whether a file counts for the size limit: Rust under a `src/` folder and the UI's
/// TypeScript, without tests (`tests.rs`, `tests/`, `*.test.*`) and generated code.
fn counts_for_size(path: &str) -> bool {
    if path.starts_with("ui/src/") {
        return !path.starts_with("ui/src/generated/") && !path.contains(".test.");
    }
    let Some((_, in_src)) = path.split_once("/src/") else {
        return false;
    };
    path.ends_with(".rs")
        && !in_src
            .split('/')
            .any(|part| part == "tests" || part == "tests.rs")
}

#[test]
fn architecture_dependency_table_matches_the_manifests() {
    let architecture = read(&root().join("ARCHITECTURE.md"));
    let table = dependency_table(&architecture);
    let members = workspace_members();
    let mut problems = Vec::new();

    // One-way: a crate only uses crates listed above it, so the graph has no cycle.
    let mut above = BTreeSet::new();
    for (name, uses) in &table {
        for dep in uses {
            if !above.contains(dep) {
                problems.push(format!(
                    "ARCHITECTURE.md: `{name}` uses `{dep}`, which is not listed above it: \
                     order the table so every crate comes after what it uses (a dependency \
                     cycle cannot be ordered; break it)"
                ));
            }
        }
        above.insert(name.clone());
    }

    let listed: BTreeMap<_, _> = table.iter().cloned().collect();
    for (name, actual) in &members {
        match listed.get(name) {
            None => problems.push(format!(
                "ARCHITECTURE.md: crate `{name}` is missing from the dependency table under \
                 \"Dependency direction\": add a line `{name} uses …`"
            )),
            Some(claimed) if claimed != actual => problems.push(format!(
                "ARCHITECTURE.md: the table says `{name}` uses {claimed:?}, its Cargo.toml \
                 [dependencies] say {actual:?}: correct the table (or the dependency)"
            )),
            Some(_) => {}
        }
    }
    for name in listed.keys() {
        if !members.contains_key(name) {
            problems.push(format!(
                "ARCHITECTURE.md: the dependency table lists `{name}`, which is no workspace \
                 member: remove the line"
            ));
        }
    }
    report("dependency table vs Cargo.toml", problems);
}

#[test]
fn engine_crates_use_no_front_end_framework() {
    // The front ends and the test servers may; nothing below `Api` may.
    const FRONT_ENDS: &[&str] = &["echod", "echo-desk"];
    const FRAMEWORKS: &[&str] = &["clap", "axum", "tauri", "utoipa-axum", "tower-http"];
    let mut problems = Vec::new();
    for (dir, manifest) in member_manifests() {
        let name = package_name(&manifest);
        if FRONT_ENDS.contains(&name.as_str()) || !dir.starts_with("crates/") {
            continue;
        }
        for dep in normal_dependencies(&manifest) {
            if FRAMEWORKS
                .iter()
                .any(|f| dep == *f || dep.starts_with("tauri-"))
            {
                problems.push(format!(
                    "{dir}/Cargo.toml: engine crate `{name}` depends on `{dep}`: front-end \
                     frameworks belong in echod or src-tauri; move the code there"
                ));
            }
        }
    }
    report("front-end frameworks in engine crates", problems);
}

#[test]
fn architecture_and_crate_docs_name_files_that_exist() {
    let all: Vec<String> = files_with_extensions(&["rs", "ts", "tsx", "sql"])
        .iter()
        .map(|f| rel(f))
        .collect();
    let mut docs = vec![(
        "ARCHITECTURE.md".to_string(),
        read(&root().join("ARCHITECTURE.md")),
    )];
    for (dir, _) in member_manifests() {
        for root_file in ["src/lib.rs", "src/main.rs"] {
            let path = root().join(&dir).join(root_file);
            if path.exists() {
                let header: String = read(&path)
                    .lines()
                    .take_while(|l| l.starts_with("//!"))
                    .map(|l| format!("{l}\n"))
                    .collect();
                docs.push((format!("{dir}/{root_file}"), header));
            }
        }
    }
    let mut problems = Vec::new();
    for (doc, text) in &docs {
        for (n, line) in text.lines().enumerate() {
            for name in backticked(line) {
                let is_source = [".rs", ".ts", ".tsx"].iter().any(|e| name.ends_with(e));
                if is_source && !name.contains('<') && !all.iter().any(|p| ends_with_path(p, name))
                {
                    problems.push(format!(
                        "{doc}:{}: names `{name}`, which no longer exists: say where that code \
                         lives now",
                        n + 1
                    ));
                }
            }
            for number in migrations_named(line) {
                let name = format!("/migrations/{number}_");
                if !all
                    .iter()
                    .any(|p| p.starts_with("crates/") && p.contains(&name))
                {
                    problems.push(format!(
                        "{doc}:{}: names migration {number}, which does not exist",
                        n + 1
                    ));
                }
            }
        }
    }
    report("docs naming missing files", problems);
}

/// The `name uses a, b` lines of the fenced block after "Dependency direction".
fn dependency_table(architecture: &str) -> Vec<(String, BTreeSet<String>)> {
    let lines = architecture
        .lines()
        .skip_while(|l| !l.contains("Dependency direction"))
        .skip_while(|l| !l.starts_with("```"))
        .skip(1);
    let mut table = Vec::new();
    for line in lines {
        if line.starts_with("```") {
            return table;
        }
        let Some((name, uses)) = line.split_once(" uses ") else {
            panic!("ARCHITECTURE.md: dependency table line `{line}` is not `crate uses a, b`");
        };
        let uses = uses.split('(').next().unwrap_or_default().trim();
        let deps = if uses == "nothing of ours" {
            BTreeSet::new()
        } else {
            uses.split(',').map(|d| d.trim().to_string()).collect()
        };
        table.push((name.trim().to_string(), deps));
    }
    panic!(
        "ARCHITECTURE.md: no fenced dependency table after a line saying \"Dependency direction\""
    );
}

/// Workspace members by package name, each with the members it uses in `[dependencies]`
/// (target-specific ones included; dev- and build-dependencies are not the architecture).
fn workspace_members() -> BTreeMap<String, BTreeSet<String>> {
    let manifests = member_manifests();
    let names: BTreeSet<String> = manifests.iter().map(|(_, m)| package_name(m)).collect();
    manifests
        .iter()
        .map(|(_, m)| {
            let ours = normal_dependencies(m)
                .into_iter()
                .filter(|d| names.contains(d))
                .collect();
            (package_name(m), ours)
        })
        .collect()
}

/// `(member folder, parsed Cargo.toml)` for every workspace member.
fn member_manifests() -> Vec<(String, toml::Table)> {
    let workspace = manifest(&root().join("Cargo.toml"));
    let members = workspace["workspace"]["members"]
        .as_array()
        .expect("workspace.members");
    members
        .iter()
        .map(|m| {
            let dir = m.as_str().expect("member path").to_string();
            let parsed = manifest(&root().join(&dir).join("Cargo.toml"));
            (dir, parsed)
        })
        .collect()
}

fn manifest(path: &Path) -> toml::Table {
    toml::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", rel(path)))
}

fn package_name(manifest: &toml::Table) -> String {
    manifest["package"]["name"]
        .as_str()
        .expect("package.name")
        .to_string()
}

/// Names in `[dependencies]` and `[target.*.dependencies]`, renames resolved to the package.
fn normal_dependencies(manifest: &toml::Table) -> Vec<String> {
    let mut tables = Vec::new();
    if let Some(t) = manifest.get("dependencies").and_then(|d| d.as_table()) {
        tables.push(t);
    }
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            if let Some(t) = target.get("dependencies").and_then(|d| d.as_table()) {
                tables.push(t);
            }
        }
    }
    tables
        .into_iter()
        .flat_map(|t| t.iter())
        .map(|(key, spec)| {
            spec.get("package")
                .and_then(|p| p.as_str())
                .unwrap_or(key)
                .to_string()
        })
        .collect()
}

/// The contents of every `` `…` `` span of a line.
fn backticked(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The four-digit numbers after "migration " in a line.
fn migrations_named(line: &str) -> Vec<&str> {
    line.match_indices("migration ")
        .filter_map(|(i, m)| line.get(i + m.len()..i + m.len() + 4))
        .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

/// Whether `path` is `name` or ends with `/name` (docs name files by their tail).
fn ends_with_path(path: &str, name: &str) -> bool {
    path == name || path.ends_with(&format!("/{name}"))
}

/// Every file under the root with one of `extensions`, outside [`SKIPPED_DIRS`] and hidden
/// folders, in a stable order.
fn files_with_extensions(extensions: &[&str]) -> Vec<PathBuf> {
    let skip = |name: &str| name.starts_with('.') || SKIPPED_DIRS.contains(&name);
    files_under(&root(), &skip, extensions)
}
