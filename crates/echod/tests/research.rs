//! The research path through the real `echod` binary, against a scripted search service and
//! page server on loopback and the mock model: a cited report whose every citation is a
//! page that holds its quote and that the support check did not reject (a check that cannot
//! be made is said in the report); a process killed mid-run resumed without running a finished
//! node again; a search service that hangs ending in a partial report within the time
//! limit, and counted by `echod trace stats`; Stop (Ctrl-C) ending in a partial report; the
//! trace's nodes; the person's memories as a source, cited as theirs; the search service
//! chosen with `echod search set` (as Settings does), its
//! key kept in the keychain only; a project's instructions in the plan and the report; the
//! files in a project's folder as a source, cited as the person's; the planner's verdict on
//! a question the triage rules cannot place.

mod common;

use common::*;
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The sentence every page holds, which the scripted notes quote.
const EVIDENCE: &str = "Family rooms cost 120 EUR a night.";
/// A quote the model makes up: in no page, so it must not survive.
const MADE_UP: &str = "Kyoto has a space elevator.";

/// A SearXNG-like search service and the pages it finds, on one loopback port: `/search?q=`
/// answers two pages per query (and so does Brave Search's `/res/v1/web/search`, in its
/// format), `/page/N` a page. Every request's head is logged; with `hang_search` set,
/// searches get no answer.
struct Web {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
    hang_search: Arc<AtomicBool>,
}

impl Web {
    fn start() -> Web {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let hang_search = Arc::new(AtomicBool::new(false));
        let (log, hang, base) = (asked.clone(), hang_search.clone(), url.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (log, hang, base) = (log.clone(), hang.clone(), base.clone());
                std::thread::spawn(move || serve(stream, &log, &hang, &base));
            }
        });
        Web {
            url,
            asked,
            hang_search,
        }
    }

    /// The targets of the requests whose target starts with `prefix`.
    fn asked(&self, prefix: &str) -> Vec<String> {
        let asked = self.asked.lock().expect("lock");
        asked
            .iter()
            .filter_map(|head| head.split_whitespace().nth(1))
            .filter(|t| t.starts_with(prefix))
            .map(String::from)
            .collect()
    }

    /// The heads of every request so far.
    fn heads(&self) -> Vec<String> {
        self.asked.lock().expect("lock").clone()
    }
}

fn page(n: usize) -> String {
    format!(
        "<!doctype html><html><head><title>Kyoto page {n}</title></head><body>\
         <h1>Kyoto page {n}</h1><p>{EVIDENCE}</p><p>The train from the station takes \
         {n}0 minutes.</p></body></html>"
    )
}

