//! Tidy checks over the whole repository (rust-analyzer's `tidy` idea): every Rust file opens
//! with a `//!` header, no test is switched off, stale words stay out of the prose, source files
//! stay small, and `ARCHITECTURE.md` says what the code does. Each failure names the file and
//! line and says how to fix it. It lives in `echo-core` because that crate builds fastest;
//! it reads the tree with `std::fs` from the workspace root.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

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
            "crates/echo-core/migrations/",
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
        allowed_in: &["crates/echo-core/migrations/"],
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
    for file in files_with_extensions(TEXT_EXTENSIONS) {
        let path = rel(&file);
        // This file spells every stale word out, in `STALE`.
        if path == ME {
            continue;
        }
        for (n, line) in read(&file).lines().enumerate() {
            let lower = line.to_lowercase();
            for stale in STALE {
                if !lower.contains(&stale.word.to_lowercase())
                    || stale.allowed_in.iter().any(|p| path.starts_with(p))
                    || stale.allowed_on_lines_with.iter().any(|w| line.contains(w))
                {
                    continue;
                }
                problems.push(format!(
                    "{path}:{}: stale word `{}`: {}. (Where it is still true, add the path to \
                     its `allowed_in` in {ME} with a comment saying why.)",
                    n + 1,
                    stale.word,
                    stale.fix
                ));
            }
        }
    }
    report("stale words", problems);
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
                let prefix = format!("crates/echo-core/migrations/{number}_");
                if !all.iter().any(|p| p.starts_with(&prefix)) {
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

fn report(what: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} {what}:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// `path` relative to the workspace root, with `/` separators.
fn rel(path: &Path) -> String {
    let path = path.strip_prefix(root()).unwrap_or(path);
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", rel(path)))
}

/// Every file under the root with one of `extensions`, outside [`SKIPPED_DIRS`] and hidden
/// folders, in a stable order.
fn files_with_extensions(extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", rel(&dir)));
        for entry in entries {
            let entry = entry.expect("directory entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push(entry.path());
                }
            } else if kind.is_file()
                && name != "package-lock.json"
                && extensions.iter().any(|e| name.ends_with(&format!(".{e}")))
            {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}
