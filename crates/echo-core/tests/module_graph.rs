//! The import graph inside a crate, file by file: no circle, and the engine's core never
//! reaches up into the facade. A file's imports are the `crate::…` and `super::…` paths in its
//! code (comments and `#[cfg(test)]` modules left out), each resolved to the file that
//! defines the longest prefix of the path; a file's own parent and child modules are its
//! structure, not imports. It lives in `echo-core` beside `tidy.rs` because that crate builds
//! fastest; it reads the tree with `std::fs`.

#[path = "support/tree.rs"]
mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tree::{files_under, read, rel, report, root};

/// The crates whose files must import in one direction.
const ACYCLIC: &[&str] = &["crates/echo-agent/src"];

/// Modules that must not import from the modules listed with them: the turn service, the
/// engine and the pipeline sit under `Api` and the front-end-facing modules. (`wire` sits
/// under everything: see [`LEAVES`].)
const NEVER_UP: &[(&str, &[&str], &[&str])] = &[(
    "crates/echo-agent/src",
    &[
        "engine",
        "pipeline",
        "turn",
        "approval",
        "automations",
        "replay",
    ],
    &["api", "operations", "openapi"],
)];

/// Modules that import nothing else of their crate: `echo-agent`'s wire types are built from
/// the domain crates' types alone, so every module may use them and they never reach back.
const LEAVES: &[(&str, &str)] = &[("crates/echo-agent/src", "wire")];

/// A module path: `["pipeline", "context"]` for `src/pipeline/context.rs`.
type ModPath = Vec<String>;

#[test]
fn files_of_a_crate_import_in_one_direction() {
    let mut problems = Vec::new();
    for src in ACYCLIC {
        let graph = Graph::read(&root().join(src));
        for circle in graph.circles() {
            let graph = &graph;
            let ties: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph.edges[from]
                        .iter()
                        .filter(|to| circle.contains(*to))
                        .map(move |to| format!("    {} -> {}", graph.file(from), graph.file(to)))
                })
                .collect();
            problems.push(format!(
                "{src}: {} files import each other in a circle; move what both need into a \
                 module below them (or pass it in):\n{}",
                circle.len(),
                ties.join("\n")
            ));
        }
    }
    report("import circles", problems);
}

#[test]
fn the_engine_never_imports_the_facade() {
    let mut problems = Vec::new();
    for (src, lower, upper) in NEVER_UP {
        let graph = Graph::read(&root().join(src));
        for (from, targets) in &graph.edges {
            if !lower.iter().any(|m| from.first().is_some_and(|f| f == m)) {
                continue;
            }
            for to in targets {
                if upper.iter().any(|m| to.first().is_some_and(|f| f == m)) {
                    problems.push(format!(
                        "{src}: {} imports {}, a module above it: pass what it needs down, or \
                         move the item into the lower module",
                        graph.file(from),
                        graph.file(to)
                    ));
                }
            }
        }
    }
    report("imports from the engine up into the facade", problems);
}

#[test]
fn leaf_modules_import_nothing_of_their_crate() {
    let mut problems = Vec::new();
    for (src, leaf) in LEAVES {
        let graph = Graph::read(&root().join(src));
        let inside = |m: &ModPath| m.first().is_some_and(|f| f == leaf);
        for (from, targets) in &graph.edges {
            for to in targets.iter().filter(|to| inside(from) && !inside(to)) {
                problems.push(format!(
                    "{src}: {} imports {}: the `{leaf}` module is a leaf, build its types from \
                     other crates' types only",
                    graph.file(from),
                    graph.file(to)
                ));
            }
        }
    }
    report("imports out of a leaf module", problems);
}

#[test]
fn the_reader_finds_the_imports_it_should() {
    let code = "use crate::a::b::{C, d::E};\nuse super::{x, y::Z};\n// crate::ignored\n\
                fn f() { crate::g::h(); other_crate::nope(); }\n#[cfg(test)]\nmod tests { use crate::t; }";
    let found = references(code);
    let want = [
        vec!["crate", "a", "b", "C"],
        vec!["crate", "a", "b", "d", "E"],
        vec!["super", "x"],
        vec!["super", "y", "Z"],
        vec!["crate", "g", "h"],
    ];
    let want: Vec<Vec<String>> = want
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(found, want);
}

