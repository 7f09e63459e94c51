//! The Debian package as a person gets it. `scripts/package.sh --profile debug --no-build`
//! packages this test build's `echo-desk` with Tauri's bundler; the test installs the package
//! with apt, checks what it put where (one engine binary under two names, the launcher entry
//! with its icon and "Quick ask" action, dependencies that cover every library the binary
//! links, no web UI files beside the binary), starts the installed app from a fresh home
//! under `tauri-driver`, chats with the scripted mock model in its window, opens quick ask
//! through the launcher action's command line (a second start, handed to the running app),
//! reads the conversation back with the installed `echod`, then removes the package and
//! checks that none of its files is left and that the app wrote nothing outside the person's
//! data directory.
//!
//! Installing needs root: the test runs its package commands directly as root (CI) and
//! through `sudo -n` otherwise. It refuses to touch a machine where an `echo-desk` package
//! is already installed. Needs what `desktop.rs` needs (Xvfb, D-Bus, `tauri-driver`).

mod support;

use echo_mock_model::MockServer;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use support::{LAST_ASSISTANT, STEP, app_pids, connect, send, start_driver, until};

/// The package's name (`heck`'s kebab case of the product name, as the bundler writes it).
const PACKAGE: &str = "echo-desk";
const INSTALLED_APP: &str = "/usr/bin/echo-desk";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs `program args` and fails the test, with its output, when it fails.
fn run(program: &str, args: &[&str]) -> Output {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?}: {}\n{}{}",
        output.status,
        text(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn is_root() -> bool {
    text(&run("id", &["-u"])).trim() == "0"
}

/// Runs a package command as root: directly when the test is root, else through `sudo -n`.
fn as_root(args: &[&str]) -> Output {
    if is_root() {
        run(args[0], &args[1..])
    } else {
        let mut with_sudo = vec!["-n"];
        with_sudo.extend_from_slice(args);
        run("sudo", &with_sudo)
    }
}

fn package_installed() -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", PACKAGE])
        .output()
        .is_ok_and(|o| text(&o).contains("install ok installed"))
}

/// Removes the package at the end whatever happens, so a failed run leaves no install.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        if package_installed() {
            let _ = Command::new(if is_root() { "apt-get" } else { "sudo" })
                .args(if is_root() {
                    vec!["purge", "-y", PACKAGE]
                } else {
                    vec!["-n", "apt-get", "purge", "-y", PACKAGE]
                })
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status();
        }
    }
}

/// Every file (not directory) under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                found.insert(rel.to_path_buf());
            }
        }
    }
    found
}

/// A `dpkg-deb -c` line's size and absolute path (`-rwxr-xr-x 0/0 SIZE DATE TIME PATH`; a path
/// may hold spaces).
fn listed(line: &str) -> Option<(u64, String)> {
    let mut rest = line.trim_start();
    let mut fields = Vec::new();
    for _ in 0..5 {
        let end = rest.find(char::is_whitespace)?;
        fields.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    let path = rest.trim_start_matches("./");
    Some((fields[2].parse().ok()?, format!("/{path}")))
}

/// The package's own files (not directories), from `dpkg-deb -c`.
fn package_files(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|line| !line.starts_with('d'))
        .filter_map(|line| listed(line).map(|(_, path)| path))
        .collect()
}

/// Packages that every library `binary` links comes from, by `ldd` and `dpkg -S`.
fn linked_library_packages(binary: &str) -> BTreeSet<String> {
    let ldd = text(&run("ldd", &[binary]));
    assert!(
        !ldd.contains("not found"),
        "{binary} links a library the system does not have:\n{ldd}"
    );
    let mut packages = BTreeSet::new();
    for line in ldd.lines() {
        let Some((_, after)) = line.split_once("=> ") else {
            continue;
        };
        let Some(path) = after.split_whitespace().next() else {
            continue;
        };
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
        // dpkg knows a library by the path its package installed, which may be either.
        let owner = [path.to_string(), real.to_string_lossy().into_owned()]
            .iter()
            .find_map(|p| {
                let out = Command::new("dpkg").args(["-S", p]).output().ok()?;
                out.status.success().then(|| text(&out))
            })
            .unwrap_or_else(|| panic!("no package owns {path} (linked by {binary})"));
        let name = owner.split(':').next().unwrap_or_default().trim();
        packages.insert(name.to_string());
    }
    packages
}