fn serve(mut stream: std::net::TcpStream, log: &Mutex<Vec<String>>, hang: &AtomicBool, base: &str) {
    let Some(head) = request_head(&mut stream) else {
        return;
    };
    log.lock().expect("lock").push(head.clone());
    let target = head.split_whitespace().nth(1).unwrap_or_default();
    let brave = target.starts_with("/res/v1/web/search");
    let (kind, body) = if target.starts_with("/search") || brave {
        if hang.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
        // Hotels are on pages 1 and 2, trains on 3 and 4.
        let first = if target.contains("train") { 3 } else { 1 };
        let results: Vec<Value> = (first..first + 2)
            .map(|n| {
                json!({ "title": format!("Kyoto page {n}"), "url": format!("{base}/page/{n}"),
                        "content": "about Kyoto", "description": "about Kyoto",
                        "publishedDate": "2026-03-01" })
            })
            .collect();
        let answer = if brave {
            json!({ "web": { "results": results } })
        } else {
            json!({ "results": results })
        };
        ("application/json", answer.to_string())
    } else if let Some(n) = target.strip_prefix("/page/") {
        ("text/html", page(n.parse().unwrap_or(0)))
    } else {
        ("text/plain", String::new())
    };
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn plan_step() -> Value {
    let plan = json!({ "sub_questions": [
        { "question": "kyoto family hotels", "look_for": "price a night" },
        { "question": "kyoto trains", "look_for": "minutes" },
    ]});
    json!({ "when_tool": "research_plan",
            "tool_calls": [{ "id": "p1", "name": "research_plan", "arguments": plan.to_string() }] })
}

fn notes_step() -> Value {
    let notes = json!({ "notes": [
        { "quote": EVIDENCE, "supports": "the price of a family room" },
        { "quote": MADE_UP, "supports": "nothing" },
    ]});
    json!({ "when_tool": "research_notes", "times": 4,
            "tool_calls": [{ "id": "n1", "name": "research_notes", "arguments": notes.to_string() }] })
}

/// The support check's answer: the (claim, note) citations it finds unsupported. It stands
/// before the untagged steps of a script, so only the check's request takes it.
fn check_step(unsupported: Value) -> Value {
    let answer = json!({ "unsupported": unsupported }).to_string();
    json!({ "when_tool": "research_check", "times": 5,
            "tool_calls": [{ "id": "c1", "name": "research_check", "arguments": answer }] })
}

const REPORT: &str = "Short answer: a family room fits the budget [1].\n\n## Trains\n\nTrains are \
                      quick [3][2]. A claim with no note [9].";

fn research_world(report: Value, config: &str) -> World {
    let w = World::with_config(
        json!({ "steps": [plan_step(), notes_step(), check_step(json!([])), report] }),
        config,
    );
    for tool in ["web_search", "web_fetch"] {
        w.ok(&["rules", "add", "--tool", tool, "--decision", "allow"]);
    }
    w
}

fn ask(w: &World, web: &Web, args: &[&str]) -> std::process::Command {
    let mut cmd = w.command(args);
    cmd.env("ECHO_SEARCH_KIND", "searxng")
        .env("ECHO_SEARCH_URL", &web.url);
    cmd
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn final_text(events: &[Value]) -> String {
    let finals = of_type(events, "final");
    assert_eq!(finals.len(), 1, "{events:?}");
    finals[0]["text"].as_str().unwrap_or_default().to_string()
}

/// The report's sources: (number, quote, url) of each `[^n]: “quote” — [title](url), …`.
fn sources(report: &str) -> Vec<(String, String, String)> {
    report
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("[^")?;
            let (number, rest) = rest.split_once("]: “")?;
            let (quote, rest) = rest.split_once("” — [")?;
            let url = rest.split_once("](")?.1.split_once(')')?.0;
            Some((number.to_string(), quote.to_string(), url.to_string()))
        })
        .collect()
}

