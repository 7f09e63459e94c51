//! The gate as a table of cases: hard-deny patterns, secret paths (with `..` and symlink
//! escapes), workspace roots, rules precedence, session vs always, risk defaults.

use echo_core::config::ToolsConfig;
use echo_gate::{DecidedBy, Policy, Request, Rule, RuleDecision, RuleScope};
use echo_tools::{Action, Risk};
use std::path::{Path, PathBuf};

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
    data: PathBuf,
    policy: Policy,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let home = root.join("home");
    let ws = home.join("ws");
    let outside = root.join("outside");
    let data = ws.join(".echo-data");
    for d in [
        &ws,
        &outside,
        &data.join("skills"),
        &home.join(".ssh"),
        &ws.join("notes"),
    ] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(home.join(".ssh/id_rsa"), "key").expect("write");
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), ws.join("innocent.txt")).expect("link");
    std::os::unix::fs::symlink(&outside, ws.join("out-link")).expect("link");
    std::os::unix::fs::symlink(home.join(".ssh"), ws.join("keys")).expect("link");
    let cfg = ToolsConfig {
        secret_paths: vec!["**/vault/**".into()],
        disabled: vec!["nuke".into()],
        ..ToolsConfig::default()
    };
    let policy = Policy::new(&cfg, &data, &ws, Some(home.clone())).expect("policy");
    World {
        _dir: dir,
        home,
        ws,
        outside,
        data,
        policy,
    }
}

fn cmd(c: &str) -> Action {
    Action {
        command: Some(c.into()),
        ..Action::default()
    }
}
fn read(p: impl Into<PathBuf>) -> Action {
    Action {
        reads: vec![p.into()],
        ..Action::default()
    }
}
fn write(p: impl Into<PathBuf>) -> Action {
    Action {
        writes: vec![p.into()],
        ..Action::default()
    }
}
fn host(h: &str) -> Action {
    Action {
        host: Some(h.into()),
        ..Action::default()
    }
}
fn server(s: &str) -> Action {
    Action {
        server: Some(s.into()),
        ..Action::default()
    }
}

fn rule(
    id: &str,
    tool: &str,
    pattern: Option<&str>,
    decision: RuleDecision,
    session: Option<&str>,
) -> Rule {
    Rule {
        id: id.into(),
        tool: tool.into(),
        pattern: pattern.map(str::to_string),
        decision,
        scope: if session.is_some() {
            RuleScope::Session
        } else {
            RuleScope::Always
        },
        session_id: session.map(str::to_string),
        created_by: "test".into(),
        created_at: "2026-01-01T00:00:00.000Z".into(),
    }
}

struct Case {
    name: &'static str,
    tool: &'static str,
    risk: Risk,
    action: Action,
    rules: Vec<Rule>,
    expect: (RuleDecision, DecidedBy),
}

use RuleDecision::{Allow, Ask, Deny};

