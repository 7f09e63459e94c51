//! Tests of the skill store and the skill tools, on a temporary skills folder.

use super::disk::list_files;
use super::{SKILL_FILE, SkillError, SkillStore, skill_tools};
use crate::registry::{Action, Risk, ToolContext};
use crate::{ToolOutcome, ToolRegistry};
use echo_core::ToolCall;
use proptest::strategy::Strategy;
use serde_json::json;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const GOOD: &str = "---\nname: deploy\ndescription: Ship the app\nowner: ops # kept\n---\n\n# Deploy\n\n1. Build.\n2. Ship.\n";

fn store() -> (tempfile::TempDir, SkillStore) {
    let home = tempfile::tempdir().expect("tempdir");
    let store = SkillStore::new(home.path().join("skills"));
    (home, store)
}

fn put(store: &SkillStore, folder: &str, skill_md: Option<&str>) {
    let dir = store.dir().join(folder);
    fs::create_dir_all(&dir).expect("mkdir");
    if let Some(text) = skill_md {
        fs::write(dir.join(SKILL_FILE), text).expect("write");
    }
}

fn read(store: &SkillStore, name: &str) -> String {
    fs::read_to_string(store.dir().join(name).join(SKILL_FILE)).expect("read SKILL.md")
}

/// Every entry under the skills folder, for "nothing changed" checks.
fn snapshot(store: &SkillStore) -> Vec<(String, String)> {
    let mut all = Vec::new();
    if let Ok(entries) = fs::read_dir(store.dir()) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            for file in list_files(&entry.path()).expect("list") {
                let text = fs::read_to_string(entry.path().join(&file)).unwrap_or_default();
                all.push((format!("{name}/{file}"), text));
            }
        }
    }
    all.sort();
    all
}

#[test]
fn create_list_view_edit_delete_round_trip() {
    let (_home, store) = store();
    assert_eq!(store.list(), vec![]);
    let made = store
        .create("zeta", "Last one", "Do Z.")
        .expect("create zeta");
    assert_eq!(made.path, store.dir().join("zeta/SKILL.md"));
    store
        .create(
            "alpha-2",
            "Use when: \"quoted\" # not a comment",
            "\n\n# Alpha\nStep one.",
        )
        .expect("create alpha");
    assert_eq!(
        read(&store, "zeta"),
        "---\nname: zeta\ndescription: Last one\n---\n\nDo Z.\n"
    );

    let listed: Vec<(String, String)> = store
        .list()
        .into_iter()
        .map(|s| (s.name, s.description))
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                "alpha-2".to_string(),
                "Use when: \"quoted\" # not a comment".to_string()
            ),
            ("zeta".to_string(), "Last one".to_string()),
        ]
    );

    fs::create_dir_all(store.dir().join("alpha-2/scripts")).expect("mkdir");
    fs::write(store.dir().join("alpha-2/scripts/run.sh"), "echo hi").expect("write");
    fs::write(store.dir().join("alpha-2/notes.txt"), "n").expect("write");
    let alpha = store.view("alpha-2").expect("view");
    assert_eq!(alpha.name, "alpha-2");
    assert_eq!(alpha.description, "Use when: \"quoted\" # not a comment");
    assert_eq!(alpha.body, "# Alpha\nStep one.\n");
    assert_eq!(alpha.files, vec!["notes.txt", "scripts/run.sh"]);
    assert_eq!(alpha.path, store.dir().join("alpha-2/SKILL.md"));

    // A body-only edit keeps the front matter byte for byte, comments and unknown keys too.
    put(&store, "deploy", Some(GOOD));
    store
        .edit("deploy", None, Some("# Deploy\n\nUse the script."))
        .expect("edit body");
    assert_eq!(
        read(&store, "deploy"),
        "---\nname: deploy\ndescription: Ship the app\nowner: ops # kept\n---\n\n# Deploy\n\nUse the script.\n"
    );
    // A description edit keeps the other keys (in order) and the body.
    let edited = store
        .edit("deploy", Some("Ship the app to production"), None)
        .expect("edit description");
    assert_eq!(edited.description, "Ship the app to production");
    assert_eq!(
        read(&store, "deploy"),
        "---\nname: deploy\ndescription: Ship the app to production\nowner: ops\n---\n\n# Deploy\n\nUse the script.\n"
    );
    let err = store
        .edit("deploy", Some("Ship the app to production"), None)
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert_eq!(
        err,
        Err("the edit would not change skill \"deploy\": the description and body are already as given".into())
    );

    // Writes go through a temporary file that does not stay behind.
    assert_eq!(
        list_files(&store.dir().join("deploy")).expect("list"),
        vec!["SKILL.md"]
    );

    let removed = store.delete("alpha-2").expect("delete");
    assert_eq!(removed, vec!["SKILL.md", "notes.txt", "scripts/run.sh"]);
    assert!(!store.dir().join("alpha-2").exists());
    let names: Vec<String> = store.list().into_iter().map(|s| s.name).collect();
    assert_eq!(names, vec!["deploy", "zeta"]);
    assert_eq!(
        fs::read_dir(store.dir()).expect("read").count(),
        2,
        "no leftovers of the deletion"
    );
}

