//! Projects keep work apart: a project's conversation recalls the project's memories and
//! the global ones, never another project's (in the request's snapshot, in what its message
//! recalls, and through the `memory_recall` tool); its instructions stand in its requests and
//! its folders are its tools' workspace. Extraction in a project's conversation keeps facts
//! about the person global and the rest with the project. A memory moves between a project
//! and the global memories as one undoable change, and removing a project says what becomes
//! of its memories. A conversation moves into a project, to another and out of any, and
//! its next turn follows.

mod common;

use common::World;
use serde_json::{Value, json};

const GLOBAL: &str = "The user's name is Ada Quill-Marsh.";
const WORK: &str = "The Work launch is codenamed heron-41.";
const FAMILY: &str = "The Family trip goes to lake-tahoe-77.";
const INSTRUCTIONS: &str = "Answer in terse bullet points about the launch.";

fn text(body: &Value) -> String {
    body.to_string()
}

fn memories(w: &World, args: &[&str]) -> String {
    let mut all = vec!["memory", "list", "--json"];
    all.extend_from_slice(args);
    w.json(&all).to_string()
}

#[test]
fn a_projects_conversation_recalls_its_own_memories_and_the_global_ones_never_another_projects() {
    let w = World::new(json!({"steps": [
        {"model": "primary", "text": "Work answer."},
        // In Family the model looks for the Work codename itself: the tool finds nothing.
        {"model": "primary", "tool_calls": [{"id": "call_1", "name": "memory_recall",
            "arguments": "{\"query\": \"Work launch codenamed heron-41\"}"}]},
        {"model": "primary", "text": "Family answer."},
        {"model": "primary", "text": "Answer outside any project."},
        {"model": "primary", "text": "Work again."}
    ]}));
    let folder = tempfile::tempdir().expect("tempdir");
    let folder_arg = folder.path().to_str().expect("utf8").to_string();
    w.ok(&[
        "projects",
        "add",
        "Work",
        "--folder",
        &folder_arg,
        "--instructions",
        INSTRUCTIONS,
    ]);
    w.ok(&["projects", "add", "Family"]);
    w.ok(&["memory", "add", GLOBAL]);
    w.ok(&["memory", "add", "--project", "Work", WORK]);
    w.ok(&["memory", "add", "--project", "Family", FAMILY]);
    let question = "What are the launch codename and the trip destination?";
    w.ok(&["ask", "--project", "Work", question]);
    w.ok(&["ask", "--project", "Family", question]);
    w.ok(&["ask", question]);

    let requests = w.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    // (request, what it holds, what it must not hold)
    let table: [(usize, &[&str], &[&str]); 4] = [
        (0, &[GLOBAL, WORK, INSTRUCTIONS, &folder_arg], &[FAMILY]),
        (1, &[GLOBAL, FAMILY], &[WORK, INSTRUCTIONS]),
        (2, &["no matching memories"], &[WORK, INSTRUCTIONS]),
        (3, &[GLOBAL], &[WORK, FAMILY, INSTRUCTIONS]),
    ];
    for (i, present, absent) in table {
        let body = text(&requests[i]);
        for p in present {
            assert!(body.contains(p), "request {i} lacks {p:?}: {body}");
        }
        for a in absent {
            assert!(!body.contains(a), "request {i} holds {a:?}: {body}");
        }
    }

    // The conversations are listed under their projects; a conversation stays in its own.
    let sessions = w.json(&["sessions", "list", "--json"]);
    let project_of = |name: &str| {
        sessions
            .as_array()
            .expect("sessions")
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["project"].clone())
    };
    assert_eq!(project_of("project:Work"), Some(json!("Work")));
    assert_eq!(project_of("project:Family"), Some(json!("Family")));
    assert_eq!(project_of("default"), Some(Value::Null));
    let out = w.run(&[
        "ask",
        "--project",
        "Family",
        "--session",
        "project:Work",
        "hi",
    ]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("not a conversation of project \"Family\""),
        "{}",
        common::stderr(&out)
    );
    let out = w.run(&["ask", "--project", "Nowhere", "hi"]);
    assert!(!out.status.success());
    assert!(common::stderr(&out).contains("project not found: Nowhere"));
    // A conversation named later without --project is still the project's.
    w.ok(&["ask", "--session", "project:Work", question]);
    let body = text(&w.requests()[4]);
    assert!(body.contains(WORK) && !body.contains(FAMILY), "{body}");

    let listed = w.json(&["projects", "list", "--json"]);
    assert_eq!(listed[0]["name"], "Family");
    assert_eq!(listed[1]["name"], "Work");
    assert_eq!(listed[1]["memories"], 1);
    assert_eq!(listed[1]["sessions"], 1);
}