fn cases(w: &World) -> Vec<Case> {
    let allow_all_shell = || vec![rule("r-all", "shell", None, Allow, None)];
    let c = |name, tool, risk, action, rules, expect| Case {
        name,
        tool,
        risk,
        action,
        rules,
        expect,
    };
    let h = |p: &str| w.home.join(p);
    let ws = |p: &str| w.ws.join(p);
    vec![
        // Hard-deny patterns win over any rule.
        c(
            "rm -rf /",
            "shell",
            Risk::Exec,
            cmd("rm -rf /"),
            allow_all_shell(),
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -rf ~",
            "shell",
            Risk::Exec,
            cmd("rm -rf ~"),
            allow_all_shell(),
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -fr ~/",
            "shell",
            Risk::Exec,
            cmd("rm -fr ~/"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "sudo rm -r --force /*",
            "shell",
            Risk::Exec,
            cmd("sudo rm -r --force /*"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -rf $HOME after cd",
            "shell",
            Risk::Exec,
            cmd("cd /tmp && rm -rf $HOME"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -rf ~ inside sh -c",
            "shell",
            Risk::Exec,
            cmd("bash -c 'rm -rf ~'"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -rf / in $(...)",
            "shell",
            Risk::Exec,
            cmd("echo \"$(rm -rf /)\""),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm --no-preserve-root",
            "shell",
            Risk::Exec,
            cmd("rm --no-preserve-root -rf /"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -rf /home/user",
            "shell",
            Risk::Exec,
            cmd("/bin/rm -Rf /home/someone"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "mkfs",
            "shell",
            Risk::Exec,
            cmd("mkfs.ext4 /dev/sda1"),
            allow_all_shell(),
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "dd onto a disk",
            "shell",
            Risk::Exec,
            cmd("dd if=/dev/zero of=/dev/sda bs=1M"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "redirect onto a disk",
            "shell",
            Risk::Exec,
            cmd("cat disk.img > /dev/sdb"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "fork bomb",
            "shell",
            Risk::Exec,
            cmd(":(){ :|:& };:"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "chmod -R 777 /",
            "shell",
            Risk::Exec,
            cmd("chmod -R 777 /"),
            vec![],
            (Deny, DecidedBy::HardDeny),
        ),
        c(
            "rm -rf ./build only asks",
            "shell",
            Risk::Exec,
            cmd("rm -rf ./build"),
            vec![],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "dd to /dev/null only asks",
            "shell",
            Risk::Exec,
            cmd("dd if=/dev/zero of=/dev/null count=1"),
            vec![],
            (Ask, DecidedBy::Risk),
        ),
        // Secret paths are never read or written.
        c(
            "read ~/.ssh/id_rsa",
            "read_file",
            Risk::ReadOnly,
            read(h(".ssh/id_rsa")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read ~ path unexpanded",
            "read_file",
            Risk::ReadOnly,
            read("~/.ssh/id_rsa"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read ~/.aws/credentials",
            "read_file",
            Risk::ReadOnly,
            read(h(".aws/credentials")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "list ~/.gnupg",
            "list_dir",
            Risk::ReadOnly,
            read(h(".gnupg")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read .env",
            "read_file",
            Risk::ReadOnly,
            read(ws(".env")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read .env.production",
            "read_file",
            Risk::ReadOnly,
            read(ws("app/.env.production")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read .env.example is fine",
            "read_file",
            Risk::ReadOnly,
            read(ws(".env.example")),
            vec![],
            (Allow, DecidedBy::Risk),
        ),
        c(
            "id_ed25519.pub is public",
            "read_file",
            Risk::ReadOnly,
            read(ws("id_ed25519.pub")),
            vec![],
            (Allow, DecidedBy::Risk),
        ),
        c(
            "read ~/.netrc",
            "read_file",
            Risk::ReadOnly,
            read(h(".netrc")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read a keychain",
            "read_file",
            Risk::ReadOnly,
            read(h("Library/Keychains/login.keychain-db")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read /etc/shadow",
            "read_file",
            Risk::ReadOnly,
            read("/etc/shadow"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            ".. escape to ~/.ssh",
            "read_file",
            Risk::ReadOnly,
            read("../.ssh/id_rsa"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "symlink to a key",
            "read_file",
            Risk::ReadOnly,
            read(ws("innocent.txt")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "symlinked dir of keys",
            "read_file",
            Risk::ReadOnly,
            read("keys/id_rsa"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "secret wins over an allow rule",
            "read_file",
            Risk::ReadOnly,
            read(h(".ssh/config")),
            vec![rule("r-read", "read_file", None, Allow, None)],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "configured secret glob",
            "read_file",
            Risk::ReadOnly,
            read(ws("vault/token.txt")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "shell reads a key",
            "shell",
            Risk::Exec,
            cmd("cat ~/.ssh/id_rsa"),
            allow_all_shell(),
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "shell writes aws creds",
            "shell",
            Risk::Exec,
            cmd("cp creds ~/.aws/credentials"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "shell sources .env",
            "shell",
            Risk::Exec,
            cmd("source .env && run"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        // Writes only inside the workspace roots; the assistant's own data is off limits.
        c(
            "write outside via ..",
            "write_file",
            Risk::Write,
            write("../../outside/x.txt"),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "write outside via symlink",
            "write_file",
            Risk::Write,
            write(ws("out-link/x.txt")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "write /etc/passwd",
            "write_file",
            Risk::Write,
            write("/etc/passwd"),
            vec![rule("r-w", "write_file", None, Allow, None)],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "write outside dir",
            "edit_file",
            Risk::Write,
            write(w.outside.join("a.txt")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "write the app's config",
            "write_file",
            Risk::Write,
            write(w.data.join("config.toml")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "read the app's database",
            "read_file",
            Risk::ReadOnly,
            read(w.data.join("echo.db")),
            vec![],
            (Deny, DecidedBy::PathPolicy),
        ),
        c(
            "skills folder may be written, asks",
            "skill_manage",
            Risk::Dangerous,
            write(w.data.join("skills/x/SKILL.md")),
            vec![],
            (Ask, DecidedBy::Risk),
        ),
        // Risk defaults when no rule matches.
        c(
            "read in workspace",
            "read_file",
            Risk::ReadOnly,
            read(ws("src/main.rs")),
            vec![],
            (Allow, DecidedBy::Risk),
        ),
        c(
            "write in workspace asks",
            "write_file",
            Risk::Write,
            write(ws("src/main.rs")),
            vec![],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "network asks",
            "web_fetch",
            Risk::Network,
            host("example.com"),
            vec![],
            (Ask, DecidedBy::Risk),
        ),
        // Rules: command prefixes.
        c(
            "allow git status",
            "shell",
            Risk::Exec,
            cmd("git status -s"),
            vec![rule("r-gs", "shell", Some("git status"), Allow, None)],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "prefix is word-wise",
            "shell",
            Risk::Exec,
            cmd("git stash"),
            vec![rule("r-gs", "shell", Some("git status"), Allow, None)],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "every command must be covered",
            "shell",
            Risk::Exec,
            cmd("git status; rm -rf build"),
            vec![rule("r-gs", "shell", Some("git status"), Allow, None)],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "pipeline fully covered",
            "shell",
            Risk::Exec,
            cmd("git status && git log | head"),
            vec![
                rule("r-gs", "shell", Some("git status"), Allow, None),
                rule("r-gl", "shell", Some("git log"), Allow, None),
                rule("r-h", "shell", Some("head"), Allow, None),
            ],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "trailing * prefix",
            "shell",
            Risk::Exec,
            cmd("npm run test:unit"),
            vec![rule("r-npm", "shell", Some("npm run test*"), Allow, None)],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "deny beats allow",
            "shell",
            Risk::Exec,
            cmd("git push origin main"),
            vec![
                rule("r-git", "shell", Some("git"), Allow, None),
                rule("r-push", "shell", Some("git push"), Deny, None),
            ],
            (Deny, DecidedBy::Rule),
        ),
        c(
            "ask beats allow",
            "shell",
            Risk::Exec,
            cmd("rm notes.txt"),
            vec![
                rule("r-any", "shell", Some("*"), Allow, None),
                rule("r-rm", "shell", Some("rm"), Ask, None),
            ],
            (Ask, DecidedBy::Rule),
        ),
        c(
            "deny beats ask",
            "shell",
            Risk::Exec,
            cmd("curl https://x"),
            vec![
                rule("r-a", "shell", Some("curl"), Ask, None),
                rule("r-d", "shell", None, Deny, None),
            ],
            (Deny, DecidedBy::Rule),
        ),
        // Session vs always.
        c(
            "another session's rule does not apply",
            "shell",
            Risk::Exec,
            cmd("make"),
            vec![rule("r-s", "shell", Some("make"), Allow, Some("other"))],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "this session's rule applies",
            "shell",
            Risk::Exec,
            cmd("make"),
            vec![rule("r-s", "shell", Some("make"), Allow, Some("s1"))],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "always rule applies everywhere",
            "shell",
            Risk::Exec,
            cmd("make test"),
            vec![rule("r-a", "shell", Some("make"), Allow, None)],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "session deny beats always allow",
            "shell",
            Risk::Exec,
            cmd("make"),
            vec![
                rule("r-a", "shell", Some("make"), Allow, None),
                rule("r-s", "shell", Some("make"), Deny, Some("s1")),
            ],
            (Deny, DecidedBy::Rule),
        ),
        // Rules: paths, hosts, servers.
        c(
            "path glob allows",
            "write_file",
            Risk::Write,
            write(ws("notes/a.md")),
            vec![rule(
                "r-n",
                "write_file",
                Some(&format!("{}/notes/**", w.ws.display())),
                Allow,
                None,
            )],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "path glob does not cover other dirs",
            "write_file",
            Risk::Write,
            write(ws("src/a.rs")),
            vec![rule(
                "r-n",
                "write_file",
                Some(&format!("{}/notes/**", w.ws.display())),
                Allow,
                None,
            )],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "relative glob matches at any depth",
            "edit_file",
            Risk::Write,
            write(ws("docs/readme.md")),
            vec![rule("r-md", "edit_file", Some("*.md"), Allow, None)],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "plain dir pattern covers below",
            "write_file",
            Risk::Write,
            write(ws("notes/x/y.txt")),
            vec![rule(
                "r-d",
                "write_file",
                Some(&w.ws.join("notes").display().to_string()),
                Allow,
                None,
            )],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "read-only tool can be denied by a rule",
            "read_file",
            Risk::ReadOnly,
            read(ws("private/a.txt")),
            vec![rule("r-p", "read_file", Some("**/private/**"), Deny, None)],
            (Deny, DecidedBy::Rule),
        ),
        c(
            "host rule allows subdomain",
            "web_fetch",
            Risk::Network,
            host("docs.example.com"),
            vec![rule("r-h", "web_fetch", Some("*.example.com"), Allow, None)],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "host rule does not allow others",
            "web_fetch",
            Risk::Network,
            host("example.com.evil.io"),
            vec![rule("r-h", "web_fetch", Some("*.example.com"), Allow, None)],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "MCP server rule via tool glob",
            "github__create_issue",
            Risk::Exec,
            server("github"),
            vec![rule("r-g", "github__*", Some("github"), Allow, None)],
            (Allow, DecidedBy::Rule),
        ),
        c(
            "MCP rule for another server",
            "gitlab__create_issue",
            Risk::Exec,
            server("gitlab"),
            vec![rule("r-g", "github__*", None, Allow, None)],
            (Ask, DecidedBy::Risk),
        ),
        // Dangerous tools always ask unless denied; disabled tools are refused.
        c(
            "dangerous asks despite allow",
            "skill_manage",
            Risk::Dangerous,
            Action::default(),
            vec![rule("r-sk", "skill_manage", None, Allow, None)],
            (Ask, DecidedBy::Risk),
        ),
        c(
            "dangerous can be denied",
            "skill_manage",
            Risk::Dangerous,
            Action::default(),
            vec![rule("r-sk", "skill_manage", None, Deny, None)],
            (Deny, DecidedBy::Rule),
        ),
        c(
            "disabled tool",
            "nuke",
            Risk::ReadOnly,
            Action::default(),
            vec![],
            (Deny, DecidedBy::Disabled),
        ),
    ]
}

#[test]
fn gate_table() {
    let w = world();
    let cases = cases(&w);
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let v = w.policy.evaluate(
            &Request {
                tool: case.tool,
                risk: case.risk,
                action: &case.action,
                session_id: "s1",
                workdir: &w.ws,
                roots: &[],
            },
            &case.rules,
        );
        if (v.decision, v.by) != case.expect {
            failures.push(format!(
                "{}: expected {:?}, got {:?} by {:?} ({})",
                case.name, case.expect, v.decision, v.by, v.reason
            ));
        }
        if v.by == DecidedBy::Rule {
            assert!(
                v.rule_id.is_some(),
                "{}: a rule decision names its rule",
                case.name
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn tools_denied_outright_are_not_offered() {
    let w = world();
    let rules = vec![
        rule("r-1", "shell", None, Deny, None),
        rule("r-2", "web_fetch", Some("evil.com"), Deny, None),
        rule("r-3", "write_file", None, Deny, Some("other")),
    ];
    assert!(!w.policy.offered("shell", &rules, "s1"));
    assert!(
        !w.policy.offered("nuke", &rules, "s1"),
        "disabled in settings"
    );
    assert!(
        w.policy.offered("web_fetch", &rules, "s1"),
        "a pattern rule only denies some calls"
    );
    assert!(
        w.policy.offered("write_file", &rules, "s1"),
        "another session's rule"
    );
    assert!(!w.policy.offered("write_file", &rules, "other"));
}

#[test]
fn reasons_say_what_was_wrong() {
    let w = world();
    let v = w.policy.evaluate(
        &Request {
            tool: "write_file",
            risk: Risk::Write,
            action: &write(Path::new("/etc/passwd")),
            session_id: "s1",
            workdir: &w.ws,
            roots: &[],
        },
        &[],
    );
    assert!(
        v.reason.contains("outside the workspace roots"),
        "{}",
        v.reason
    );
    assert!(v.reason.contains("tools.workspace_roots"), "{}", v.reason);
    let v = w.policy.evaluate(
        &Request {
            tool: "shell",
            risk: Risk::Exec,
            action: &cmd("rm -rf ~"),
            session_id: "s1",
            workdir: &w.ws,
            roots: &[],
        },
        &[],
    );
    assert!(
        v.reason.contains("recursive removal of `~`"),
        "{}",
        v.reason
    );
}
