//! Tests of the file-system tools (`list_dir`, `search_files`, `write_file`, `edit_file`) and
//! their shared helpers, run through a registry on a temporary directory.

use super::list::LIST_DIR_MAX_ENTRIES;
use super::paths::normalize;
use super::{DETAIL_MAX_CHARS, cut_chars, resolve_path};
use crate::registry::Action;
use crate::test_support::{TestDir, prepare, prepare_then_run, run};
use std::path::{Path, PathBuf};

#[test]
fn resolve_path_cases() {
    let wd = Path::new("/work/project");
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let cases: Vec<(&str, PathBuf)> = vec![
        ("a.txt", "/work/project/a.txt".into()),
        ("./src/../b.txt", "/work/project/b.txt".into()),
        ("", "/work/project".into()),
        (".", "/work/project".into()),
        ("../other/./x", "/work/other/x".into()),
        ("/etc/../etc/hosts", "/etc/hosts".into()),
        ("/../../x", "/x".into()),
        ("~", home.clone()),
        ("~/notes/../todo.md", normalize(&home.join("todo.md"))),
        ("~user/x", "/work/project/~user/x".into()),
    ];
    for (raw, expect) in cases {
        assert_eq!(resolve_path(wd, raw), expect, "{raw:?}");
    }
    assert_eq!(
        resolve_path(Path::new("rel"), "../../x"),
        PathBuf::from("../x")
    );
}

#[test]
fn cut_chars_marks_the_cut() {
    assert_eq!(cut_chars("abc".into(), 3), "abc");
    assert_eq!(
        cut_chars("abcdé".into(), 3),
        "abc\n[… 2 more characters not shown …]"
    );
}