#[test]
fn a_conversation_moves_into_a_project_to_another_and_out_and_its_next_turn_follows() {
    let w = World::new(json!({"steps": [{"model": "primary", "times": 10, "text": "Answer."}]}));
    w.ok(&["projects", "add", "Work", "--instructions", INSTRUCTIONS]);
    w.ok(&["projects", "add", "Family"]);
    w.ok(&["memory", "add", GLOBAL]);
    w.ok(&["memory", "add", "--project", "Work", WORK]);
    w.ok(&["memory", "add", "--project", "Family", FAMILY]);
    // A greeting recalls nothing: what the requests hold comes from the conversation's memory
    // snapshot, which the first turn froze outside any project; a move must make it again.
    let question = "Hello there";
    let project_of = |w: &World| {
        let sessions = w.json(&["sessions", "list", "--json"]);
        sessions
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == "plans"))
            .map(|s| s["project"].clone())
            .expect("the session is listed")
    };
    // (where it is moved, what its next request holds, what it must not hold)
    let steps: [(Option<&str>, &[&str], &[&str]); 4] = [
        (None, &[GLOBAL], &[WORK, FAMILY, INSTRUCTIONS]),
        (Some("Work"), &[GLOBAL, WORK, INSTRUCTIONS], &[FAMILY]),
        (Some("Family"), &[GLOBAL, FAMILY], &[WORK, INSTRUCTIONS]),
        (None, &[GLOBAL], &[WORK, FAMILY, INSTRUCTIONS]),
    ];
    for (i, (project, present, absent)) in steps.into_iter().enumerate() {
        if i > 0 {
            let mut args = vec!["sessions", "move", "plans"];
            args.extend(project.iter().flat_map(|p| ["--project", *p]));
            let said = w.ok(&args);
            assert!(said.contains(project.unwrap_or("no project")), "{said}");
        }
        w.ok(&["ask", "--session", "plans", question]);
        assert_eq!(project_of(&w), json!(project));
        let body = text(w.requests().last().expect("a request"));
        for p in present {
            assert!(body.contains(p), "step {i} lacks {p:?}: {body}");
        }
        for a in absent {
            assert!(!body.contains(a), "step {i} holds {a:?}: {body}");
        }
    }
    for (args, error) in [
        (
            ["sessions", "move", "plans", "--project", "Nowhere"],
            "project not found: Nowhere",
        ),
        (
            ["sessions", "move", "nowhere", "--project", "Work"],
            "session not found",
        ),
    ] {
        let out = w.run(&args);
        assert!(!out.status.success());
        assert!(
            common::stderr(&out).contains(error),
            "{}",
            common::stderr(&out)
        );
    }
    assert_eq!(project_of(&w), Value::Null);
}

#[test]
fn a_projects_folders_are_its_conversations_workspace() {
    let folder = tempfile::tempdir().expect("tempdir");
    std::fs::write(folder.path().join("notes.txt"), "folder-canary-93").expect("notes");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let outside = elsewhere.path().join("x.txt");
    let write = json!({"path": outside, "content": "no"}).to_string();
    let w = World::new(json!({"steps": [
        {"model": "primary", "tool_calls": [
            {"id": "call_1", "name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"},
            {"id": "call_2", "name": "write_file", "arguments": write}]},
        {"model": "primary", "text": "Done."}
    ]}));
    let folder_arg = folder.path().to_str().expect("utf8");
    w.ok(&["projects", "add", "Notes", "--folder", folder_arg]);
    w.ok(&["ask", "--project", "Notes", "read my notes and write x"]);
    let body = text(&w.requests()[1]);
    assert!(
        body.contains("folder-canary-93"),
        "a relative path starts in the folder: {body}"
    );
    assert!(
        body.contains("add its directory to the project's folders"),
        "a write outside the project's folders is refused: {body}"
    );
    assert!(!outside.exists());
}

fn extraction_script() -> Value {
    let facts = json!({"memories": [
        {"evidence": "I am vegetarian", "content": "The user is vegetarian.", "subject": "user",
         "kind": "preference", "slot": "diet", "value": "vegetarian", "source": "user_stated",
         "confidence": 0.9, "valid_until": null, "about": "person"},
        {"evidence": "the launch moved to friday", "content": "The launch moved to Friday.",
         "subject": "launch", "kind": "plan", "slot": "launch_day", "value": "Friday",
         "source": "user_stated", "confidence": 0.9, "valid_until": null, "about": "project"}
    ]});
    let extract = json!({"model": "extractor", "when_tool": "extract_memories", "times": 3,
        "tool_calls": [{"id": "x", "name": "extract_memories", "arguments": facts.to_string()}]});
    json!({"steps": [
        {"model": "primary", "text": "Noted."},
        extract,
        {"model": "primary", "text": "Noted."},
        {"model": "primary", "text": "Noted."}
    ]})
}