/// `echod ask --research --events` started and left running once its report is asked for
/// (the script's report step hangs): plan, searches and reads are done by then.
fn research_until_the_report(w: &World, web: &Web) -> std::process::Child {
    let child = ask(
        w,
        web,
        &["ask", "--research", "--events", "plan three days in kyoto"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn");
    wait_for("the report call", Duration::from_secs(60), || {
        w.requests()
            .iter()
            .any(|r| r["tools"].as_array().is_none_or(Vec::is_empty))
    });
    child
}

/// Model requests that offered `tool`.
fn calls_offering(w: &World, tool: &str) -> usize {
    w.requests()
        .iter()
        .filter(|r| {
            r["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == tool))
        })
        .count()
}

#[test]
fn a_research_turn_cites_only_pages_that_hold_each_quote_and_traces_its_nodes() {
    let web = Web::start();
    // The support check finds note 2 does not support claim 2 ("Trains are quick [3][2].").
    let w = World::with_config(
        json!({ "steps": [
            plan_step(), notes_step(), check_step(json!([{ "claim": 2, "note": 2 }])),
            { "text": REPORT },
        ]}),
        "",
    );
    for tool in ["web_search", "web_fetch"] {
        w.ok(&["rules", "add", "--tool", tool, "--decision", "allow"]);
    }
    let out = ask(
        &w,
        &web,
        &[
            "ask",
            "--research",
            "--events",
            "plan three days in kyoto with kids",
        ],
    )
    .output()
    .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&String::from_utf8_lossy(&out.stdout));
    let report = final_text(&events);

    // Every citation is a footnote whose source is a page served here holding the quote;
    // the one the check found unsupported is gone, from the sentence and the sources.
    let cited = sources(&report);
    assert_eq!(
        cited.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["1", "3"],
        "{report}"
    );
    let served = web.asked("/page/");
    for (_, quote, url) in &cited {
        let path = url.strip_prefix(&web.url).unwrap_or_default();
        assert!(
            served.iter().any(|s| s == path),
            "{url} never fetched: {served:?}"
        );
        let n: usize = path
            .trim_start_matches("/page/")
            .parse()
            .expect("page number");
        assert!(page(n).contains(quote.as_str()), "{quote} not in {url}");
    }
    assert!(
        report.contains("budget [^1]")
            && report.contains("quick [^3].")
            && !report.contains("[^2]"),
        "{report}"
    );
    // The check was shown each citing sentence with its notes' quotes.
    let check = w
        .requests()
        .into_iter()
        .find(|r| offered(r) == ["research_check"])
        .expect("the check's request")
        .to_string();
    assert!(
        check.contains("(2) Trains are quick [3][2]. — cites [3][2]")
            && check.contains(&format!("[2] \\\"{EVIDENCE}\\\"")),
        "{check}"
    );
    assert!(
        !report.contains("[9]") && !report.contains(MADE_UP),
        "{report}"
    );
    assert!(report.starts_with("Short answer"), "{report}");

    // Two searches, four pages, one plan call, four notes calls.
    assert_eq!(web.asked("/search").len(), 2);
    assert_eq!(served.len(), 4, "{served:?}");
    assert_eq!(calls_offering(&w, "research_plan"), 1);
    assert_eq!(calls_offering(&w, "research_notes"), 4);

    // Progress went out and ended done, with the plan.
    let progress = of_type(&events, "research_progress");
    let last = &progress.last().expect("progress")["progress"];
    assert_eq!(last["phase"], "done");
    assert_eq!(last["sub_questions"].as_array().map(Vec::len), Some(2));
    assert_eq!(last["sources_read"], 4);
    let degraded: Vec<&str> = of_type(&events, "degraded")
        .iter()
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert_eq!(degraded, ["citation_unsupported", "citation_unresolved"]);

    // The trace: triage, then the graph's nodes, with the model calls inside them.
    let turn = events[0]["turn_id"].as_str().expect("turn id").to_string();
    let trace = w.trace(&turn);
    let triage = spans_named(&trace, "triage");
    assert_eq!(triage[0]["attrs"]["path"], "research", "{trace}");
    for node in [
        "research:plan",
        "research:search#1",
        "research:search#2",
        "research:read#1.1",
        "research:read#2.2",
        "research:write",
        "research:check",
    ] {
        assert_eq!(spans_named(&trace, node).len(), 1, "{node} in {trace}");
    }
    let history = w.history("default");
    let answer = history.last().expect("answer");
    assert_eq!(answer["content"], report.as_str());
    // The report, loaded from history, still knows its run: its plan and what was read.
    let run = &answer["research"];
    assert_eq!(
        (run["phase"].as_str(), run["sources_read"].as_u64()),
        (Some("done"), Some(4)),
        "{answer}"
    );
    assert_eq!(
        run["sub_questions"][1]["question"], "kyoto trains",
        "{answer}"
    );
    assert!(history[0].get("research").is_none(), "{}", history[0]);
}

#[test]
fn a_killed_research_run_resumes_without_running_a_finished_node_again() {
    let web = Web::start();
    let w = research_world(json!({ "hang": true }), "");
    // Killed while the report is being written: plan, searches and reads are done.
    let mut child = research_until_the_report(&w, &web);
    child.kill().expect("kill");
    let out = child.wait_with_output().expect("wait");
    let killed = events(&String::from_utf8_lossy(&out.stdout));
    let turn = killed[0]["turn_id"].as_str().expect("turn id").to_string();
    assert!(of_type(&killed, "final").is_empty());

    w.mock
        .set_script(json!({ "steps": [{ "text": REPORT }] }))
        .expect("script");
    let out = ask(&w, &web, &["ask", "--resume", &turn, "--events"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_text(&events(&String::from_utf8_lossy(&out.stdout)));
    assert_eq!(sources(&report).len(), 3, "{report}");

    // Nothing that had finished ran again: still one plan, four notes, two searches, four
    // pages; the report was asked for once more.
    let all = w.mock.requests().expect("requests");
    let offering = |tool: &str| {
        all.iter()
            .filter(|r| r["body"]["tools"].to_string().contains(tool))
            .count()
    };
    assert_eq!(offering("research_plan"), 1);
    assert_eq!(offering("research_notes"), 4);
    assert_eq!(web.asked("/search").len(), 2);
    assert_eq!(web.asked("/page/").len(), 4);
    // The history holds the question once and the report.
    let history = w.history("default");
    let contents: Vec<&str> = history
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(contents, ["plan three days in kyoto", report.as_str()]);
    // A finished run cannot be resumed.
    let again = ask(&w, &web, &["ask", "--resume", &turn])
        .output()
        .expect("run");
    assert!(!again.status.success());
}

#[test]
fn a_search_service_that_hangs_ends_in_a_partial_report_within_the_time_limit() {
    let web = Web::start();
    web.hang_search.store(true, Ordering::SeqCst);
    let config = "[research]\ntime_limit_secs = 5\nnode_timeout_secs = 60\nretries = 0\n";
    let w = research_world(json!({ "text": REPORT }), config);
    let started = Instant::now();
    let out = ask(
        &w,
        &web,
        &["ask", "--research", "--events", "plan three days in kyoto"],
    )
    .output()
    .expect("run");
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let events = events(&String::from_utf8_lossy(&out.stdout));
    let report = final_text(&events);
    assert!(report.starts_with("**Partial report.**"), "{report}");
    assert!(report.contains("time limit of 5s"), "{report}");
    assert!(
        report.contains("- kyoto family hotels") && report.contains("- kyoto trains"),
        "{report}"
    );
    let reasons: Vec<&str> = of_type(&events, "degraded")
        .iter()
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"partial_report"), "{reasons:?}");

    // The fallback is counted: one turn, degraded, by a partial report.
    let stats = w.json(&["trace", "stats", "--json"]);
    assert_eq!(
        (stats["turns"].as_u64(), stats["degraded_turns"].as_u64()),
        (Some(1), Some(1)),
        "{stats}"
    );
    let partial = stats["by_reason"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["reason"] == "partial_report"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (partial["turns"].as_u64(), partial["rate"].as_f64()),
        (Some(1), Some(1.0)),
        "{stats}"
    );
    let text = w.ok(&["trace", "stats"]);
    assert!(
        text.contains("1 turns, 1 degraded (100.0%)") && text.contains("partial_report"),
        "{text}"
    );
    let later = w.json(&[
        "trace",
        "stats",
        "--since",
        "2999-01-01T00:00:00Z",
        "--json",
    ]);
    assert_eq!(later["turns"], 0, "{later}");
    let bad = w.run(&["trace", "stats", "--since", "yesterday"]);
    assert!(
        !bad.status.success() && stderr(&bad).contains("RFC 3339"),
        "{}",
        stderr(&bad)
    );
}

/// A research run of "plan three days in kyoto" in a world that remembers `remembered`, whose
/// notes calls answer `notes`; the world and the run's events.
fn research_remembering(
    web: &Web,
    remembered: &str,
    notes: Value,
    config: &str,
) -> (World, Vec<Value>) {
    let w = World::with_config(
        json!({ "steps": [
            plan_step(),
            { "when_tool": "research_notes", "times": 5,
              "tool_calls": [{ "id": "n1", "name": "research_notes", "arguments": notes.to_string() }] },
            check_step(json!([])),
            { "text": REPORT },
        ]}),
        config,
    );
    for tool in ["web_search", "web_fetch"] {
        w.ok(&["rules", "add", "--tool", tool, "--decision", "allow"]);
    }
    w.ok(&["memory", "add", remembered]);
    let out = ask(
        &w,
        web,
        &["ask", "--research", "--events", "plan three days in kyoto"],
    )
    .output()
    .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&String::from_utf8_lossy(&out.stdout));
    (w, events)
}

/// A run that stops early still cites what the person's own memories gave it, as its
/// finished report would.
#[test]
fn a_partial_report_cites_the_memories_found_before_it_stopped() {
    const REMEMBERED: &str = "We only take trains of less than one hour.";
    let web = Web::start();
    web.hang_search.store(true, Ordering::SeqCst);
    let notes = json!({ "notes": [{ "quote": REMEMBERED, "supports": "the limit on trains" }] });
    let config = "[research]\ntime_limit_secs = 5\nnode_timeout_secs = 60\nretries = 0\n";
    let (_w, events) = research_remembering(&web, REMEMBERED, notes, config);
    let report = final_text(&events);
    assert!(report.starts_with("**Partial report.**"), "{report}");
    assert!(
        report.contains(&format!(
            "### kyoto trains\n\n- the limit on trains: “{REMEMBERED}” [^1]"
        )),
        "{report}"
    );
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        report.contains(&format!(
            "[^1]: “{REMEMBERED}” — from your memories, learned {today}"
        )),
        "{report}"
    );
    assert!(
        report.contains("### Not reached or not found\n\n- kyoto family hotels\n"),
        "{report}"
    );
}

