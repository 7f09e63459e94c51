//! No function of the product's code grows past [`MAX_LINES`] lines: a longer one is split
//! along its steps. The functions over it today are listed with their length as a ceiling
//! that may shrink, never grow; a function leaves the list once it is short enough. Some
//! parts are held shorter still ([`SHORT_PARTS`]: ContextStage, the CLI). Tests
//! (`tests/` folders, `#[cfg(test)]` modules, `tests.rs` files) are not counted. It lives in
//! `echo-core` beside `tidy.rs` because that crate builds fastest; it reads the tree with
//! `std::fs`.

#[path = "support/tree.rs"]
mod tree;

use std::collections::BTreeMap;
use std::path::PathBuf;
use tree::{files_under, read, rel, report};

/// The most lines a function may span, from its `fn` line to its closing brace.
const MAX_LINES: usize = 120;

/// Functions over [`MAX_LINES`] today, as `path::name` with their length: a ceiling each.
const LONG_FUNCTIONS: &[(&str, usize)] = &[
    ("crates/echo-agent/src/engine.rs::build", 207),
    (
        "crates/echo-automations/src/store/runs.rs::queue_or_skip",
        127,
    ),
    ("crates/echo-automations/src/watch.rs::run", 135),
    ("crates/echo-local/src/worker.rs::run", 148),
    ("crates/echo-memory/src/write.rs::prepare", 136),
    ("crates/echo-tools/src/web.rs::fetch", 126),
];

/// The folders whose Rust files are the product's code.
const ROOTS: &[&str] = &["crates", "src-tauri/src", "tests/mock-model/src"];

#[test]
fn functions_stay_under_the_line_limit() {
    let allowed: BTreeMap<&str, usize> = LONG_FUNCTIONS.iter().copied().collect();
    let mut seen = Vec::new();
    let mut problems = Vec::new();
    for path in product_files() {
        for (name, line, lines) in functions(&read(&path)) {
            if lines <= MAX_LINES {
                continue;
            }
            let key = format!("{}::{name}", rel(&path));
            seen.push(key.clone());
            match allowed.get(key.as_str()) {
                Some(&ceiling) if lines <= ceiling => {}
                Some(&ceiling) => problems.push(format!(
                    "{}:{line}: `{name}` grew to {lines} lines (its ceiling is {ceiling}): split \
                     it along its steps",
                    rel(&path)
                )),
                None => problems.push(format!(
                    "{}:{line}: `{name}` is {lines} lines (the limit is {MAX_LINES}): split it \
                     along its steps",
                    rel(&path)
                )),
            }
        }
    }
    for (key, _) in LONG_FUNCTIONS {
        if !seen.iter().any(|s| s == key) {
            problems.push(format!(
                "{key} is no longer over {MAX_LINES} lines (or is gone): take it off \
                 LONG_FUNCTIONS in crates/echo-core/tests/function_length.rs"
            ));
        }
    }
    report("functions over the limit", problems);
}

/// Parts of the code held to a shorter limit than [`MAX_LINES`]: the files (a path, or a
/// folder ending in `/`), files among them left out, the limit, and why.
const SHORT_PARTS: &[(&[&str], &[&str], usize, &str)] = &[
    (
        &[
            "crates/echo-agent/src/pipeline/context.rs",
            "crates/echo-agent/src/pipeline/context/",
        ],
        &[],
        80,
        "ContextStage's preparation reads as route, gather, build and compress steps",
    ),
    (
        &["crates/echod/src/"],
        // The development benchmarks, which the installed binary does not carry.
        &["crates/echod/src/bench"],
        60,
        "the CLI only parses, sends a request through `Api::call` and prints",
    ),
];

#[test]
fn some_parts_stay_shorter_still() {
    let mut problems = Vec::new();
    for path in product_files() {
        let at = rel(&path);
        for (files, skip, limit, why) in SHORT_PARTS {
            if !files.iter().any(|f| at.starts_with(f)) || skip.iter().any(|s| at.starts_with(s)) {
                continue;
            }
            for (name, line, lines) in functions(&read(&path)) {
                if lines > *limit {
                    problems.push(format!(
                        "{at}:{line}: `{name}` is {lines} lines, more than {limit} ({why}): \
                         split it along its steps"
                    ));
                }
            }
        }
    }
    report("functions over their part's limit", problems);
}