#[test]
fn broken_skill_folders_are_skipped_and_reported() {
    let (_home, store) = store();
    put(&store, "deploy", Some(GOOD));
    // (folder, SKILL.md, reported file, problem)
    let cases: &[(&str, Option<&str>, &str, &str)] = &[
        (
            "no-file",
            None,
            "no-file/SKILL.md",
            "the skill folder has no SKILL.md",
        ),
        (
            "no-front",
            Some("# Just markdown\n"),
            "no-front/SKILL.md",
            "it has no front matter",
        ),
        (
            "unclosed",
            Some("---\nname: unclosed\ndescription: x\n# body\n"),
            "unclosed/SKILL.md",
            "its front matter is not closed",
        ),
        (
            "bad-yaml",
            Some("---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n"),
            "bad-yaml/SKILL.md",
            "its front matter is not valid YAML",
        ),
        (
            "a-list",
            Some("---\n- name\n- description\n---\nbody\n"),
            "a-list/SKILL.md",
            "its front matter is not a YAML mapping",
        ),
        (
            "no-desc",
            Some("---\nname: no-desc\n---\nbody\n"),
            "no-desc/SKILL.md",
            "its front matter has no `description`",
        ),
        (
            "number-name",
            Some("---\nname: 12\ndescription: x\n---\nbody\n"),
            "number-name/SKILL.md",
            "its front matter `name` is not a string",
        ),
        (
            "mismatch",
            Some("---\nname: other\ndescription: x\n---\nbody\n"),
            "mismatch/SKILL.md",
            "the front matter name \"other\" does not match the folder name \"mismatch\"",
        ),
        (
            "Upper",
            Some("---\nname: Upper\ndescription: x\n---\nbody\n"),
            "Upper",
            "the folder name is not a valid skill name",
        ),
    ];
    for (folder, text, _, _) in cases {
        put(&store, folder, *text);
    }
    fs::write(store.dir().join("README.md"), "not a skill").expect("write");
    put(&store, ".hidden", None);

    let names: Vec<String> = store.list().into_iter().map(|s| s.name).collect();
    assert_eq!(names, vec!["deploy"]);
    let problems = store.problems();
    for (_, _, file, problem) in cases {
        let found = problems
            .iter()
            .find(|p| p.path == store.dir().join(file))
            .unwrap_or_else(|| panic!("no problem reported for {file}: {problems:?}"));
        assert!(
            found.problem.starts_with(problem),
            "{file}: {}",
            found.problem
        );
    }
    assert_eq!(problems.len(), cases.len(), "{problems:?}");

    let err = store
        .view("mismatch")
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert_eq!(
        err,
        Err(format!(
            "skill \"mismatch\" is broken: {}: the front matter name \"other\" does not match the folder name \"mismatch\"",
            store.dir().join("mismatch/SKILL.md").display()
        ))
    );
    assert!(matches!(
        store.edit("bad-yaml", Some("fixed"), None),
        Err(SkillError::Broken { .. })
    ));
    // A broken skill can still be deleted.
    assert_eq!(store.delete("bad-yaml").expect("delete"), vec!["SKILL.md"]);
}