/// The package's dependencies and everything they depend on, as apt resolves them.
fn dependency_closure() -> BTreeSet<String> {
    let out = run(
        "apt-cache",
        &[
            "depends",
            "--recurse",
            "--installed",
            "--no-recommends",
            "--no-suggests",
            "--no-conflicts",
            "--no-breaks",
            "--no-replaces",
            "--no-enhances",
            PACKAGE,
        ],
    );
    text(&out)
        .lines()
        .filter_map(|line| {
            let line = line.trim().trim_start_matches('|');
            let name = line
                .strip_prefix("Depends:")
                .or_else(|| line.strip_prefix("PreDepends:"))
                .map(str::trim)
                .unwrap_or(line);
            let name = name.trim_matches(|c| c == '<' || c == '>');
            let name = name.split(':').next()?.trim();
            (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
        })
        .collect()
}

/// Runs an installed command as the person whose home is `home` (their default data
/// directory), and fails the test, with its stderr, when it fails.
fn as_person<'a>(home: &Path, program: &str, args: impl IntoIterator<Item = &'a str>) -> String {
    let args: Vec<&str> = args.into_iter().collect();
    let output = Command::new(program)
        .args(&args)
        .env("HOME", home)
        .env_remove("ECHO_DESK_HOME")
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap_or_else(|e| panic!("{program} on the PATH, from the package: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    text(&output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_package_installs_opens_from_its_launcher_entry_chats_and_uninstalls_cleanly() {
    assert!(
        !package_installed(),
        "an {PACKAGE} package is already installed on this machine; this test installs and \
         removes its own, so remove that one first (apt-get remove {PACKAGE})"
    );

    // The package, from the binary this test build made: nothing is compiled again.
    let packaged = run(
        "bash",
        &[
            &repo().join("scripts/package.sh").to_string_lossy(),
            "--profile",
            "debug",
            "--no-build",
        ],
    );
    let deb = text(&packaged)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(deb.ends_with("_amd64.deb"), "the package's path: {deb:?}");
    let listing = text(&run("dpkg-deb", &["-c", &deb]));
    eprintln!("{deb}:\n{listing}");
    let files = package_files(&listing);
    for wanted in [
        INSTALLED_APP,
        "/usr/bin/echod",
        "/usr/share/icons/hicolor/128x128/apps/echo-desk.png",
    ] {
        assert!(files.iter().any(|f| f == wanted), "{wanted} in the package");
    }
    let desktop_files: Vec<&String> = files
        .iter()
        .filter(|f| f.starts_with("/usr/share/applications/") && f.ends_with(".desktop"))
        .collect();
    assert_eq!(desktop_files.len(), 1, "one launcher entry: {files:?}");
    // One engine binary: the web UI is inside it, and no model or second binary comes along.
    let binaries: Vec<&String> = files
        .iter()
        .filter(|f| f.starts_with("/usr/bin/"))
        .collect();
    assert_eq!(binaries.len(), 2, "echo-desk and echod: {binaries:?}");
    let echod_size = listing
        .lines()
        .filter_map(listed)
        .find_map(|(size, path)| (path == "/usr/bin/echod").then_some(size))
        .expect("echod's size in the listing");
    assert!(
        echod_size < 4096,
        "/usr/bin/echod starts echo-desk, it is not a second engine ({echod_size} bytes)"
    );
    for f in &files {
        assert!(
            !f.ends_with(".html") && !f.ends_with(".js") && !f.ends_with(".gguf"),
            "{f}: the web UI is built into the binary and models are downloaded on use"
        );
    }
    let depends = text(&run("dpkg-deb", &["-f", &deb, "Depends"]));
    eprintln!("Depends: {depends}");

    // Installed as a person installs a downloaded package.
    let _installed = Installed;
    as_root(&[
        "env",
        "DEBIAN_FRONTEND=noninteractive",
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        &deb,
    ]);
    assert!(package_installed(), "dpkg says {PACKAGE} is installed");
    let on_path = text(&run(
        "sh",
        &["-c", "command -v echo-desk; command -v echod"],
    ));
    assert_eq!(
        on_path.lines().collect::<Vec<_>>(),
        [INSTALLED_APP, "/usr/bin/echod"],
        "both commands on the PATH"
    );

    // Every library the binary links comes through the package's declared dependencies.
    let closure = dependency_closure();
    let missing: Vec<String> = linked_library_packages(INSTALLED_APP)
        .into_iter()
        .filter(|p| !closure.contains(p))
        .collect();
    assert!(
        missing.is_empty(),
        "linked, but not among the package's dependencies (Depends: {depends}): {missing:?}"
    );

    // The launcher entry: name, icon, the app, and the "Quick ask" action.
    let entry = std::fs::read_to_string(desktop_files[0]).expect("the launcher entry");
    eprintln!("{}:\n{entry}", desktop_files[0]);
    let value = |section: &str, key: &str| -> Option<String> {
        let body = entry.split(&format!("[{section}]\n")).nth(1)?;
        let body = body.split("\n[").next()?;
        body.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .map(str::to_string)
    };
    assert_eq!(value("Desktop Entry", "Name").as_deref(), Some("Echo Desk"));
    assert_eq!(value("Desktop Entry", "Exec").as_deref(), Some("echo-desk"));
    let icon = value("Desktop Entry", "Icon").expect("an icon");
    assert!(
        Path::new(&format!("/usr/share/icons/hicolor/128x128/apps/{icon}.png")).is_file(),
        "the entry's icon {icon} is installed"
    );
    assert_eq!(
        value("Desktop Entry", "Actions").as_deref(),
        Some("quick-ask;")
    );
    assert_eq!(
        value("Desktop Action quick-ask", "Name").as_deref(),
        Some("Quick ask")
    );
    let quick_ask_exec = value("Desktop Action quick-ask", "Exec").expect("the action's command");

    // `echod` from the package is the engine's CLI.
    let version = text(&run("echod", &["--version"]));
    assert_eq!(
        version.trim(),
        format!("echod {}", env!("CARGO_PKG_VERSION"))
    );
    // ... without the development tools: the benchmark and replay commands end with an
    // error saying where they are, and none of the benchmark crate's or the mock model's
    // code is in the binary (a linked function leaves its source path in the binary's panic
    // locations, stripped or not).
    for tool in [&["bench", "overhead"][..], &["replay", "case.json"][..]] {
        let out = Command::new("echod")
            .args(tool)
            .output()
            .expect("echod runs");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && said.contains("is a development tool"),
            "the installed `echod {}` is refused: {}{said}",
            tool[0],
            text(&out)
        );
    }
    let binary = std::fs::read(INSTALLED_APP).expect("the installed binary");
    for source in ["crates/echo-bench/src", "tests/mock-model/src"] {
        assert!(
            !binary.windows(source.len()).any(|w| w == source.as_bytes()),
            "{INSTALLED_APP} links code from {source}"
        );
    }

    // The installed app, started from a fresh home as the launcher starts it, chats in its
    // window.
    let mock = MockServer::start(json!({ "steps": [
        { "model": "primary", "text": "Hello from the installed app.", "chunks": 4, "chunk_delay_ms": 30 }
    ] }))
    .expect("mock model");
    let home = tempfile::tempdir().expect("a fresh home");
    let work = tempfile::tempdir().expect("work dir");
    let data = home.path().join(".local/share/echo-desk");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(
        data.join("config.toml"),
        "[side]\nmodel = \"none\"\n[memory]\nextraction = false\nembedder = \"none\"\n",
    )
    .expect("config");
    let driver = start_driver(
        Path::new(INSTALLED_APP),
        &[("HOME", home.path().as_os_str())],
        work.path(),
        &mock,
    );
    let client = connect(&driver).await;
    support::composer_ready(&client).await;
    send(&client, "Hello there").await;
    until(
        &client,
        "the answer",
        &format!("{LAST_ASSISTANT} return !!last && last.dataset.status === 'completed' && last.textContent.includes('installed app')"),
    )
    .await;

    // The launcher's "Quick ask" action is a second start: it hands the request to the app
    // already running and exits, and the app opens its quick-ask window.
    let mut words = quick_ask_exec.split_whitespace();
    let program = words.next().expect("a program");
    let started = Instant::now();
    as_person(home.path(), program, words);
    eprintln!("second start handed over in {:?}", started.elapsed());
    support::wait_for_windows(&client, 2).await;
    assert_eq!(
        app_pids(Path::new(INSTALLED_APP)).len(),
        1,
        "the second start did not stay"
    );

    // Quit, and read the conversation back with the installed echod.
    for pid in app_pids(Path::new(INSTALLED_APP)) {
        run("kill", &["-TERM", &pid.to_string()]);
    }
    let start = Instant::now();
    while !app_pids(Path::new(INSTALLED_APP)).is_empty() {
        assert!(start.elapsed() < STEP, "the app did not quit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(client);
    drop(driver);
    let sessions = as_person(home.path(), "echod", ["sessions", "list", "--json"]);
    let sessions: serde_json::Value = serde_json::from_str(&sessions).expect("sessions JSON");
    let name = sessions[0]["name"]
        .as_str()
        .expect("the chat's session")
        .to_string();
    let history = as_person(home.path(), "echod", ["history", name.as_str()]);
    assert!(
        history.contains("Hello there") && history.contains("Hello from the installed app."),
        "the window's conversation, read by the installed echod:\n{history}"
    );

    // What the app wrote lives in the person's data directory, nowhere else in their home
    // (WebKit's storage included). The desktop's own caches, which every GTK and GL program
    // shares, are not the app's.
    const DESKTOP_CACHES: &[&str] = &[
        ".cache/dconf",
        ".cache/fontconfig",
        ".cache/mesa_shader_cache",
    ];
    let outside: Vec<PathBuf> = files_under(home.path())
        .into_iter()
        .filter(|f| !f.starts_with(".local/share/echo-desk"))
        .filter(|f| !DESKTOP_CACHES.iter().any(|c| f.starts_with(c)))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the data directory: {outside:?}"
    );

    // Removed as a person removes it: none of the package's files is left.
    as_root(&[
        "env",
        "DEBIAN_FRONTEND=noninteractive",
        "apt-get",
        "remove",
        "-y",
        PACKAGE,
    ]);
    assert!(!package_installed(), "dpkg says {PACKAGE} is gone");
    let left: Vec<&String> = files.iter().filter(|f| Path::new(f).exists()).collect();
    assert!(left.is_empty(), "left after removal: {left:?}");
    assert!(
        Command::new("sh")
            .args(["-c", "command -v echo-desk || command -v echod"])
            .output()
            .is_ok_and(|o| text(&o).trim().is_empty()),
        "neither command is on the PATH after removal"
    );
}
