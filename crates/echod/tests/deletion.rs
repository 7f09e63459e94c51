//! Deletion that deletes: `echod memory delete` removes a memory, the older versions it
//! superseded and its history from everything on disk. The tests write a unique canary,
//! check the scans find it in the data directory, delete, and scan every file byte for byte
//! again: for the canary whole, for each of its words as the search indexes store them
//! (lower-cased and stemmed, `common::scan`), and for the bytes of its memory's vector.

mod common;

use common::scan::{embedding_prefix, index_terms, terms_missing, terms_on_disk};
use common::{World, files_containing};
use serde_json::json;
use std::path::Path;

fn memory_id(added: &serde_json::Value) -> String {
    added["memory"]["id"]
        .as_str()
        .expect("memory id")
        .to_string()
}

/// Fails unless every index term of `canary` is in some file under the data directory: a
/// scan that finds nothing before a deletion proves nothing after it.
fn assert_terms_found(w: &World, canary: &str) {
    let missing = terms_missing(w.home.path(), canary);
    assert!(
        missing.is_empty(),
        "before the deletion the scan finds no file holding {missing:?} (of {:?})",
        index_terms(canary)
    );
}

/// Fails if a file under the data directory holds an index term of `canary`.
fn assert_no_terms(w: &World, canary: &str) {
    let left = terms_on_disk(w.home.path(), canary);
    assert!(
        left.is_empty(),
        "words of {canary:?} are still on disk: {left:?}"
    );
}

/// Fails unless the vector bytes `prefix` are in the vector table before a deletion.
fn assert_vector_found(w: &World, prefix: &[u8], what: &str) {
    assert!(
        !files_containing(&w.home.path().join("vectors"), prefix).is_empty(),
        "before the deletion the scan finds the vector of {what} in no file (bytes {prefix:02x?})"
    );
}

/// Fails if a file under the data directory holds the vector bytes `prefix`.
fn assert_no_vector(w: &World, prefix: &[u8], what: &str) {
    let left = files_containing(w.home.path(), prefix);
    assert!(
        left.is_empty(),
        "the vector of {what} (bytes {prefix:02x?}) is still on disk in {left:?}"
    );
}

#[test]
fn a_deleted_memory_with_its_versions_and_history_is_gone_from_every_file() {
    let w = World::new(json!({"steps": []}));
    let canary = "quokkas-xylophones-q7zx";
    let first = memory_id(&w.json(&[
        "memory",
        "add",
        "--slot",
        "pet",
        "--json",
        &format!("My pet's name is {canary}-one"),
    ]));
    // The same slot: the newer memory supersedes the first.
    let second = memory_id(&w.json(&[
        "memory",
        "add",
        "--slot",
        "pet",
        "--json",
        &format!("My pet's name is {canary}-two"),
    ]));
    assert_ne!(first, second);
    // An edit leaves the old text in the history.
    w.ok(&[
        "memory",
        "edit",
        &second,
        &format!("My pet's name is {canary}-three"),
    ]);
    let other = memory_id(&w.json(&["memory", "add", "--json", "The user likes green tea"]));
    assert_eq!(
        w.json(&["memory", "show", &first, "--json"])["status"],
        "superseded"
    );
    let before = files_containing(w.home.path(), canary.as_bytes());
    assert!(
        !before.is_empty(),
        "the scan finds the canary while the memory exists"
    );
    assert_terms_found(&w, canary);
    // The terms are the index's own: a search for one alone finds the memory (the embedder
    // is off, so only the BM25 index answers).
    for term in index_terms(canary) {
        let found = w.json(&["memory", "search", "--json", &term]).to_string();
        assert!(found.contains(&second), "searching {term:?}: {found}");
    }

    // Nobody can be asked (stdin is not a terminal): nothing happens without --yes.
    let refused = w.run(&["memory", "delete", &second]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--yes"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    w.ok(&["memory", "show", &second, "--json"]);

    let out = w.ok(&["memory", "delete", &second, "--yes"]);
    assert!(out.contains(&format!("deleted {second}")), "{out}");
    assert!(
        out.contains(&format!("deleted {first}")),
        "the superseded version goes with it: {out}"
    );
    for id in [&first, &second] {
        assert!(
            !w.run(&["memory", "show", id]).status.success(),
            "{id} is gone"
        );
    }
    assert_eq!(
        w.json(&["memory", "show", &other, "--json"])["content"],
        "The user likes green tea",
        "other memories stay"
    );
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");
    assert_no_terms(&w, canary);

    // Everything, with the typed confirmation the API asks for.
    let out = w.ok(&["memory", "delete", "--all", "--yes"]);
    assert!(out.contains(&format!("deleted {other}")), "{out}");
    let left = w.json(&["memory", "list", "--json"]);
    assert_eq!(left, json!([]), "no memory is left");
    assert!(files_containing(w.home.path(), b"green tea").is_empty());
}

#[test]
fn a_deleted_memory_leaves_no_copy_in_captured_model_requests_or_tool_results() {
    // The turn is given the memory (recall puts it into the request, which the trace keeps)
    // and the model also looks it up with the memory tool (whose result the trace keeps).
    let canary = "narwhals-kumquats-9c2v";
    let w = World::new(json!({"steps": [
        {"tool_calls": [{"id": "call_1", "name": "memory_recall",
                         "arguments": "{\"query\": \"locker code gym\"}"}]},
        {"text": "Your locker code is in your notes."}
    ]}));
    let id = memory_id(&w.json(&[
        "memory",
        "add",
        "--pin",
        "--json",
        &format!("The user's gym locker code is {canary}"),
    ]));
    w.ok(&["ask", "--session", "s1", "what is my gym locker code?"]);
    let turn_id = w.turns()[0]["id"].as_str().expect("turn id").to_string();
    let trace = w.trace(&turn_id);
    let first_call = trace["spans"]
        .as_array()
        .expect("spans")
        .iter()
        .find(|s| s["kind"] == "model")
        .expect("a model span")["id"]
        .as_str()
        .expect("span id")
        .to_string();
    let captured = w
        .json(&["trace", "call", &turn_id, &first_call])
        .to_string();
    assert!(
        captured.contains(canary),
        "the request that injected the memory is captured: {captured}"
    );

    assert_terms_found(&w, canary);
    w.ok(&["memory", "delete", &id, "--yes"]);
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");
    assert_no_terms(&w, canary);
    let captured = w
        .json(&["trace", "call", &turn_id, &first_call])
        .to_string();
    assert!(captured.contains("[deleted memory]"), "{captured}");
}

/// LanceDB table versions kept under `dir` (one manifest each).
fn vector_versions(dir: &Path) -> usize {
    common::files_under(dir)
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "manifest"))
        .count()
}

