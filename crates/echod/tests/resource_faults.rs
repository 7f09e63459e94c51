//! Resource faults (docs/reliability.md, section 6): a full disk, a read-only data directory, a damaged
//! database, a deleted or damaged vector index, a missing embedding model, keychains that all
//! refuse, a Secret Service with no default keyring. Each gives a clear
//! error where it is met, corrupts nothing that was stored, and once the fault is gone Echo
//! Desk works again (the derived indexes rebuild themselves).
//!
//! The full disk and the read-only folder are real file systems: a 3 MiB tmpfs mounted over
//! the data directory in a private mount namespace (`unshare`), filled up or remounted
//! read-only between `echod` runs. The keychains refuse for real too: no D-Bus session to
//! reach a Secret Service, and every kernel-keyring call failed by `strace`'s fault injection.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;

fn noted() -> Value {
    json!({"steps": [], "default": {"text": "Noted."}})
}

/// The outcome of one `echod` run inside the namespace script.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn read_run(out: &Path, name: &str) -> Run {
    let read = |ext: &str| std::fs::read_to_string(out.join(format!("{name}.{ext}")));
    Run {
        code: read("rc")
            .unwrap_or_else(|e| panic!("step {name} never ran: {e}"))
            .trim()
            .parse()
            .expect("an exit code"),
        stdout: read("out").unwrap_or_default(),
        stderr: read("err").unwrap_or_default(),
    }
}

fn assert_clear_failure(run: &Run, name: &str, words: &[&str]) {
    assert_ne!(run.code, 0, "{name} should fail: {}", run.stdout);
    assert!(!run.stderr.contains("panicked"), "{name}: {}", run.stderr);
    let line = run.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{name}: one line: {line}");
    assert!(
        words.iter().all(|w| line.contains(w)),
        "{name}: {line:?} should say {words:?}"
    );
}

#[test]
fn a_full_disk_and_a_read_only_folder_are_clear_errors_and_nothing_is_lost() {
    let w = World::new(noted());
    let home = w.home.path().to_path_buf();
    let outside = tempfile::tempdir().expect("a folder outside the data directory");
    let config = outside.path().join("config.toml");
    std::fs::copy(home.join("config.toml"), &config).expect("keep the config");
    let script = r#"
        set -u
        mount -t tmpfs -o size=3m tmpfs "$ECHO_DESK_HOME" || { echo "cannot mount a tmpfs" >&2; exit 90; }
        cp "$CONFIG" "$ECHO_DESK_HOME/config.toml"
        run() { name=$1; shift; "$ECHOD" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; }
        run first ask --session s "I keep bees on the roof."
        dd if=/dev/zero of="$ECHO_DESK_HOME/filler" bs=16k 2>/dev/null
        run full ask --session s "This message comes when the disk is full."
        rm "$ECHO_DESK_HOME/filler"
        run check_after_full data check --json
        run after_full ask --session s "The disk has room again."
        mount -o remount,ro "$ECHO_DESK_HOME"
        run read_only ask --session s "This message comes when the folder is read-only."
        mount -o remount,rw "$ECHO_DESK_HOME"
        run check_after_read_only data check --json
        run after_read_only ask --session s "Writable again."
        run history history s --json
    "#;
    // The same environment `echod` gets everywhere else, with `unshare` in front.
    let echod = w.command(&[]);
    let mut command = std::process::Command::new("unshare");
    for (key, value) in echod.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let status = command
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .env("CONFIG", &config)
        .env("OUT", outside.path())
        .env("ECHOD", echod.get_program())
        .stdin(std::process::Stdio::null())
        .status()
        .expect("run unshare (util-linux)");
    assert!(
        status.success(),
        "the namespace script failed ({status}): unprivileged user namespaces are needed"
    );
    let run = |name: &str| read_run(outside.path(), name);

    assert_eq!(run("first").code, 0, "{}", run("first").stderr);
    assert_clear_failure(
        &run("full"),
        "a full disk",
        &["disk", "is full", "free some space"],
    );
    assert_clear_failure(
        &run("read_only"),
        "a read-only folder",
        &["Read-only file system"],
    );
    for check in ["check_after_full", "check_after_read_only"] {
        let check: Value = serde_json::from_str(&run(check).stdout).expect("check JSON");
        assert_eq!(check["problems"], json!([]), "{check:#}");
        assert_eq!(check["integrity"], "ok", "{check:#}");
    }
    for after in ["after_full", "after_read_only"] {
        assert_eq!(run(after).code, 0, "{after}: {}", run(after).stderr);
    }
    let history: Value = serde_json::from_str(&run("history").stdout).expect("history JSON");
    let said: Vec<&str> = history
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        said,
        [
            "I keep bees on the roof.",
            "The disk has room again.",
            "Writable again."
        ],
        "what was said before the faults is kept; what was refused is not half-saved"
    );
}