#[test]
fn the_reader_measures_functions_as_written() {
    let code = r##"
fn short() {
    let s = "a } brace in a string";
    let c = '}';
    let r = r#"another } one"#;
    // a } in a comment
}

trait T {
    fn declared(&self);
    fn provided(&self) -> usize { 1 }
}

pub(crate) async fn longer<'a>(x: &'a str) -> &'a str {
    /* { */
    x
}

#[cfg(test)]
mod tests {
    fn not_counted() {}
}
"##;
    let found: Vec<(String, usize, usize)> = functions(code);
    assert_eq!(
        found,
        [
            ("short".to_string(), 2, 6),
            ("provided".to_string(), 11, 1),
            ("longer".to_string(), 14, 4)
        ]
    );
}

/// Each function with a body in `code`, before its first `#[cfg(test)]`: its name, the line
/// of its `fn` (1-based) and how many lines it spans.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let code: String = code
        .lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .collect::<Vec<_>>()
        .join("\n");
    let clean: Vec<char> = blank_literals(&code);
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = find_word(&clean, i, "fn") {
        i = at + 2;
        let name: String = clean[i..]
            .iter()
            .skip_while(|c| c.is_whitespace())
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` outside the signature's brackets; a `;` first means
        // a declaration without a body.
        let mut depth = 0i32;
        let mut j = i;
        let open = loop {
            match clean.get(j) {
                None => break None,
                Some('(' | '[' | '<') => depth += 1,
                Some(')' | ']') => depth -= 1,
                Some('>') if clean.get(j.wrapping_sub(1)) != Some(&'-') => depth -= 1,
                Some(';') if depth <= 0 => break None,
                Some('{') if depth <= 0 => break Some(j),
                _ => {}
            }
            j += 1;
        };
        let Some(open) = open else { continue };
        let mut level = 0;
        let mut close = open;
        for (k, c) in clean.iter().enumerate().skip(open) {
            match c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        close = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let line_of = |pos: usize| clean[..pos].iter().filter(|c| **c == '\n').count() + 1;
        out.push((name, line_of(at), line_of(close) - line_of(at) + 1));
        // Functions inside this one are measured too (closures are not functions).
        i = open + 1;
    }
    out
}

/// The position of `word` at or after `from`, standing alone.
fn find_word(chars: &[char], from: usize, word: &str) -> Option<usize> {
    let word: Vec<char> = word.chars().collect();
    let ident = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    (from..chars.len().saturating_sub(word.len() - 1)).find(|&i| {
        chars[i..].starts_with(&word)
            && !ident(i.checked_sub(1).and_then(|p| chars.get(p)))
            && !ident(chars.get(i + word.len()))
    })
}

/// `code` with the insides of comments, strings and character literals replaced by spaces
/// (newlines kept), so that braces and words are code.
fn blank_literals(code: &str) -> Vec<char> {
    let c: Vec<char> = code.chars().collect();
    let mut out = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let rest = &c[i..];
        if rest.starts_with(&['/', '/']) {
            let end = (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(&['/', '*']) {
            let end = (i + 2..c.len())
                .find(|&k| c[k..].starts_with(&['*', '/']))
                .map_or(c.len(), |k| k + 2);
            blank(&mut out, i, end);
            i = end;
        } else if c[i] == 'r'
            && matches!(c.get(i + 1), Some('#' | '"'))
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            let hashes = c[i + 1..].iter().take_while(|ch| **ch == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                i += 1;
                continue;
            }
            let mut closing = vec!['"'];
            closing.extend(std::iter::repeat_n('#', hashes));
            let start = i + 2 + hashes;
            let end = (start..c.len())
                .find(|&k| c[k..].starts_with(&closing))
                .map_or(c.len(), |k| k + closing.len());
            blank(&mut out, i, end);
            i = end;
        } else if c[i] == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i, k + 1);
            i = k + 1;
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a), left alone.
            let end = if c.get(i + 1) == Some(&'\\') {
                (i + 2..c.len()).find(|&k| c[k] == '\'').map(|k| k + 1)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The product's Rust files: under [`ROOTS`], outside `tests/` folders, build output and
/// `tests.rs` modules.
fn product_files() -> Vec<PathBuf> {
    let skip = |name: &str| ["tests", "target", "benches", "fuzz", "gen"].contains(&name);
    ROOTS
        .iter()
        .flat_map(|root| files_under(&tree::root().join(root), &skip, &["rs"]))
        .filter(|path| !path.ends_with("tests.rs"))
        .collect()
}
