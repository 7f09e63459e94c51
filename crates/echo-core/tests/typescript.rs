//! The TypeScript types the UI uses for the engine's wire types are generated from these Rust
//! types (ts-rs), never copied by hand. This test fails when `ui/src/generated/engine.ts` is out
//! of date; `ECHO_UPDATE_TS=1 cargo test -p echo-core --test typescript` rewrites it.

use echo_core::event::RecalledMemory;
use echo_core::store::{SessionSummary, StoredMessage};
use echo_core::{EventEnvelope, Role, ToolCall, TurnEvent, Usage};
use ts_rs::{Config, TS};

fn generated() -> String {
    let cfg = Config::default();
    let mut out = String::from(
        "// Generated from the Rust types in crates/echo-core by\n\
         // `ECHO_UPDATE_TS=1 cargo test -p echo-core --test typescript`. Do not edit.\n\n",
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
        "{} is out of date with the Rust types; run `ECHO_UPDATE_TS=1 cargo test -p echo-core --test typescript`",
        path.display()
    );
}