#[test]
fn stop_ends_a_research_run_in_a_partial_report_of_what_was_found() {
    let web = Web::start();
    let w = research_world(json!({ "hang": true }), "");
    let child = research_until_the_report(&w, &web);
    let stop = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(stop.success());
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_text(&events(&String::from_utf8_lossy(&out.stdout)));
    assert!(
        report
            .starts_with("**Partial report.** The research stopped early: stopped by the person."),
        "{report}"
    );
    assert!(
        report.contains(&format!("the price of a family room: “{EVIDENCE}” [^1]")),
        "{report}"
    );
    assert_eq!(sources(&report).len(), 4, "{report}");
}

#[test]
fn a_search_service_saved_in_settings_serves_research_and_its_key_stays_in_the_keychain() {
    const KEY: &str = "bsa-canary-search-7q2m-heron";
    let web = Web::start();
    let w = research_world(json!({ "text": REPORT }), "");
    let config = || std::fs::read_to_string(w.home.path().join("config.toml")).expect("config");

    // No service: research says where to add one.
    let none = w.json(&["search", "show", "--json"]);
    assert_eq!(
        (none["kind"].as_str(), none["available"].as_bool()),
        (Some("none"), Some(false)),
        "{none}"
    );
    let out = w.run(&["ask", "--research", "plan three days in kyoto"]);
    assert!(
        !out.status.success() && stderr(&out).contains("Settings → Web search"),
        "{}",
        stderr(&out)
    );

    // A SearXNG saved as Settings saves it: in config.toml, and research uses it at the next
    // start with nothing in the environment.
    w.ok(&["search", "set", "--kind", "searxng", "--url", &web.url]);
    assert!(config().contains("kind = \"searxng\""), "{}", config());
    let out = w
        .command(&["ask", "--research", "--events", "plan three days in kyoto"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_text(&events(&String::from_utf8_lossy(&out.stdout)));
    assert!(report.starts_with("Short answer"), "{report}");
    assert_eq!(web.asked("/search").len(), 2);

    // Brave Search with a key typed in: the key goes to the keychain and reaches the service
    // in its header, and no file or log.
    let set = output_with_line(
        w.command(&[
            "search",
            "set",
            "--kind",
            "brave",
            "--url",
            &web.url,
            "--key-stdin",
        ])
        .env("ECHO_LOG", "trace"),
        KEY,
    );
    let shown = w.json(&["search", "show", "--json"]);
    let tried = w.json(&["search", "test", "--json"]);
    let heads = web.heads();
    // Leave the keychain as it was before asserting anything.
    w.ok(&["search", "set", "--clear-key"]);
    assert!(set.status.success(), "{}", stderr(&set));
    assert_eq!(
        (shown["key_source"].as_str(), shown["available"].as_bool()),
        (Some("keychain"), Some(true)),
        "{shown}"
    );
    assert_eq!(
        (tried["ok"].as_bool(), tried["results"].as_u64()),
        (Some(true), Some(2)),
        "{tried}"
    );
    let header = format!("x-subscription-token: {KEY}");
    assert!(
        heads
            .iter()
            .any(|h| h.starts_with("GET /res/v1/web/search")
                && h.to_ascii_lowercase().contains(&header)),
        "{heads:?}"
    );
    let logs = format!("{}{}", stderr(&set), String::from_utf8_lossy(&set.stdout));
    assert!(!logs.contains(KEY), "the key is in the output: {logs}");
    assert_eq!(
        files_containing(w.home.path(), KEY.as_bytes()),
        Vec::<String>::new()
    );

    // Without its key the service is unavailable and says where to put one; a keyed service
    // with no key is refused and changes nothing.
    let cleared = w.json(&["search", "show", "--json"]);
    assert_eq!(cleared["available"], false, "{cleared}");
    assert!(
        cleared["problem"]
            .as_str()
            .is_some_and(|p| p.contains("Settings → Web search")),
        "{cleared}"
    );
    let refused = w.run(&["search", "set", "--kind", "tavily", "--url", &web.url]);
    assert!(
        !refused.status.success() && stderr(&refused).contains("needs an API key"),
        "{}",
        stderr(&refused)
    );
    assert!(config().contains("kind = \"brave\""), "{}", config());
}

#[test]
fn a_memory_that_answers_a_sub_question_is_a_source_cited_as_the_persons() {
    const REMEMBERED: &str = "We only take trains of less than one hour.";
    let web = Web::start();
    let notes = json!({ "notes": [
        { "quote": EVIDENCE, "supports": "the price of a family room" },
        { "quote": REMEMBERED, "supports": "the limit on trains" },
    ]});
    let (w, events) = research_remembering(&web, REMEMBERED, notes, "");
    let report = final_text(&events);

    // Sub-question 2 ("kyoto trains") found the memory: its note comes before the pages', so
    // [3] is the memory, cited as the person's own with the day it was learned.
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        report.contains(&format!(
            "[^3]: “{REMEMBERED}” — from your memories, learned {today}"
        )),
        "{report}"
    );
    let pages = sources(&report);
    assert_eq!(
        pages.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["1", "2"],
        "{report}"
    );
    // The pages' quote check still holds: the memory's sentence is in no page.
    assert!(
        pages.iter().all(|(_, quote, _)| quote == EVIDENCE),
        "{report}"
    );

    // Both sub-questions asked memory (the gate allowed memory_recall); only the second
    // found something, and the notes call ran once for it.
    let turn = events[0]["turn_id"].as_str().expect("turn id").to_string();
    let trace = w.trace(&turn);
    let recalls: Vec<(String, Value)> = ["research:recall#1", "research:recall#2"]
        .iter()
        .map(|n| {
            let span = &spans_named(&trace, n)[0];
            (n.to_string(), span["attrs"]["notes"].clone())
        })
        .collect();
    assert_eq!(
        recalls,
        [
            ("research:recall#1".to_string(), json!(0)),
            ("research:recall#2".to_string(), json!(1))
        ],
        "{trace}"
    );
    assert_eq!(calls_offering(&w, "research_notes"), 5);
}

#[test]
fn a_research_turn_in_a_project_plans_and_reports_under_its_instructions() {
    const INSTRUCTIONS: &str = "Give every price in yen, for the Tanaka-57 family of four.";
    let web = Web::start();
    let w = research_world(json!({ "text": REPORT }), "");
    w.ok(&["projects", "add", "Trip", "--instructions", INSTRUCTIONS]);
    let out = ask(
        &w,
        &web,
        &[
            "ask",
            "--research",
            "--project",
            "Trip",
            "plan three days in kyoto",
        ],
    )
    .output()
    .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));

    // The plan's and the report's system messages carry the project's block; a note taken
    // from a page answers the sub-question only, so its requests do not.
    let system = |r: &Value| {
        r["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let requests = w.requests();
    let plan: Vec<String> = requests
        .iter()
        .filter(|r| offered(r).contains(&"research_plan".to_string()))
        .map(system)
        .collect();
    let report: Vec<String> = requests
        .iter()
        .filter(|r| offered(r).is_empty())
        .map(system)
        .collect();
    assert_eq!((plan.len(), report.len()), (1, 1), "{requests:?}");
    for (what, system) in [("plan", &plan[0]), ("report", &report[0])] {
        assert!(
            system.contains(INSTRUCTIONS) && system.contains("\"Trip\""),
            "the {what} request lacks the project: {system}"
        );
    }
    assert!(
        requests
            .iter()
            .filter(|r| offered(r).contains(&"research_notes".to_string()))
            .all(|r| !r.to_string().contains(INSTRUCTIONS)),
        "{requests:?}"
    );
}

#[test]
fn a_research_turn_in_a_project_with_a_folder_cites_the_persons_file() {
    const IN_FILE: &str = "Our ryokan in Gion takes families for 30000 yen a night.";
    let web = Web::start();
    let folder = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(folder.path().join("trip")).expect("dir");
    std::fs::write(
        folder.path().join("trip/kyoto-hotels.md"),
        format!("# Kyoto family hotels\n\n{IN_FILE}\n"),
    )
    .expect("write");
    std::fs::write(folder.path().join("groceries.md"), "Milk, eggs, rice.\n").expect("write");
    let notes = json!({ "notes": [
        { "quote": EVIDENCE, "supports": "the price of a family room" },
        { "quote": IN_FILE, "supports": "the family's own hotel" },
    ]});
    let w = World::with_config(
        json!({ "steps": [
            plan_step(),
            { "when_tool": "research_notes", "times": 5,
              "tool_calls": [{ "id": "n1", "name": "research_notes", "arguments": notes.to_string() }] },
            check_step(json!([])),
            { "text": REPORT },
        ]}),
        "",
    );
    for tool in ["web_search", "web_fetch"] {
        w.ok(&["rules", "add", "--tool", tool, "--decision", "allow"]);
    }
    let folder_arg = folder.path().to_str().expect("utf-8 path");
    w.ok(&["projects", "add", "Trip", "--folder", folder_arg]);
    let out = ask(
        &w,
        &web,
        &[
            "ask",
            "--research",
            "--project",
            "Trip",
            "--events",
            "plan three days in kyoto",
        ],
    )
    .output()
    .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&String::from_utf8_lossy(&out.stdout));
    let report = final_text(&events);

    // Sub-question 1 ("kyoto family hotels") found the file: its note comes before the
    // pages', so [1] is the file, cited by its path in the folder; the pages follow (listed
    // in the order the report first cites them).
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        report.contains(&format!(
            "[^1]: “{IN_FILE}” — from your file `trip/kyoto-hotels.md`, read {today}"
        )),
        "{report}"
    );
    let pages = sources(&report);
    assert_eq!(
        pages
            .iter()
            .map(|c| (c.0.as_str(), c.1.as_str()))
            .collect::<Vec<_>>(),
        [("3", EVIDENCE), ("2", EVIDENCE)],
        "{report}"
    );

    // Sub-question 2 ("kyoto trains") names one word the file holds, not two: no file read.
    let turn = events[0]["turn_id"].as_str().expect("turn id").to_string();
    let trace = w.trace(&turn);
    let looked: Vec<(Value, Value)> = ["research:files#1", "research:files#2"]
        .iter()
        .map(|n| {
            let span = &spans_named(&trace, n)[0];
            (
                span["attrs"]["files"].clone(),
                span["attrs"]["notes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        looked,
        [(json!(1), json!(1)), (json!(0), json!(0))],
        "{trace}"
    );
    // One notes call for the file, four for the pages; the file's showed it as the person's.
    assert_eq!(calls_offering(&w, "research_notes"), 5);
    let file_call = w
        .requests()
        .into_iter()
        .filter(|r| {
            r.to_string()
                .contains("File trip/kyoto-hotels.md (the person's own")
        })
        .count();
    assert_eq!(file_call, 1);
}

#[test]
fn a_question_the_rules_cannot_place_goes_where_the_planner_says() {
    let verdict = |research: bool, reason: &str| {
        let arguments = json!({ "research": research, "reason": reason }).to_string();
        json!({ "when_tool": "triage_verdict",
                "tool_calls": [{ "id": "v1", "name": "triage_verdict", "arguments": arguments }] })
    };
    let web = Web::start();
    let w = World::with_config(
        json!({ "steps": [
            verdict(true, "running costs need current prices"),
            verdict(false, "a known comparison"),
            plan_step(),
            notes_step(),
            check_step(json!([])),
            { "text": REPORT },
            { "text": "The Kobo, for PDFs." },
            { "text": "Canberra." },
        ]}),
        "",
    );
    for tool in ["web_search", "web_fetch"] {
        w.ok(&["rules", "add", "--tool", tool, "--decision", "allow"]);
    }
    let triaged = |w: &World, question: &str| {
        let out = ask(w, &web, &["ask", "--events", question])
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", stderr(&out));
        let events = events(&String::from_utf8_lossy(&out.stdout));
        let turn = events[0]["turn_id"].as_str().expect("turn id").to_string();
        let trace = w.trace(&turn);
        let span = spans_named(&trace, "triage")[0].clone();
        (
            span["attrs"]["path"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            span["attrs"]["reason"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            final_text(&events),
        )
    };

    // Two borderline questions: the planner's verdict decides each, and says why on the trace.
    let (path, reason, answer) = triaged(
        &w,
        "Is a heat pump or a gas boiler cheaper to run for a small flat?",
    );
    assert_eq!(path, "research", "{reason}");
    assert!(
        reason.ends_with("the planner: running costs need current prices"),
        "{reason}"
    );
    assert!(answer.contains("### Sources"), "{answer}");
    let (path, reason, answer) = triaged(
        &w,
        "Which e-reader is best for reading PDFs, the Kindle or the Kobo?",
    );
    assert_eq!(
        (path.as_str(), answer.as_str()),
        ("quick", "The Kobo, for PDFs."),
        "{reason}"
    );
    assert!(
        reason.ends_with("the planner: a known comparison"),
        "{reason}"
    );
    // A plain question is the rules' to place: the planner is not asked.
    let (path, reason, _) = triaged(&w, "What is the capital of Australia?");
    assert_eq!(path, "quick");
    assert!(!reason.contains("planner"), "{reason}");
    assert_eq!(calls_offering(&w, "triage_verdict"), 2);

    // Switched off, the rules' lean stands and the planner is not asked.
    let rules_only = World::with_config(
        json!({ "steps": [{ "text": "A heat pump, mostly." }] }),
        "[research]\nask_planner = false\n",
    );
    let (path, reason, answer) = triaged(
        &rules_only,
        "Is a heat pump or a gas boiler cheaper to run for a small flat?",
    );
    assert_eq!(
        (path.as_str(), answer.as_str()),
        ("quick", "A heat pump, mostly."),
        "{reason}"
    );
    assert!(!reason.contains("planner"), "{reason}");
    assert_eq!(calls_offering(&rules_only, "triage_verdict"), 0);
}

#[test]
fn a_support_check_that_cannot_be_made_is_said_in_the_report() {
    let web = Web::start();
    let w = World::with_config(
        json!({ "steps": [
            plan_step(), notes_step(),
            { "when_tool": "research_check",
              "tool_calls": [{ "id": "c1", "name": "research_check", "arguments": "not json" }] },
            { "text": REPORT },
        ]}),
        "",
    );
    for tool in ["web_search", "web_fetch"] {
        w.ok(&["rules", "add", "--tool", tool, "--decision", "allow"]);
    }
    let out = ask(
        &w,
        &web,
        &["ask", "--research", "--events", "plan three days in kyoto"],
    )
    .output()
    .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&String::from_utf8_lossy(&out.stdout));
    let report = final_text(&events);
    // The citations stay as written, and the report says they were not checked.
    assert!(report.contains("quick [^3][^2]"), "{report}");
    assert!(
        report.contains("_The citations below were not checked against their notes._"),
        "{report}"
    );
    let degraded: Vec<&str> = of_type(&events, "degraded")
        .iter()
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert_eq!(degraded, ["citation_check_failed", "citation_unresolved"]);
}
