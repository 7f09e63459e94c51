//! Devices with tokens of their own, through the real `echod` binary and `echod serve` over
//! TLS: `devices pair` makes a one-time code (with the address to open and its QR code),
//! the gateway's `POST /api/pair` trades it for a token that works until `devices revoke`
//! (also in the server that is running), nothing secret is stored in clear, each device's
//! token has its own rate limit and wrong codes are limited, and the sign-in log
//! (`devices log`) says what happened at the door and from where.

mod common;

use common::gateway::Server;
use common::*;
use serde_json::{Value, json};

/// A device's pairing through the CLI, traded at the gateway: (device id, token).
fn pair(w: &World, s: &Server, name: &str) -> (String, String) {
    let pairing = w.json(&["devices", "pair", "--name", name, "--json"]);
    assert_eq!(pairing["device"]["state"], "waiting", "{pairing}");
    let code = pairing["code"].as_str().expect("a code");
    let (status, body) = s.raw(
        "POST",
        "/api/pair",
        &[("Host", &s.host())],
        Some(&json!({ "code": code })),
    );
    assert_eq!(status, 200, "{body}");
    let paired: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(paired["device"], pairing["device"]["id"], "{body}");
    let token = paired["token"].as_str().expect("a token").to_string();
    (
        pairing["device"]["id"].as_str().expect("id").to_string(),
        token,
    )
}

fn with_token(s: &Server, token: &str) -> u16 {
    let auth = format!("Bearer {token}");
    s.raw(
        "GET",
        "/api/sessions",
        &[("Host", &s.host()), ("Authorization", &auth)],
        None,
    )
    .0
}