#[test]
fn extraction_keeps_person_facts_global_and_the_rest_with_the_project() {
    let w = World::with_config(extraction_script(), common::EXTRACTION_CONFIG);
    w.ok(&["projects", "add", "Work"]);
    let said = "I am vegetarian, and the launch moved to Friday";
    w.ok(&["ask", "--project", "Work", said]);
    let global = memories(&w, &["--global"]);
    let work = memories(&w, &["--project", "Work"]);
    assert!(
        global.contains("vegetarian") && !global.contains("Friday"),
        "{global}"
    );
    assert!(
        work.contains("Friday") && !work.contains("vegetarian"),
        "{work}"
    );

    // Another project's extraction is shown the global slots, not Work's.
    w.ok(&["projects", "add", "Family"]);
    w.ok(&["ask", "--project", "Family", said]);
    let asked = w
        .requests()
        .into_iter()
        .filter(|r| r["model"] == "extractor")
        .map(|r| r.to_string())
        .collect::<Vec<_>>();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked[1].contains("diet") && !asked[1].contains("launch_day"),
        "{}",
        asked[1]
    );

    // Outside any project both are global (one confirms, one supersedes nothing new).
    w.ok(&["ask", "--session", "elsewhere", said]);
    let work_after = memories(&w, &["--project", "Work"]);
    assert!(memories(&w, &["--project", "Family"]).contains("Friday"));
    assert_eq!(
        serde_json::from_str::<Value>(&work_after)
            .expect("json")
            .as_array()
            .map(Vec::len),
        Some(1),
        "{work_after}"
    );
    let global = memories(&w, &["--global"]);
    assert!(
        global.contains("Friday"),
        "outside a project it is global: {global}"
    );
}

#[test]
fn a_memory_moves_between_a_project_and_global_as_one_undoable_change_and_removal_asks() {
    let w = World::new(json!({"steps": []}));
    w.ok(&["projects", "add", "Work"]);
    let added = w.json(&["memory", "add", "--json", "--project", "Work", WORK]);
    let id = added["memory"]["id"].as_str().expect("id").to_string();
    let scope = |w: &World| w.json(&["memory", "show", &id, "--json"])["scope"].clone();
    let work_scope = scope(&w);
    assert!(
        work_scope
            .as_str()
            .is_some_and(|s| s.starts_with("project:")),
        "{work_scope}"
    );
    w.ok(&["memory", "move", &id, "--global"]);
    assert_eq!(scope(&w), json!("global"));
    assert!(memories(&w, &["--project", "Work"]).contains("[]"));
    w.ok(&["memory", "undo", &id]);
    assert_eq!(scope(&w), work_scope);
    let out = w.run(&["memory", "move", &id, "--project", "Nowhere"]);
    assert!(!out.status.success());

    // Removing a project with memories needs a word on them; then they become global.
    let out = w.run(&["projects", "remove", "Work"]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("has 1 memories"),
        "{}",
        common::stderr(&out)
    );
    w.ok(&["projects", "remove", "Work", "--memories", "global"]);
    assert_eq!(scope(&w), json!("global"));
    assert_eq!(w.json(&["projects", "list", "--json"]), json!([]));

    // Or they are deleted for good.
    w.ok(&["projects", "add", "Family"]);
    let added = w.json(&["memory", "add", "--json", "--project", "Family", FAMILY]);
    let family = added["memory"]["id"].as_str().expect("id").to_string();
    w.ok(&["projects", "remove", "Family", "--memories", "delete"]);
    let out = w.run(&["memory", "show", &family, "--json"]);
    assert!(!out.status.success(), "deleted for good");
    assert!(common::files_containing(w.home.path(), b"lake-tahoe-77").is_empty());
}

#[test]
fn project_names_and_folders_are_checked() {
    let w = World::new(json!({"steps": []}));
    for (args, error) in [
        (vec!["projects", "add", "  "], "a project needs a name"),
        (
            vec!["projects", "add", "X", "--folder", "/no/such/dir-81"],
            "cannot be opened",
        ),
    ] {
        let out = w.run(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            common::stderr(&out).contains(error),
            "{args:?}: {}",
            common::stderr(&out)
        );
    }
    w.ok(&["projects", "add", "Work"]);
    let out = w.run(&["projects", "add", "Work"]);
    assert!(common::stderr(&out).contains("exists already"));
    w.ok(&["projects", "add", "Home"]);
    let out = w.run(&["projects", "rename", "Home", "Work"]);
    assert!(common::stderr(&out).contains("exists already"));
    w.ok(&["projects", "rename", "Home", "Family"]);
    w.ok(&["projects", "edit", "Family", "--instructions", "Be kind."]);
    let listed = w.json(&["projects", "list", "--json"]);
    assert_eq!(listed[0]["name"], "Family");
    assert_eq!(listed[0]["instructions"], "Be kind.");
}