#[test]
fn a_damaged_database_is_a_clear_error_naming_the_file() {
    let w = World::new(noted());
    w.ok(&["ask", "I keep bees on the roof."]);
    let db = w.home.path().join("echo.db");
    // The first page's header: the file is no longer a database at all.
    let mut bytes = std::fs::read(&db).expect("read the database");
    bytes[..16].copy_from_slice(b"not a database!\0");
    std::fs::write(&db, &bytes).expect("damage the header");
    for args in [
        &["ask", "Hello?"][..],
        &["history", "default"],
        &["data", "check"],
    ] {
        let out = w.run(args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} on a damaged database");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains(&db.display().to_string()) && err.contains("not a database"),
            "{args:?}: the error names the file and what is wrong: {err}"
        );
    }
}

#[test]
fn damaged_pages_are_reported_by_the_data_check() {
    let w = World::new(noted());
    for i in 0..5 {
        w.ok(&[
            "memory",
            "add",
            &format!("The user keeps jar number {i} on the shelf by the window."),
        ]);
    }
    let db = w.home.path().join("echo.db");
    // (Each `echod` folds its write-ahead log into the file when it exits.)
    assert_eq!(w.json(&["data", "check", "--json"])["integrity"], "ok");
    // Scribble over the cell pointers of every page after the first (the schema): whatever
    // a process reads next, it meets damage.
    let mut bytes = std::fs::read(&db).expect("read the database");
    let page = 4096;
    assert!(bytes.len() > 4 * page, "the database has pages to damage");
    for start in (page..bytes.len()).step_by(page) {
        for b in &mut bytes[start + 8..start + 64] {
            *b = 0xA5;
        }
    }
    std::fs::write(&db, &bytes).expect("damage the pages");
    let out = w.run(&["data", "check", "--json"]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(!out.status.success(), "a damaged page is reported");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        text.contains("integrity") || text.contains("malformed"),
        "the check says the database is damaged: {text}"
    );
}

/// A world with the local embedder and two memories in its vector index.
fn indexed_world() -> World {
    let dir = embed_model_dir();
    let config =
        format!("[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {dir:?}\n");
    let w = World::with_config(noted(), &config);
    w.ok(&["memory", "add", "The user keeps bees on the roof."]);
    w.ok(&["memory", "add", "The user drinks green tea."]);
    w
}

#[test]
fn a_deleted_or_damaged_vector_index_and_a_missing_embedder_recover() {
    let w = indexed_world();
    let vectors = w.home.path().join("vectors");
    let check = |w: &World| w.json(&["data", "check", "--json"]);
    assert_eq!(check(&w)["vectors"], 2);

    // Deleted: the next process notices and rebuilds it from SQLite.
    std::fs::remove_dir_all(&vectors).expect("delete the vector index");
    let after = check(&w);
    assert_eq!(
        (after["vectors"].clone(), after["problems"].clone()),
        (json!(2), json!([]))
    );

    // Damaged: every file of it overwritten with noise, or cut short; rebuilt the same way,
    // no panic. LanceDB reports the short files with an error ("does not have sufficient
    // data"), and the noise with a panic where overflow checks are on, else an error too.
    for (damage, bytes) in [("noise", 100), ("cut short", 8)] {
        for path in files_under(&vectors) {
            if path.extension().is_some_and(|e| e != "lock") {
                std::fs::write(&path, vec![0x5Au8; bytes]).expect("damage a file");
            }
        }
        let out = w.run(&["data", "check", "--json"]);
        assert!(out.status.success(), "{damage}: {}", stderr(&out));
        let after: Value = serde_json::from_slice(&out.stdout).expect("check JSON");
        assert_eq!(
            (after["vectors"].clone(), after["problems"].clone()),
            (json!(2), json!([])),
            "{damage}: {}",
            stderr(&out)
        );
    }
    let found = w.ok(&["memory", "search", "bees"]);
    assert!(found.contains("bees"), "{found}");

    // A missing embedding model: memory still works by keyword, and the check says so.
    let gone = w.home.path().join("no-such-model");
    std::fs::write(
        w.home.path().join("config.toml"),
        format!(
            "[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {:?}\n",
            gone.display().to_string()
        ),
    )
    .expect("config");
    let out = w.run(&["memory", "search", "bees"]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("bees"),
        "keyword search still finds it: {}",
        stderr(&out)
    );
    let answer = w.run(&["ask", "What do I keep on the roof?"]);
    assert!(answer.status.success(), "{}", stderr(&answer));
}