#[tokio::test]
async fn list_dir_lists_entries_with_type_and_size() {
    let d = TestDir::new();
    d.write("b.txt", "hello");
    d.write(".hidden", "");
    d.write("sub/inner.txt", "x");
    std::os::unix::fs::symlink("b.txt", d.path().join("link")).expect("symlink");
    let out = run(d.path(), "list_dir", "{}").await;
    assert!(out.ok, "{}", out.content);
    assert_eq!(
        out.content,
        ".hidden  (0 bytes)\nb.txt  (5 bytes)\nlink -> b.txt  (symlink)\nsub/"
    );
    let out = run(d.path(), "list_dir", r#"{"path":"sub"}"#).await;
    assert_eq!(out.content, "inner.txt  (1 bytes)");
    let empty = d.mkdir("empty");
    let out = run(d.path(), "list_dir", &format!(r#"{{"path":{:?}}}"#, empty)).await;
    assert_eq!(out.content, "(empty directory)");
}

#[tokio::test]
async fn list_dir_failures() {
    let d = TestDir::new();
    d.write("f.txt", "x");
    let out = run(d.path(), "list_dir", r#"{"path":"nope"}"#).await;
    assert_eq!(
        (out.ok, out.content.as_str()),
        (false, "error: no such directory: nope")
    );
    let out = run(d.path(), "list_dir", r#"{"path":"f.txt"}"#).await;
    assert_eq!(
        out.content,
        "error: f.txt is a file, not a directory; use read_file to read it"
    );
    let out = run(d.path(), "list_dir", r#"{"max_depth":0}"#).await;
    assert_eq!(out.error_kind, Some("invalid_arguments"), "{}", out.content);
}

#[tokio::test]
async fn list_dir_recursive_respects_gitignore_and_depth() {
    let d = TestDir::new();
    d.write(".gitignore", "target/\n*.log\n");
    d.write("src/main.rs", "fn main() {}");
    d.write("src/deep/er/x.rs", "");
    d.write("target/debug/big", "x");
    d.write("debug.log", "x");
    d.write(".git/HEAD", "ref");
    let out = run(d.path(), "list_dir", r#"{"recursive":true}"#).await;
    assert_eq!(
        out.content,
        ".gitignore  (14 bytes)\nsrc/\nsrc/deep/\nsrc/deep/er/\nsrc/main.rs  (12 bytes)"
    );
    let out = run(d.path(), "list_dir", r#"{"recursive":true,"max_depth":4}"#).await;
    assert!(
        out.content.contains("src/deep/er/x.rs  (0 bytes)"),
        "{}",
        out.content
    );
    // Not recursive: everything, ignored or not.
    let out = run(d.path(), "list_dir", "{}").await;
    assert!(out.content.contains("debug.log") && out.content.contains(".git/"));
}

#[tokio::test]
async fn list_dir_caps_entries_with_a_marker() {
    let d = TestDir::new();
    for i in 0..LIST_DIR_MAX_ENTRIES + 30 {
        d.write(&format!("dir/f{i:04}"), "");
    }
    for args in [r#"{"path":"dir"}"#, r#"{"recursive":true}"#] {
        let out = run(d.path(), "list_dir", args).await;
        let text = out.full_content.as_deref().unwrap_or(&out.content);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), LIST_DIR_MAX_ENTRIES + 1, "{args}");
        let extra = if args.contains("recursive") { 31 } else { 30 };
        assert_eq!(
            lines.last().copied(),
            Some(
                format!(
                    "[… {extra} more entries not shown; list a subdirectory or lower max_depth]"
                )
                .as_str()
            ),
            "{args}"
        );
    }
}

fn search_tree_fixture() -> TestDir {
    let d = TestDir::new();
    d.write(".gitignore", "ignored/\n*.tmp\n");
    d.write(".ignore", "secret.txt\n");
    d.write("src/a.rs", "fn alpha() {}\nlet needle = 1;\n");
    d.write("src/b.txt", "Needle in text\nnothing\n");
    d.write("ignored/c.rs", "needle hidden by gitignore\n");
    d.write("x.tmp", "needle in tmp\n");
    d.write("secret.txt", "needle in .ignore\n");
    d.write(".hidden/d.rs", "needle in hidden dir\n");
    d.write_bytes("bin.dat", b"needle\0binary");
    d
}

#[tokio::test]
async fn search_files_honours_ignore_files_hidden_and_binary() {
    let d = search_tree_fixture();
    let out = run(d.path(), "search_files", r#"{"pattern":"needle"}"#).await;
    assert!(out.ok, "{}", out.content);
    assert_eq!(
        out.content,
        "src/a.rs:2: let needle = 1;\n[search_files: 1 matching lines in 1 files (3 files searched); 1 binary files skipped]"
    );
    let out = run(
        d.path(),
        "search_files",
        r#"{"pattern":"NEEDLE","case_insensitive":true,"glob":"*.txt"}"#,
    )
    .await;
    assert_eq!(
        out.content,
        "src/b.txt:1: Needle in text\n[search_files: 1 matching lines in 1 files (1 files searched)]"
    );
    let out = run(
        d.path(),
        "search_files",
        r#"{"pattern":"needle","path":"src","glob":"src/**"}"#,
    )
    .await;
    assert!(out.content.starts_with("no matches"), "{}", out.content);
    let out = run(
        d.path(),
        "search_files",
        r#"{"pattern":"fn alpha()","literal":true,"path":"src/a.rs"}"#,
    )
    .await;
    assert!(
        out.content.starts_with("src/a.rs:1: fn alpha() {}"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn search_files_failures() {
    let d = search_tree_fixture();
    let out = run(d.path(), "search_files", r#"{"pattern":"fn ("}"#).await;
    assert_eq!(out.error_kind, Some("invalid_arguments"));
    assert!(
        out.content
            .starts_with("error: invalid arguments: invalid regex \"fn (\"")
            && out.content.contains("unclosed group"),
        "{}",
        out.content
    );
    let out = run(d.path(), "search_files", r#"{"pattern":"x","glob":"a[" }"#).await;
    assert!(
        out.content.contains("invalid glob \"a[\""),
        "{}",
        out.content
    );
    let out = run(d.path(), "search_files", r#"{"pattern":"x","path":"nope"}"#).await;
    assert_eq!(out.content, "error: no such file or directory: nope");
    let out = run(d.path(), "search_files", r#"{"pattern":"zzz"}"#).await;
    assert_eq!(
        out.content,
        "no matches for \"zzz\" in . (3 files searched; 1 binary files skipped)"
    );
}

#[tokio::test]
async fn search_files_caps_matches_with_a_marker() {
    let d = TestDir::new();
    let body: String = (0..50).map(|i| format!("hit {i}\n")).collect();
    d.write("many.txt", &body);
    d.write("long.txt", &format!("hit {}", "y".repeat(1000)));
    let out = run(
        d.path(),
        "search_files",
        r#"{"pattern":"^hit","max_results":20,"path":"many.txt"}"#,
    )
    .await;
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines.len(), 21);
    assert_eq!(lines[19], "many.txt:20: hit 19");
    assert!(lines[20].starts_with("[… stopped after 20 matching lines; there are more"));
    let out = run(
        d.path(),
        "search_files",
        r#"{"pattern":"y+","path":"long.txt"}"#,
    )
    .await;
    assert!(
        out.content
            .starts_with(&format!("long.txt:1: hit {} […]\n", "y".repeat(396))),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn write_file_creates_and_overwrites_with_a_diff() {
    let d = TestDir::new();
    let out = run(
        d.path(),
        "write_file",
        r#"{"path":"new/dir/a.txt","content":"one\ntwo\n"}"#,
    )
    .await;
    assert_eq!(
        (out.ok, out.content.as_str()),
        (true, "created new/dir/a.txt (8 bytes)")
    );
    assert_eq!(d.read("new/dir/a.txt"), "one\ntwo\n");
    let out = run(
        d.path(),
        "write_file",
        r#"{"path":"new/dir/a.txt","content":"one\n2\n"}"#,
    )
    .await;
    assert_eq!(
        out.content,
        "overwrote new/dir/a.txt (6 bytes, was 8 bytes)\n--- a/new/dir/a.txt\n+++ b/new/dir/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    );
    assert_eq!(d.read("new/dir/a.txt"), "one\n2\n");
    let out = run(
        d.path(),
        "write_file",
        r#"{"path":"new/dir/a.txt","content":"one\n2\n"}"#,
    )
    .await;
    assert_eq!(
        out.content,
        "overwrote new/dir/a.txt (6 bytes, was 6 bytes; content unchanged)"
    );
}

#[tokio::test]
async fn write_file_failures() {
    let d = TestDir::new();
    d.mkdir("adir");
    d.write("plain", "x");
    let out = run(d.path(), "write_file", r#"{"path":"adir","content":"x"}"#).await;
    assert_eq!(out.content, "error: adir is a directory, not a file");
    let out = run(
        d.path(),
        "write_file",
        r#"{"path":"plain/sub.txt","content":"x"}"#,
    )
    .await;
    assert!(!out.ok, "{}", out.content);
    let out = run(d.path(), "write_file", r#"{"path":"a"}"#).await;
    assert_eq!(out.error_kind, Some("invalid_arguments"));
}

#[tokio::test]
async fn edit_file_replaces_exactly_one_match() {
    let d = TestDir::new();
    d.write("f.rs", "let a = 1;\nlet b = 2;\nlet a = 1;\n");
    let out = run(
        d.path(),
        "edit_file",
        r#"{"path":"f.rs","old_text":"let b = 2;","new_text":"let b = 3;"}"#,
    )
    .await;
    assert_eq!(
        out.content,
        "edited f.rs: replaced 1 occurrence\n--- a/f.rs\n+++ b/f.rs\n@@ -1,3 +1,3 @@\n let a = 1;\n-let b = 2;\n+let b = 3;\n let a = 1;\n"
    );
    assert_eq!(d.read("f.rs"), "let a = 1;\nlet b = 3;\nlet a = 1;\n");

    let out = run(
        d.path(),
        "edit_file",
        r#"{"path":"f.rs","old_text":"let a = 1;","new_text":"let a = 0;"}"#,
    )
    .await;
    assert_eq!(
        (out.ok, out.error_kind, out.content.as_str()),
        (
            false,
            Some("invalid_arguments"),
            "error: invalid arguments: old_text matched 2 times in f.rs; nothing was changed. Include more surrounding lines so it matches exactly once, or set replace_all to true to replace all 2"
        )
    );
    let out = run(
        d.path(),
        "edit_file",
        r#"{"path":"f.rs","old_text":"let a = 1;","new_text":"let a = 0;","replace_all":true}"#,
    )
    .await;
    assert!(
        out.content
            .starts_with("edited f.rs: replaced 2 occurrences\n--- a/f.rs"),
        "{}",
        out.content
    );
    assert_eq!(d.read("f.rs"), "let a = 0;\nlet b = 3;\nlet a = 0;\n");
}

#[tokio::test]
async fn an_approved_change_is_not_applied_to_a_file_that_changed_meanwhile() {
    let d = TestDir::new();
    d.write("f.txt", "alpha\nbeta\ngamma\n");
    let edit = r#"{"path":"f.txt","old_text":"beta","new_text":"BETA"}"#;
    // Someone edits the file while the question waits: the same edit would now apply
    // a different diff, so it is refused and the file is left as they left it.
    let out = prepare_then_run(d.path(), "edit_file", edit, || {
        d.write("f.txt", "alpha\nbeta\ngamma\ndelta\n");
    })
    .await;
    assert_eq!(
        out.error_kind,
        Some("changed_since_approval"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("nothing was written"),
        "{}",
        out.content
    );
    assert_eq!(d.read("f.txt"), "alpha\nbeta\ngamma\ndelta\n");
    // A whole-file write over a file that appeared meanwhile is refused the same way.
    let write = r#"{"path":"new.txt","content":"mine"}"#;
    let out = prepare_then_run(d.path(), "write_file", write, || {
        d.write("new.txt", "theirs")
    })
    .await;
    assert_eq!(
        out.error_kind,
        Some("changed_since_approval"),
        "{}",
        out.content
    );
    assert_eq!(d.read("new.txt"), "theirs");
    // Untouched in between, the approved change is applied.
    let out = prepare_then_run(d.path(), "edit_file", edit, || {}).await;
    assert!(out.ok, "{}", out.content);
    assert_eq!(d.read("f.txt"), "alpha\nBETA\ngamma\ndelta\n");
}

#[tokio::test]
async fn edit_file_failures() {
    let d = TestDir::new();
    d.write("f.rs", "fn x() {}\n");
    d.write("crlf.txt", "a\r\nb\r\n");
    d.write_bytes("bin", b"\0\x01");
    d.mkdir("adir");
    let cases: &[(&str, &str)] = &[
        (
            r#"{"path":"f.rs","old_text":"fn y","new_text":"fn z"}"#,
            "error: invalid arguments: old_text matched 0 times in f.rs; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation",
        ),
        (
            r#"{"path":"crlf.txt","old_text":"a\nb","new_text":"c"}"#,
            "error: invalid arguments: old_text matched 0 times in crlf.txt; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation (the file has CRLF line endings)",
        ),
        (
            r#"{"path":"missing.rs","old_text":"a","new_text":"b"}"#,
            "error: no such file: missing.rs; use write_file to create a file",
        ),
        (
            r#"{"path":"adir","old_text":"a","new_text":"b"}"#,
            "error: adir is a directory, not a file",
        ),
        (
            r#"{"path":"bin","old_text":"a","new_text":"b"}"#,
            "error: bin is a binary or non-UTF-8 file (2 bytes); edit_file only edits UTF-8 text",
        ),
        (
            r#"{"path":"f.rs","old_text":"","new_text":"b"}"#,
            "error: invalid arguments: old_text is empty; give the exact text to replace (use write_file to create a file)",
        ),
        (
            r#"{"path":"f.rs","old_text":"x","new_text":"x"}"#,
            "error: invalid arguments: old_text and new_text are identical; nothing would change",
        ),
    ];
    for (args, expect) in cases {
        let out = run(d.path(), "edit_file", args).await;
        assert_eq!(out.content, *expect, "{args}");
    }
    assert_eq!(d.read("f.rs"), "fn x() {}\n");
}

#[tokio::test]
async fn actions_describe_the_call_without_changing_anything() {
    let d = TestDir::new();
    d.write("f.txt", "old\n");
    let root = d.path();
    let abs = |p: &str| root.join(p);
    let check = |name: &'static str, args: &'static str, expect: Action| async move {
        let got = prepare(root, name, args).await;
        assert_eq!(got, Ok(expect), "{name} {args}");
    };
    check(
        "read_file",
        r#"{"path":"sub/../f.txt"}"#,
        Action {
            detail: abs("f.txt").display().to_string(),
            reads: vec![abs("f.txt")],
            ..Action::default()
        },
    )
    .await;
    check(
        "list_dir",
        "{}",
        Action {
            detail: root.display().to_string(),
            reads: vec![root.to_path_buf()],
            ..Action::default()
        },
    )
    .await;
    check(
        "search_files",
        r#"{"pattern":"x","path":"/etc/./x"}"#,
        Action {
            detail: "/etc/x".into(),
            reads: vec!["/etc/x".into()],
            ..Action::default()
        },
    )
    .await;
    check(
        "write_file",
        r#"{"path":"f.txt","content":"new\n"}"#,
        Action {
            detail: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
            writes: vec![abs("f.txt")],
            ..Action::default()
        },
    )
    .await;
    check(
        "write_file",
        r#"{"path":"d/g.txt","content":"hi"}"#,
        Action {
            detail:
                "--- /dev/null\n+++ b/d/g.txt\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n"
                    .into(),
            writes: vec![abs("d/g.txt")],
            ..Action::default()
        },
    )
    .await;
    check(
        "edit_file",
        r#"{"path":"f.txt","old_text":"old","new_text":"edited"}"#,
        Action {
            detail: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+edited\n".into(),
            writes: vec![abs("f.txt")],
            ..Action::default()
        },
    )
    .await;
    // Nothing was written or created by preparing.
    assert_eq!(d.read("f.txt"), "old\n");
    assert!(!abs("d").exists());

    assert_eq!(
        prepare(root, "edit_file", r#"{"path":"f.txt","old_text":"nope","new_text":"x"}"#)
            .await,
        Err("error: invalid arguments: old_text matched 0 times in f.txt; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation".into())
    );
    assert_eq!(
        prepare(root, "search_files", r#"{"pattern":"("}"#)
            .await
            .map_err(|e| e.lines().next().unwrap_or_default().to_string()),
        Err("error: invalid arguments: invalid regex \"(\": regex parse error:".into())
    );
    let big = format!(
        r#"{{"path":"f.txt","content":{:?}}}"#,
        "line\n".repeat(10_000)
    );
    let action = prepare(root, "write_file", &big).await;
    let detail = action.map(|a| a.detail).unwrap_or_default();
    assert!(detail.chars().count() < DETAIL_MAX_CHARS + 100);
    assert!(
        detail.ends_with("more characters not shown …]"),
        "{}",
        &detail[detail.len() - 80..]
    );
}
