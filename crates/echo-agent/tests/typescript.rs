//! The TypeScript types the UI uses for the engine's wire types are generated from the Rust
//! types (ts-rs), never copied by hand. This test fails when `ui/src/generated/engine.ts` is out
//! of date; `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript` rewrites it. It lives
//! in echo-agent because that crate sees every crate whose types cross to the UI.

use echo_agent::echo_gate::{AuditEntry, Decision, Rule, RuleScope};
use echo_agent::echo_mcp::{ServerState, ServerStatus, TransportKind};
use echo_agent::{
    BootstrapFile, ConnectionReport, KeySource, OllamaInfo, ProviderUpdate, ProviderView,
};
use echo_core::config::{McpServerConfig, ProviderKind, ProviderSettings};
use echo_core::event::RecalledMemory;
use echo_core::store::{SessionSummary, StoredMessage};
use echo_core::{EventEnvelope, Role, ToolCall, TurnEvent, Usage};
use ts_rs::{Config, TS};

fn generated() -> String {
    let cfg = Config::default();
    let mut out = String::from(
        "// Generated from the engine's Rust types by\n\
         // `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript`. Do not edit.\n\n",
    );
    for decl in [
        EventEnvelope::decl(&cfg),
        TurnEvent::decl(&cfg),
        RecalledMemory::decl(&cfg),
        Usage::decl(&cfg),
        SessionSummary::decl(&cfg),
        StoredMessage::decl(&cfg),
        ToolCall::decl(&cfg),
        Role::decl(&cfg),
        Rule::decl(&cfg),
        Decision::decl(&cfg),
        RuleScope::decl(&cfg),
        AuditEntry::decl(&cfg),
        ServerStatus::decl(&cfg),
        TransportKind::decl(&cfg),
        ServerState::decl(&cfg),
        McpServerConfig::decl(&cfg),
        ProviderKind::decl(&cfg),
        ProviderSettings::decl(&cfg),
        KeySource::decl(&cfg),
        ProviderView::decl(&cfg),
        ProviderUpdate::decl(&cfg),
        ConnectionReport::decl(&cfg),
        OllamaInfo::decl(&cfg),
        BootstrapFile::decl(&cfg),
    ] {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    format!("{}\n", out.trim_end())
}

#[test]
fn the_ui_types_are_generated_from_the_rust_types() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/generated/engine.ts");
    let want = generated();
    if std::env::var_os("ECHO_UPDATE_TS").is_some() {
        std::fs::write(&path, &want).expect("write the generated types");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is out of date with the Rust types; run `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript`",
        path.display()
    );
}