/// Files as module paths, and which files each imports.
struct Graph {
    files: BTreeMap<ModPath, PathBuf>,
    edges: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

impl Graph {
    fn read(src: &Path) -> Graph {
        let mut files = BTreeMap::new();
        for path in files_under(src, &|_| false, &["rs"]) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // Test modules and test helpers are not part of the crate's structure.
            if name == "tests.rs" || name == "test_support.rs" {
                continue;
            }
            files.insert(module_path(src, &path), path);
        }
        let mut edges = BTreeMap::new();
        for (me, path) in &files {
            let mut targets = BTreeSet::new();
            for reference in references(&read(path)) {
                let Some(absolute) = absolute(me, &reference) else {
                    continue;
                };
                let Some(target) = (1..=absolute.len())
                    .rev()
                    .map(|n| absolute[..n].to_vec())
                    .find(|prefix| files.contains_key(prefix))
                else {
                    continue;
                };
                if !nested(me, &target) {
                    targets.insert(target);
                }
            }
            edges.insert(me.clone(), targets);
        }
        Graph { files, edges }
    }

    fn file(&self, module: &ModPath) -> String {
        rel(&self.files[module])
    }

    /// The groups of two or more files that reach each other (Tarjan's strongly connected
    /// components).
    fn circles(&self) -> Vec<BTreeSet<ModPath>> {
        struct State<'a> {
            graph: &'a Graph,
            index: BTreeMap<&'a ModPath, usize>,
            low: BTreeMap<&'a ModPath, usize>,
            stack: Vec<&'a ModPath>,
            on_stack: BTreeSet<&'a ModPath>,
            out: Vec<BTreeSet<ModPath>>,
        }
        fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
            let n = s.index.len();
            s.index.insert(v, n);
            s.low.insert(v, n);
            s.stack.push(v);
            s.on_stack.insert(v);
            for w in &s.graph.edges[v] {
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
            if s.low[v] == s.index[v] {
                let mut group = BTreeSet::new();
                while let Some(w) = s.stack.pop() {
                    s.on_stack.remove(w);
                    group.insert(w.clone());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    s.out.push(group);
                }
            }
        }
        let mut state = State {
            graph: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            out: Vec::new(),
        };
        for v in self.edges.keys() {
            if !state.index.contains_key(v) {
                visit(&mut state, v);
            }
        }
        state.out
    }
}

/// Whether one module contains the other (`a` and `a::b`): a module and its submodules are
/// one unit's structure, and the crate root contains everything.
fn nested(a: &ModPath, b: &ModPath) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// `src/a/b.rs` → `[a, b]`; `lib.rs` and `mod.rs` name their folder.
fn module_path(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let mut parts: ModPath = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "lib" && stem != "mod" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// `reference` (starting `crate` or `super`) as a path from the crate root.
fn absolute(me: &ModPath, reference: &[String]) -> Option<ModPath> {
    let mut base: ModPath = Vec::new();
    let mut rest = reference;
    if rest.first().is_some_and(|s| s == "crate") {
        rest = &rest[1..];
    } else {
        base = me.clone();
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Every `crate::…` and `super::…` path in `code`, with `{…}` groups expanded, outside
/// comments and before the first `#[cfg(test)]`.
fn references(code: &str) -> Vec<Vec<String>> {
    let code: String = code
        .lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':';
        if starts_word
            && let Some(head) = ["crate::", "super::"]
                .into_iter()
                .find(|head| chars[i..].starts_with(&head.chars().collect::<Vec<_>>()))
        {
            let prefix = vec![head.trim_end_matches("::").to_string()];
            i = path_at(&chars, i + head.len(), prefix, &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads the rest of a path from `i` (after a `::`) onto `prefix`, pushing each whole path;
/// returns where it stopped.
fn path_at(
    chars: &[char],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        if chars.get(i) == Some(&'{') {
            i += 1;
            loop {
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match chars.get(i) {
                    None => return i,
                    Some('}') => return i + 1,
                    _ => {}
                }
                let before = i;
                i = path_at(chars, i, prefix.clone(), out);
                // `self`, `*` or an `as` rename: skip to the next item.
                while chars.get(i).is_some_and(|c| *c != ',' && *c != '}') {
                    i += 1;
                }
                if i == before {
                    i += 1;
                }
            }
        }
        let start = i;
        while chars.get(i).is_some_and(|c| is_ident(*c)) {
            i += 1;
        }
        if i == start {
            if prefix.len() > 1 {
                out.push(prefix);
            }
            return i;
        }
        let segment: String = chars[start..i].iter().collect();
        if segment != "self" {
            prefix.push(segment);
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            out.push(prefix);
            return i;
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}