#[test]
fn bad_names_are_rejected_everywhere() {
    let (_home, store) = store();
    put(
        &store,
        "ok",
        Some("---\nname: ok\ndescription: x\n---\nbody\n"),
    );
    let long = "a".repeat(65);
    let cases: &[(&str, &str)] = &[
        ("../x", "it contains other characters"),
        ("..", "it contains other characters"),
        ("a/b", "it contains other characters"),
        ("A", "it contains other characters"),
        ("a b", "it contains other characters"),
        ("é", "it contains other characters"),
        ("", "it is empty"),
        (&long, "it is longer than 64 characters"),
    ];
    for (name, reason) in cases {
        let expect = format!(
            "invalid skill name {name:?}: {reason}; use 1-64 lowercase letters a-z, digits and '-'"
        );
        let results = [
            store.create(name, "d", "b").map(|_| ()),
            store.view(name).map(|_| ()),
            store.edit(name, Some("d"), None).map(|_| ()),
            store.delete(name).map(|_| ()),
        ];
        for result in results {
            assert_eq!(result.map_err(|e| e.to_string()), Err(expect.clone()));
        }
    }
    assert!(!store.dir().parent().expect("home").join("x").exists());
    assert_eq!(store.list().len(), 1);
    store
        .create(&"a".repeat(64), "d", "b")
        .expect("64 characters are fine");
    store.create("0-9-a", "d", "b").expect("digits and dashes");
}

#[test]
fn existing_and_missing_skills_are_errors() {
    let (_home, store) = store();
    let err = |r: Result<(), SkillError>| r.map_err(|e| e.to_string());
    assert_eq!(
        err(store.view("nope").map(|_| ())),
        Err("no skill named \"nope\"; there are no skills yet".into())
    );
    store.create("one", "First", "Do one.").expect("create");
    store.create("two", "Second", "Do two.").expect("create");
    assert_eq!(
        err(store.create("one", "Again", "Do it again.").map(|_| ())),
        Err(format!(
            "a skill named \"one\" already exists at {}",
            store.dir().join("one").display()
        ))
    );
    assert_eq!(
        read(&store, "one"),
        "---\nname: one\ndescription: First\n---\n\nDo one.\n"
    );
    assert_eq!(
        err(store.edit("three", Some("x"), None).map(|_| ())),
        Err("no skill named \"three\"; available skills: one, two".into())
    );
    assert_eq!(
        err(store.delete("three").map(|_| ())),
        Err("no skill named \"three\"; available skills: one, two".into())
    );
    let invalid: &[(Result<(), SkillError>, &str)] = &[
        (
            store.create("x", " ", "b").map(|_| ()),
            "the description is empty",
        ),
        (
            store.create("x", "two\nlines", "b").map(|_| ()),
            "the description must be one line",
        ),
        (
            store.create("x", &"d".repeat(1025), "b").map(|_| ()),
            "the description is longer than 1024 characters",
        ),
        (
            store.create("x", "d", "\n").map(|_| ()),
            "the body (the skill's instructions) is empty",
        ),
        (
            store.edit("one", None, None).map(|_| ()),
            "nothing to change: give a new description, a new body or both",
        ),
    ];
    for (result, expect) in invalid {
        assert_eq!(
            result.as_ref().map_err(ToString::to_string),
            Err(expect.to_string())
        );
    }
    assert!(!store.dir().join("x").exists());
}

fn ctx() -> ToolContext {
    ToolContext {
        workdir: PathBuf::from("."),
        cancel: CancellationToken::new(),
        session_id: "s".into(),
        turn_id: "t".into(),
        temporary: false,
        project_id: None,
    }
}