/// An index the system will not let `echod` read is an outage, not damage: `data check`
/// says so, the files are left as they are (not rebuilt over), and the index is in use again
/// once the permission is back. Root reads any file, so `echod` runs without the
/// capabilities that let it ignore file modes (`setpriv`).
#[test]
fn a_vector_index_without_permission_is_reported_and_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    let w = indexed_world();
    assert_eq!(w.json(&["data", "check", "--json"])["vectors"], 2);

    let manifests: Vec<_> = files_under(&w.home.path().join("vectors"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "manifest"))
        .collect();
    assert!(!manifests.is_empty(), "the index has versions");
    let set_mode = |mode: u32| {
        for path in &manifests {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
    };
    set_mode(0o000);
    let out = run_by(
        "setpriv",
        &["--bounding-set=-dac_override,-dac_read_search"],
        &w.command(&["data", "check", "--json"]),
    )
    .output()
    .expect("setpriv");
    // Not rebuilt over: the very files are still there, still unreadable.
    for path in &manifests {
        let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0), "{} was rebuilt over", path.display());
    }
    set_mode(0o644);
    // A problem found: the check says so and exits with 1.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let check: Value = serde_json::from_slice(&out.stdout).expect("check JSON");
    assert_eq!(check["vectors"], Value::Null, "{check:#}");
    let problems = check["problems"].to_string();
    assert!(
        problems.contains("the vector index cannot be opened") && problems.contains("ermission"),
        "{check:#}"
    );

    // Permission back: the same index, whole.
    let after = w.json(&["data", "check", "--json"]);
    assert_eq!(
        (after["vectors"].clone(), after["problems"].clone()),
        (json!(2), json!([]))
    );
}

/// `command` on a machine whose keychains all refuse: no D-Bus session (so no Secret
/// Service), and every kernel keyutils call failed with EACCES.
fn keychains_refusing(command: &std::process::Command) -> std::process::Command {
    let mut refused = under_strace(
        command,
        &[
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "trace=add_key,keyctl,request_key",
            "-e",
            "inject=add_key,keyctl,request_key:error=EACCES",
        ],
    );
    refused.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    refused
}