#[test]
fn a_device_pairs_with_a_code_from_the_cli_and_its_token_works_until_revoked() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start_tls(&w, &[]);

    // The text form gives the address the running server printed, with a QR code of it.
    let text = w.ok(&["devices", "pair", "--name", "tablet"]);
    let address = format!("https://127.0.0.1:{}/#pair=", s.port);
    assert!(text.contains(&address), "{text}");
    assert!(
        text.contains('█') && text.contains('▀'),
        "a QR code: {text}"
    );

    let code_json = w.json(&["devices", "pair", "--name", "phone", "--json"]);
    let code = code_json["code"].as_str().expect("code").to_string();
    let (status, body) = s.raw(
        "POST",
        "/api/pair",
        &[("Host", &s.host())],
        Some(&json!({ "code": code.to_lowercase() })),
    );
    assert_eq!(status, 200, "a code's case does not matter: {body}");
    let paired: Value = serde_json::from_str(&body).expect("json");
    let token = paired["token"].as_str().expect("token").to_string();
    let id = paired["device"].as_str().expect("device").to_string();
    loop {
        let line = s.next_line();
        if line.starts_with("paired device") {
            assert!(line.contains("\"phone\"") && line.contains(&id), "{line}");
            break;
        }
    }
    assert_eq!(with_token(&s, &token), 200);
    // A device cannot pair or revoke devices: a lost one cannot keep itself a way back in.
    let auth = format!("Bearer {token}");
    let device_auth = [("Host", s.host()), ("Authorization", auth.clone())];
    let headers: Vec<(&str, &str)> = device_auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, body) = s.raw("POST", "/api/devices", &headers, Some(&json!({})));
    assert_eq!(status, 403, "{body}");
    let (status, body) = s.raw("GET", "/api/devices", &headers, None);
    assert_eq!(status, 403, "{body}");
    let (status, _) = s.get("/api/devices");
    assert_eq!(status, 200, "the owner's token can");

    // The code works once.
    let (status, body) = s.raw(
        "POST",
        "/api/pair",
        &[("Host", &s.host())],
        Some(&json!({ "code": code })),
    );
    assert_eq!(status, 401, "{body}");

    let listed = w.json(&["devices", "list", "--json"]);
    let by_name = |name: &str| -> Value {
        listed
            .as_array()
            .and_then(|d| d.iter().find(|d| d["name"] == name))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(by_name("phone")["state"], "paired", "{listed}");
    assert!(by_name("phone")["last_seen_at"].is_string(), "{listed}");
    assert_eq!(by_name("tablet")["state"], "waiting", "{listed}");

    // Neither the token nor a code is kept anywhere in the data directory.
    for secret in [token.as_str(), &code.replace('-', "")] {
        let found = files_containing(w.home.path(), secret.as_bytes());
        assert!(found.is_empty(), "{secret} is in {found:?}");
    }

    // Revoked from the CLI, the token is refused by the running server at once.
    let out = w.ok(&["devices", "revoke", &id]);
    assert!(out.contains("revoked"), "{out}");
    assert_eq!(with_token(&s, &token), 401);
    let listed = w.json(&["devices", "list", "--json"]);
    let phone = listed
        .as_array()
        .and_then(|d| d.iter().find(|d| d["id"] == id.as_str()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(phone["state"], "revoked", "{listed}");
    let out = w.run(&["devices", "revoke", "no-such-device"]);
    assert!(!out.status.success(), "an unknown device is an error");

    // The sign-in log, newest first: each step, the phone's pairing from its address.
    let log = w.json(&["devices", "log", "--json"]);
    assert_eq!(
        access_kinds(&log),
        [
            "revoked",
            "wrong_code",
            "paired",
            "pairing_started",
            "pairing_started"
        ],
        "{log}"
    );
    let paired = &log[2];
    assert_eq!(paired["device_id"], id.as_str(), "{log}");
    assert_eq!(paired["device_name"], "phone", "{log}");
    let peer = paired["peer"].as_str().unwrap_or("");
    assert!(peer.starts_with("127.0.0.1:"), "{log}");
    assert!(
        log[1]["peer"].as_str().is_some(),
        "a wrong code's address: {log}"
    );
    let text = w.ok(&["devices", "log"]);
    assert!(
        text.contains("device paired  \"phone\"") && text.contains(&format!("from {peer}")),
        "{text}"
    );
}

#[test]
fn each_device_token_has_a_rate_limit_and_wrong_codes_are_limited() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start(&w);
    let (_, token) = pair(&w, &s, "script");
    let statuses: Vec<u16> = (0..400).map(|_| with_token(&s, &token)).collect();
    assert!(
        statuses[..200].iter().all(|s| *s == 200),
        "a burst of 200 is served: {statuses:?}"
    );
    assert!(statuses.contains(&429), "400 requests at once are limited");
    let auth = format!("Bearer {token}");
    let (status, body) = s.raw(
        "GET",
        "/api/sessions",
        &[("Host", &s.host()), ("Authorization", &auth)],
        None,
    );
    if status == 429 {
        assert!(body.contains("rate_limited"), "{body}");
    }
    // The owner's token and another device's are not held back by this one's limit.
    assert_eq!(with_token(&s, &s.token), 200);
    let (_, other) = pair(&w, &s, "laptop");
    assert_eq!(with_token(&s, &other), 200);

    // Wrong codes: ten are answered as wrong, then no code is taken for a while.
    for i in 0..10 {
        let (status, body) = s.raw(
            "POST",
            "/api/pair",
            &[("Host", &s.host())],
            Some(&json!({ "code": format!("WRONG-{i:05}") })),
        );
        assert_eq!(status, 401, "{body}");
    }
    let code = w.json(&["devices", "pair", "--json"])["code"]
        .as_str()
        .expect("code")
        .to_string();
    let (status, body) = s.raw(
        "POST",
        "/api/pair",
        &[("Host", &s.host())],
        Some(&json!({ "code": code })),
    );
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("rate_limited"), "{body}");

    // The log has each wrong code with its address, and the lock once.
    let log = w.json(&["devices", "log", "--json"]);
    let of = |kind: &str| -> Vec<Value> {
        let all = log.as_array().cloned().unwrap_or_default();
        all.into_iter().filter(|e| e["kind"] == kind).collect()
    };
    assert_eq!(of("codes_locked").len(), 1, "{log}");
    assert_eq!(of("wrong_code").len(), 10, "{log}");
    assert_eq!(of("paired").len(), 2, "{log}");
    assert!(
        of("wrong_code").iter().all(|e| e["peer"]
            .as_str()
            .is_some_and(|p| p.starts_with("127.0.0.1:"))),
        "{log}"
    );
    assert!(
        !log.to_string().contains("WRONG-"),
        "no code in the log: {log}"
    );
}