fn registry(store: &Arc<SkillStore>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    for tool in skill_tools(store.clone()) {
        registry.register(tool).expect("register");
    }
    registry
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

async fn run(registry: &ToolRegistry, name: &str, args: serde_json::Value) -> ToolOutcome {
    registry
        .execute(&call(name, args), &ctx(), Duration::from_secs(10))
        .await
}

#[tokio::test]
async fn tools_through_the_registry() {
    let (_home, store) = store();
    let store = Arc::new(store);
    let registry = registry(&store);
    assert_eq!(
        registry.names(),
        vec!["skill_manage", "skill_view", "skills_list"]
    );
    assert_eq!(registry.risk("skills_list"), Some(Risk::ReadOnly));
    assert_eq!(registry.risk("skill_view"), Some(Risk::ReadOnly));
    assert_eq!(registry.risk("skill_manage"), Some(Risk::Dangerous));
    let dir = store.dir().display().to_string();

    // (tool, arguments, ok, expected start of the result)
    let steps: Vec<(&str, serde_json::Value, bool, String)> = vec![
        (
            "skills_list",
            json!({}),
            true,
            format!(
                "There are no skills yet. Skills live in {dir}/<name>/SKILL.md; skill_manage creates them."
            ),
        ),
        (
            "skill_manage",
            json!({"op": "create", "name": "weekly-report", "description": "Write the weekly report", "body": "1. Collect.\n2. Write."}),
            true,
            format!("Created skill weekly-report at {dir}/weekly-report/SKILL.md."),
        ),
        (
            "skill_manage",
            json!({"op": "create", "name": "weekly-report", "description": "d", "body": "b"}),
            false,
            format!("error: a skill named \"weekly-report\" already exists at {dir}/weekly-report"),
        ),
        (
            "skill_manage",
            json!({"op": "create", "name": "x", "description": "d"}),
            false,
            "error: invalid arguments: create needs both `description` and `body`".into(),
        ),
        (
            "skill_manage",
            json!({"op": "create", "name": "../x", "description": "d", "body": "b"}),
            false,
            "error: invalid arguments: invalid skill name \"../x\"".into(),
        ),
        (
            "skill_manage",
            json!({"op": "rename", "name": "weekly-report"}),
            false,
            "error: invalid arguments for skill_manage: /op:".into(),
        ),
        (
            "skill_manage",
            json!({"op": "edit", "name": "weekly-report", "colour": "red"}),
            false,
            "error: invalid arguments for skill_manage".into(),
        ),
        (
            "skill_manage",
            json!({"op": "edit", "name": "weekly-report"}),
            false,
            "error: invalid arguments: edit needs a new `description`, a new `body` or both".into(),
        ),
        (
            "skill_manage",
            json!({"op": "edit", "name": "monthly", "body": "b"}),
            false,
            "error: no skill named \"monthly\"; available skills: weekly-report".into(),
        ),
        (
            "skill_manage",
            json!({"op": "edit", "name": "weekly-report", "body": "1. Collect.\n2. Write.\n3. Send."}),
            true,
            format!(
                "Updated the instructions of skill weekly-report ({dir}/weekly-report/SKILL.md)."
            ),
        ),
        (
            "skills_list",
            json!({}),
            true,
            "weekly-report — Write the weekly report".into(),
        ),
        (
            "skill_view",
            json!({"name": "weekly-report"}),
            true,
            format!(
                "# Skill: weekly-report\nDescription: Write the weekly report\nFile: {dir}/weekly-report/SKILL.md\n\n1. Collect.\n2. Write.\n3. Send.\n\nOther files: none."
            ),
        ),
        (
            "skill_view",
            json!({"name": "monthly"}),
            false,
            "error: no skill named \"monthly\"; available skills: weekly-report".into(),
        ),
        (
            "skill_view",
            json!({}),
            false,
            "error: invalid arguments for skill_view: \"name\" is a required property".into(),
        ),
        (
            "skill_manage",
            json!({"op": "delete", "name": "weekly-report", "body": "b"}),
            false,
            "error: invalid arguments: delete takes only `name`".into(),
        ),
        (
            "skill_manage",
            json!({"op": "delete", "name": "weekly-report"}),
            true,
            "Deleted skill weekly-report and its folder (1 file(s)).".into(),
        ),
        (
            "skill_manage",
            json!({"op": "delete", "name": "weekly-report"}),
            false,
            "error: no skill named \"weekly-report\"; there are no skills yet".into(),
        ),
    ];
    for (tool, args, ok, expect) in steps {
        let out = run(&registry, tool, args.clone()).await;
        assert_eq!(out.ok, ok, "{tool} {args}: {}", out.content);
        assert!(
            out.content.starts_with(&expect),
            "{tool} {args}:\n got {:?}\nwant {expect:?}",
            out.content
        );
    }
    assert!(!store.dir().join("weekly-report").exists());

    // Broken folders show up in the listing so the model can fix or delete them.
    put(&store, "broken", Some("no front matter"));
    put(
        &store,
        "fine",
        Some("---\nname: fine\ndescription: Fine\n---\nok\n"),
    );
    let out = run(&registry, "skills_list", json!({})).await;
    assert_eq!(
        out.content,
        format!(
            "fine — Fine\n\nSkipped because they are broken:\n- {dir}/broken/SKILL.md: it has no front matter: it must start with a `---` line, then `name:` and `description:`, then another `---` line"
        )
    );
}

async fn action(registry: &ToolRegistry, args: serde_json::Value) -> Action {
    registry
        .prepare(&call("skill_manage", args), &ctx())
        .await
        .map(|p| p.action)
        .unwrap_or_else(|out| panic!("prepare failed: {}", out.content))
}

#[tokio::test]
async fn skill_manage_shows_what_it_would_do_and_changes_nothing() {
    let (_home, store) = store();
    let store = Arc::new(store);
    let registry = registry(&store);
    let dir = store.dir().display().to_string();

    let create = action(
        &registry,
        json!({"op": "create", "name": "notes", "description": "Keep notes: tidy", "body": "Write them down."}),
    )
    .await;
    assert_eq!(
        create.detail,
        format!(
            "Create skill notes: write {dir}/notes/SKILL.md\n\n---\nname: notes\ndescription: 'Keep notes: tidy'\n---\n\nWrite them down.\n"
        )
    );
    assert_eq!(create.writes, vec![store.dir().join("notes/SKILL.md")]);
    assert!(!store.dir().exists(), "create's action wrote something");

    put(&store, "deploy", Some(GOOD));
    fs::write(store.dir().join("deploy/run.sh"), "./ship").expect("write");
    let before = snapshot(&store);

    let edit = action(
        &registry,
        json!({"op": "edit", "name": "deploy", "description": "Ship it", "body": "# Deploy\n\n1. Build.\n2. Ship.\n3. Check."}),
    )
    .await;
    let path = format!("{dir}/deploy/SKILL.md");
    assert_eq!(
        edit.detail,
        format!(
            "Edit skill deploy: change {path}\n\n--- {path}\n+++ {path}\n@@ -1,10 +1,11 @@\n ---\n name: deploy\n-description: Ship the app\n-owner: ops # kept\n+description: Ship it\n+owner: ops\n ---\n \n # Deploy\n \n 1. Build.\n 2. Ship.\n+3. Check.\n"
        )
    );
    assert_eq!(edit.writes, vec![store.dir().join("deploy/SKILL.md")]);

    let delete = action(&registry, json!({"op": "delete", "name": "deploy"})).await;
    assert_eq!(
        delete.detail,
        format!(
            "Delete skill deploy: remove the folder {dir}/deploy and the 2 file(s) in it:\n  SKILL.md\n  run.sh"
        )
    );
    assert_eq!(delete.writes, vec![store.dir().join("deploy")]);

    assert_eq!(snapshot(&store), before, "an action changed the skills");

    // The same checks as the call itself, before anything is asked of the user.
    let out = registry
        .prepare(
            &call(
                "skill_manage",
                json!({"op": "create", "name": "deploy", "description": "d", "body": "b"}),
            ),
            &ctx(),
        )
        .await
        .map(|p| p.action);
    let Err(out) = out else {
        panic!("creating an existing skill was prepared")
    };
    assert_eq!(
        out.content,
        format!("error: a skill named \"deploy\" already exists at {dir}/deploy")
    );
}

proptest::proptest! {
    /// Any SKILL.md text is a skill or a reason, never a panic (docs/reliability.md): a skill
    /// only with front matter, a name and a description; a reason that names the part at fault.
    #[test]
    fn any_skill_file_is_a_skill_or_a_reason(
        text in proptest::prop_oneof![
            ".{0,300}",
            (".{0,20}", ".{0,40}", ".{0,80}").prop_map(|(name, description, body)| format!(
                "---\nname: {name}\ndescription: {description}\n---\n{body}"
            )),
            (".{0,20}", "[:\\[\\]{}&*!|>'\"%@`#, -]{0,30}").prop_map(|(name, yaml)| format!(
                "---\nname: {name}\ndescription: {yaml}\nextra: {yaml}\n---\n"
            )),
        ]
    ) {
        super::skill_md::check(&text);
    }
}