#[test]
fn a_deletion_erases_the_vectors_and_every_earlier_version_of_the_vector_table() {
    // Every write makes a new LanceDB version whose files keep the vectors they held; a
    // deletion must not leave the deleted memory's vector in any of them.
    let dir = common::embed_model_dir();
    let w = World::with_config(
        json!({"steps": []}),
        &format!("[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {dir:?}\n"),
    );
    let cello_text = "The user plays the cello every evening";
    let cello = memory_id(&w.json(&["memory", "add", "--json", cello_text]));
    w.ok(&["memory", "add", "The user's sister lives in Lisbon"]);
    let vectors = w.home.path().join("vectors");
    assert!(
        vector_versions(&vectors) > 1,
        "each write is a version of the vector table"
    );
    let cello_vector = embedding_prefix(cello_text);
    assert_vector_found(&w, &cello_vector, "the cello memory");
    let search = |query: &str| -> Vec<String> {
        w.json(&["memory", "search", "--json", query])
            .as_array()
            .expect("results")
            .iter()
            .filter_map(|r| r["memory"]["id"].as_str().map(String::from))
            .collect()
    };
    assert!(search("which musical instrument?").contains(&cello));

    w.ok(&["memory", "delete", &cello, "--yes"]);
    assert_no_vector(&w, &cello_vector, "the cello memory");
    assert_eq!(
        vector_versions(&vectors),
        1,
        "only the current version of the vector table is left"
    );
    assert!(!search("which musical instrument?").contains(&cello));
    assert_eq!(
        search("where does the sister live?").len(),
        1,
        "the other memory's vector stays searchable"
    );
}