#[test]
fn keychains_that_refuse_are_a_clear_error_and_a_key_from_the_environment_still_works() {
    use std::process::Stdio;
    const KEY: &str = "sk-canary-refused-keychain-8h2c";
    let w = World::new(json!({"api_key": KEY, "steps": [], "default": {"text": "Noted."}}));
    let config = || std::fs::read(w.home.path().join("config.toml")).expect("config");
    let before = config();

    // Saving a key (what Settings and `provider set --key-stdin` do) fails where it is met,
    // in one line that says why and where a key can come from instead; nothing is saved.
    let set = output_with_line(
        &mut keychains_refusing(&w.command(&[
            "provider",
            "set",
            "--model",
            "other",
            "--key-stdin",
        ])),
        KEY,
    );
    let run = Run {
        code: set.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&set.stdout).into_owned(),
        stderr: common::stderr(&set),
    };
    assert_clear_failure(
        &run,
        "provider set",
        &[
            "no keychain is available",
            "kernel keyutils",
            "ECHO_LLM_API_KEY",
        ],
    );
    assert_eq!(config(), before, "a refused key changes no setting");

    // The gateway says the same, as 503, and keeps nothing.
    let s = common::gateway::Server::start_command(&w, keychains_refusing(&w.command(&["serve"])));
    let settings = json!({"kind": "openai", "base_url": w.mock.base_url(), "model": "other",
        "fallback_models": []});
    let (status, text) = s.put(
        "/api/settings/provider",
        &json!({"settings": settings, "api_key": KEY}),
    );
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("no keychain is available"), "{text}");
    // strace 6.1 leaves its tracee running when it is killed: end the gateway first.
    let strace = s.child.id();
    let children = std::fs::read_to_string(format!("/proc/{strace}/task/{strace}/children"))
        .expect("the gateway under strace");
    for pid in children.split_whitespace() {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", pid])
            .status();
    }
    drop(s);
    assert_eq!(config(), before, "a refused key changes no setting");

    // A key from the environment works with every keychain refusing.
    let out = keychains_refusing(w.command(&["ask", "hello"]).env("ECHO_LLM_API_KEY", KEY))
        .stdin(Stdio::null())
        .output()
        .expect("run strace");
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Noted."));
    assert_eq!(
        files_containing(w.home.path(), KEY.as_bytes()),
        Vec::<String>::new()
    );

    // Once a keychain answers again (the test session's own), the key is kept and used.
    let set = output_with_line(&mut w.command(&["provider", "set", "--key-stdin"]), KEY);
    assert!(set.status.success(), "{}", common::stderr(&set));
    let out = w.run(&["ask", "hello again"]);
    w.ok(&["provider", "set", "--clear-key"]);
    assert!(
        out.status.success(),
        "the kept key is used: {}",
        common::stderr(&out)
    );
}

/// A Secret Service with no default keyring (gnome-keyring on a fresh account before anything
/// made a login keyring; what a fresh-clone CI run met on 2026-12-04 when the test session's
/// keyring daemon was replaced, docs/reliability.md): reading finds nothing, saving is refused.
/// The refusal is one line that says what is wrong and what to do, and no setting changes.
#[test]
fn a_keychain_with_no_default_keyring_says_so_and_what_to_do() {
    const KEY: &str = "sk-canary-no-default-keyring-5t1q";
    let w = World::new(noted());
    let before = std::fs::read(w.home.path().join("config.toml")).expect("config");
    let session = tempfile::tempdir().expect("a folder for the session");
    let (data, runtime) = (session.path().join("data"), session.path().join("runtime"));
    std::fs::create_dir(&data).expect("data folder");
    std::fs::create_dir(&runtime).expect("runtime folder");
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("runtime folder mode");
    let errors = session.path().join("echod.err");

    // `echod` in a D-Bus session of its own, where the system's service file starts
    // gnome-keyring on an empty data folder. Its stderr is kept apart from the bus's messages.
    let mut set = w.command(&["provider", "set", "--model", "other", "--key-stdin"]);
    set.env("XDG_DATA_HOME", &data)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("ECHOD_STDERR", &errors)
        .env_remove("DISPLAY");
    let own_stderr = run_by(
        "sh",
        &["-c", r#"shift; exec "$@" 2>"$ECHOD_STDERR""#, "sh"],
        &set,
    );
    let out = output_with_line(&mut run_by("dbus-run-session", &[], &own_stderr), KEY);
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: std::fs::read_to_string(&errors).unwrap_or_default(),
    };
    assert!(
        common::stderr(&out).contains("org.freedesktop.secrets"),
        "the bus started a Secret Service: {}",
        common::stderr(&out)
    );
    assert_clear_failure(
        &run,
        "provider set",
        &[
            "Secret Service",
            "has no default keyring",
            "Unlock it, or create a default keyring",
            "ECHO_LLM_API_KEY",
        ],
    );
    assert!(!run.stderr.contains(KEY), "{}", run.stderr);
    assert_eq!(
        std::fs::read(w.home.path().join("config.toml")).expect("config"),
        before,
        "a refused key changes no setting"
    );
}