#[test]
fn delete_all_data_leaves_no_byte_of_it_in_any_file() {
    // The canary goes everywhere a person's data goes: a message (history and the trace's
    // captured request), a memory (SQLite and the vector table), a tool result that showed
    // the memory, and USER.md. (The conversation archive, episodes and archived memories:
    // `delete_all_data_leaves_no_word_of_an_archived_conversation_an_episode_or_…` below.)
    let canary = "axolotls-marmosets-7h3k";
    let dir = common::embed_model_dir();
    let w = World::with_config(
        json!({"steps": [
            {"tool_calls": [{"id": "call_1", "name": "memory_recall",
                             "arguments": "{\"query\": \"password\"}"}]},
            {"text": "Noted."},
            {"text": "Hello again."}
        ]}),
        &format!("[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {dir:?}\n"),
    );
    let password = format!("The user's password is {canary}");
    w.ok(&["memory", "add", "--pin", &password]);
    w.ok(&[
        "ask",
        "--session",
        "s1",
        &format!("my password is {canary}, what do you know about it?"),
    ]);
    let user_notes = w.home.path().join("USER.md");
    std::fs::write(&user_notes, format!("Password: {canary}\n")).expect("write USER.md");
    let config = std::fs::read(w.home.path().join("config.toml")).expect("config");
    let before = files_containing(w.home.path(), canary.as_bytes());
    assert!(
        before.len() >= 2,
        "the scan finds the canary in the database and USER.md: {before:?}"
    );
    assert_terms_found(&w, canary);
    let vector = embedding_prefix(&password);
    assert_vector_found(&w, &vector, "the password memory");

    // Nobody can be asked (stdin is not a terminal): nothing happens without --yes.
    let refused = w.run(&["data", "delete-all"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--yes"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!files_containing(w.home.path(), canary.as_bytes()).is_empty());

    let out = w.ok(&["data", "delete-all", "--yes"]);
    assert!(
        out.contains("deleted 1 conversation(s), 1 memory(ies)") && out.contains("USER.md"),
        "{out}"
    );
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");
    assert_no_terms(&w, canary);
    assert_no_vector(&w, &vector, "the password memory");
    assert_eq!(w.json(&["sessions", "list", "--json"]), json!([]));
    assert_eq!(w.json(&["memory", "list", "--json"]), json!([]));
    assert_eq!(w.json(&["trace", "list", "--json"]), json!([]));
    assert!(!user_notes.exists());
    assert_eq!(
        std::fs::read(w.home.path().join("config.toml")).expect("config"),
        config,
        "settings stay"
    );

    // The assistant still works, from a clean slate.
    let answer = w.ok(&["ask", "--session", "s1", "hello"]);
    assert!(answer.contains("Hello again."), "{answer}");
    assert_eq!(
        w.json(&["sessions", "list", "--json"])
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

/// The config of a world that embeds with the local model (from `dir`), extraction off.
fn local_vectors(dir: &str) -> String {
    format!("[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {dir:?}\n")
}

/// A window small enough that a few long turns are compressed (and archived).
const SMALL_WINDOW: &str = "[llm]\ncontext_window = 6000\nmax_tokens = 300\n";

/// Whether the archive of `session`'s compressed history finds `term` (its full-text index).
fn archive_finds(w: &World, session: &str, term: &str) -> bool {
    let home = w.home.path().to_path_buf();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async move {
            let store = echo_core::Store::open_in(&home).await.expect("store");
            let Some(id) = store.session_by_name(session).await.expect("session") else {
                return false;
            };
            let hits = store.search_archive(&id, term, 5).await.expect("search");
            !hits.is_empty()
        })
}

/// Turns in `session`: `first` (holding `canary`), then long ones until the history is
/// compressed and the first turn is archived: summarised, and in the archive's full-text
/// index (which finds each of the canary's terms). The script must answer the turns and
/// `summarize_history`.
fn talk_until_archived(w: &World, session: &str, first: &str, canary: &str) {
    w.ok(&["ask", "--session", session, first]);
    let long = format!(
        "Let us go over the plan again: {}",
        "lorem ipsum dolor sit amet ".repeat(60)
    );
    let archived = || {
        index_terms(canary)
            .iter()
            .all(|t| archive_finds(w, session, t))
    };
    for _ in 0..12 {
        if archived() {
            return;
        }
        w.ok(&["ask", "--session", session, &long]);
    }
    assert!(archived(), "the first turn of {session} was never archived");
}

/// A mock step that answers every `summarize_history` call with `summary`.
fn summarizer(summary: &str) -> serde_json::Value {
    json!({"when_tool": "summarize_history", "times": 100, "tool_calls": [{"id": "s",
        "name": "summarize_history", "arguments": json!({"summary": summary}).to_string()}]})
}

/// A conversation in `session` whose first message holds `canary`, from which extraction
/// learns a memory quoting it; the long turns after it on a small window compress the
/// history, so that first turn is archived (summarised and in the archive's index).
fn conversation_with_a_learned_memory(w: &World, session: &str, canary: &str) {
    let said = format!("My locker code is {canary} and I go to the gym on Mondays");
    let memory = json!({"memories": [{"kind": "fact", "subject": "user", "slot": null,
        "content": format!("The user's locker code is {canary}."), "value": canary,
        "source": "user_stated", "confidence": 0.9, "valid_until": null,
        "evidence": format!("My locker code is {canary}")}]});
    w.mock
        .set_script(json!({"steps": [
            summarizer(&format!("The user's locker code is {canary}.")),
            {"model": "extractor", "when_tool": "extract_memories", "times": 1, "tool_calls": [{
                "id": "x", "name": "extract_memories", "arguments": memory.to_string()}]},
            {"model": "extractor", "when_tool": "extract_memories", "times": 100, "tool_calls": [{
                "id": "x", "name": "extract_memories", "arguments": "{\"memories\": []}"}]},
            {"model": "primary", "times": 100, "text": "Noted."},
        ]}))
        .expect("script");
    talk_until_archived(w, session, &said, canary);
}

#[test]
fn deleting_a_conversation_removes_every_copy_and_its_memories_as_asked() {
    let w = World::with_config(
        json!({"steps": []}),
        &format!(
            "{SMALL_WINDOW}{}consolidate_after = 0\n",
            common::EXTRACTION_CONFIG
        ),
    );
    let gone = "ocelots-wombats-4k2q";
    let kept = "pangolins-jackalopes-8m1z";
    conversation_with_a_learned_memory(&w, "deleted", gone);
    conversation_with_a_learned_memory(&w, "kept", kept);
    let memories = w.ok(&["memory", "list"]);
    assert!(
        memories.contains(gone) && memories.contains(kept),
        "{memories}"
    );
    let before = files_containing(w.home.path(), gone.as_bytes());
    assert!(!before.is_empty(), "the scan finds the conversation");
    assert_terms_found(&w, gone);

    // Deleted with its memories: no byte of it is left (messages, the archive and its index,
    // trace spans, captured requests and their message blobs, the memory and its history).
    let out = w.ok(&["sessions", "delete", "deleted", "--memories", "delete"]);
    assert!(out.contains("and 1 memory(ies)"), "{out}");
    let after = files_containing(w.home.path(), gone.as_bytes());
    assert!(
        after.is_empty(),
        "the deleted conversation is still in {after:?}"
    );
    assert_no_terms(&w, gone);

    // Deleted keeping its memories: the conversation goes, what it taught stays.
    w.ok(&["sessions", "delete", "kept", "--memories", "keep"]);
    let memories = w.ok(&["memory", "list"]);
    assert!(memories.contains(kept), "{memories}");
    let history = w.run(&["history", "kept"]);
    assert!(!history.status.success(), "the conversation is gone");
}

#[test]
fn an_archived_memory_once_deleted_leaves_no_word_or_vector_of_it() {
    let w = World::with_config(
        json!({"steps": []}),
        &local_vectors(&common::embed_model_dir()),
    );
    let canary = "zebroids-ocelots-5t1w";
    let text = format!("The user's old alarm code was {canary}");
    let id = archived_memory(&w, &text);
    let tea = memory_id(&w.json(&["memory", "add", "--json", "The user likes green tea"]));
    assert!(!files_containing(w.home.path(), canary.as_bytes()).is_empty());
    assert_terms_found(&w, canary);
    let vector = embedding_prefix(&text);
    assert_vector_found(&w, &vector, "the archived memory");

    w.ok(&["memory", "delete", &id, "--yes"]);
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");
    assert_no_terms(&w, canary);
    assert_no_vector(&w, &vector, "the archived memory");
    let found = w
        .json(&["memory", "search", "--json", "which drink?"])
        .to_string();
    assert!(found.contains(&tea), "the other memory stays: {found}");
}

/// Adds a memory of `text`, expired long ago, and archives it with the sweep; its id.
fn archived_memory(w: &World, text: &str) -> String {
    let id = memory_id(&w.json(&["memory", "add", "--json", text]));
    w.ok(&["memory", "expire", &id, "--until", "2001-01-01"]);
    let swept = w.json(&["memory", "sweep", "--json"]);
    assert_eq!(swept["expired"], json!([id]), "{swept}");
    let shown = w.json(&["memory", "show", &id, "--json"]);
    assert_eq!(
        (shown["status"].as_str(), shown["tier"].as_str()),
        (Some("archived"), Some("archival")),
        "{shown}"
    );
    id
}

/// A script whose consolidations write `summary` as the episode and whose turns answer.
fn consolidating(summary: &str) -> serde_json::Value {
    json!({"steps": [
        {"model": "extractor", "when_tool": "consolidate_episode", "times": 100,
         "tool_calls": [{"id": "c", "name": "consolidate_episode",
                         "arguments": json!({"summary": summary, "memories": []}).to_string()}]},
    ], "default": {"model": "primary", "text": "Noted."}})
}

/// Consolidation after four messages, on the `extractor` model, waited for by each turn.
const CONSOLIDATION: &str = "extraction_model = \"extractor\"\nconsolidate_after = 4\n\
    [agent]\nbackground_wait_secs = 600\n";

/// The episodic memories, as `memory list --json` gives them.
fn episodes(w: &World) -> Vec<serde_json::Value> {
    let listed = w.json(&["memory", "list", "--tier", "episodic", "--json"]);
    listed.as_array().cloned().unwrap_or_default()
}

#[test]
fn a_consolidated_episode_once_deleted_leaves_no_word_or_vector_of_it() {
    // The episode's summary holds the canary; the conversation it summarises does not, so
    // deleting the episode must take every copy.
    let canary = "jackalopes-narwhals-2p6d";
    let summary = format!("The user plans a trip to Kyoto to see the {canary}.");
    let dir = common::embed_model_dir();
    let w = World::with_config(
        consolidating(&summary),
        &format!("{}{CONSOLIDATION}", local_vectors(&dir)),
    );
    w.ok(&[
        "ask",
        "--session",
        "trip",
        "We are planning a trip to Kyoto in April.",
    ]);
    w.ok(&["ask", "--session", "trip", "We want to see the temples."]);
    let episodes = episodes(&w);
    assert_eq!(
        episodes.len(),
        1,
        "four messages make one episode: {episodes:?}"
    );
    assert_eq!(episodes[0]["content"], summary.as_str());
    let id = episodes[0]["id"].as_str().expect("id").to_string();
    assert!(!files_containing(w.home.path(), canary.as_bytes()).is_empty());
    assert_terms_found(&w, canary);
    let vector = embedding_prefix(&summary);
    assert_vector_found(&w, &vector, "the episode");

    w.ok(&["memory", "delete", &id, "--yes"]);
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(
        after.is_empty(),
        "the episode is still on disk in {after:?}"
    );
    assert_no_terms(&w, canary);
    assert_no_vector(&w, &vector, "the episode");
    assert_eq!(w.history("trip").len(), 4, "the conversation stays");
}

#[test]
fn delete_all_data_leaves_no_word_of_an_archived_conversation_an_episode_or_an_archived_memory() {
    let said = "wombats-pangolins-6j9r";
    let episode = "kumquats-quokkas-3x5m";
    let archived = "marmosets-xylophones-8c4n";
    let summary = format!("The user talked about the plan and the {episode}.");
    let dir = common::embed_model_dir();
    let mut script = consolidating(&summary);
    script["steps"]
        .as_array_mut()
        .expect("steps")
        .insert(0, summarizer(&format!("The user named the {said}.")));
    let w = World::with_config(
        script,
        &format!("{SMALL_WINDOW}{}{CONSOLIDATION}", local_vectors(&dir)),
    );
    // A conversation compressed (its first turn archived) and consolidated into an episode.
    talk_until_archived(&w, "plan", &format!("The password is {said}."), said);
    assert!(
        !episodes(&w).is_empty(),
        "the conversation was consolidated"
    );
    let memory = format!("The user's old alarm code was {archived}");
    archived_memory(&w, &memory);
    for canary in [said, episode, archived] {
        assert!(!files_containing(w.home.path(), canary.as_bytes()).is_empty());
        assert_terms_found(&w, canary);
    }
    let vectors = [
        (embedding_prefix(&summary), "the episode"),
        (embedding_prefix(&memory), "the archived memory"),
    ];
    for (vector, what) in &vectors {
        assert_vector_found(&w, vector, what);
    }

    let out = w.ok(&["data", "delete-all", "--yes"]);
    assert!(out.contains("deleted 1 conversation(s)"), "{out}");
    for canary in [said, episode, archived] {
        let after = files_containing(w.home.path(), canary.as_bytes());
        assert!(after.is_empty(), "{canary} is still on disk in {after:?}");
        assert_no_terms(&w, canary);
    }
    for (vector, what) in &vectors {
        assert_no_vector(&w, vector, what);
    }
}
