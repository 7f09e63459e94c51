//! The TypeScript the UI uses for the engine's wire types and operations is generated from the
//! Rust types (ts-rs), never copied by hand: every type an operation's request or response
//! reaches (found by walking the types, not listed here), the turn's events, and the
//! operation table itself (`Operations`, `OPERATION_ROUTES`). This test fails when
//! `ui/src/generated/engine.ts` is out of date; `ECHO_UPDATE_TS=1 cargo test -p echo-agent
//! --test typescript` rewrites it.

use echo_agent::wire::ErrorBody;
use echo_agent::wire::{EventEnvelope, PairRequest, Paired, SendTurn, ShortcutStatus, TurnEvent};
use echo_agent::{Operation, OperationVisitor, visit_operations};
use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};
use ts_rs::{Config, TS, TypeVisitor};

/// Every declared type reached from the roots, by name.
struct Types<'a> {
    cfg: &'a Config,
    seen: HashSet<TypeId>,
    decls: BTreeMap<String, String>,
}

impl TypeVisitor for Types<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        if T::output_path().is_some() {
            let name = T::ident(self.cfg);
            let decl = T::decl(self.cfg);
            if let Some(other) = self.decls.insert(name.clone(), decl.clone()) {
                assert_eq!(
                    other, decl,
                    "two wire types are both called {name} in TypeScript; rename one with #[ts(rename)]"
                );
            }
        }
        T::visit_generics(self);
        T::visit_dependencies(self);
    }
}

/// The operation table as TypeScript.
struct Operations<'a> {
    types: Types<'a>,
    entries: Vec<String>,
    routes: Vec<String>,
}

impl OperationVisitor for Operations<'_> {
    fn visit<O: Operation>(&mut self) {
        self.types.visit::<O>();
        self.types.visit::<O::Response>();
        let cfg = self.types.cfg;
        self.entries.push(format!(
            "  {}: {{ request: {}; response: {} }};",
            O::NAME,
            <O as TS>::name(cfg),
            <O::Response as TS>::name(cfg)
        ));
        let method = O::METHOD.as_str();
        self.routes.push(format!(
            "  {}: {{ method: '{method}', path: '{}' }},",
            O::NAME,
            O::PATH
        ));
    }
}

fn generated() -> String {
    // 64-bit integers (counts, tokens, versions) arrive as JSON numbers, which `JSON.parse`
    // gives as `number`, never `bigint`; every value the engine sends fits in 2^53.
    let cfg = Config::default().with_large_int("number");
    let mut ops = Operations {
        types: Types {
            cfg: &cfg,
            seen: HashSet::new(),
            decls: BTreeMap::new(),
        },
        entries: Vec::new(),
        routes: Vec::new(),
    };
    visit_operations(&mut ops);
    // Outside the table: the turn (a stream of events), pairing a browser, the error body, the
    // desktop's own.
    ops.types.visit::<SendTurn>();
    ops.types.visit::<PairRequest>();
    ops.types.visit::<Paired>();
    ops.types.visit::<EventEnvelope>();
    // Flattened into the envelope, so not reached through it; the UI names it.
    ops.types.visit::<TurnEvent>();
    ops.types.visit::<ErrorBody>();
    ops.types.visit::<ShortcutStatus>();

    let mut out = String::from(
        "// Generated from the engine's Rust types and its operation table by\n\
         // `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript`. Do not edit.\n\n",
    );
    out.push_str(&format!(
        "/** Version of the turn event protocol (`EventEnvelope.v`). */\nexport const EVENT_PROTOCOL_VERSION = {};\n\n",
        echo_agent::wire::EVENT_PROTOCOL_VERSION
    ));
    for decl in ops.types.decls.values() {
        out.push_str("export ");
        out.push_str(decl);
        out.push_str("\n\n");
    }
    out.push_str(
        "/** Every engine operation: its request and response (see crates/echo-agent/src/operations.table). */\n\
         export interface Operations {\n",
    );
    for entry in &ops.entries {
        out.push_str(entry);
        out.push('\n');
    }
    out.push_str(
        "}\n\n/** An operation's name. */\nexport type OperationName = keyof Operations;\n\n",
    );
    out.push_str(
        "/** The HTTP method of a gateway route. */\n\
         export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';\n\n\
         /** Each operation's gateway route: `{field}` path parameters come from the request. */\n\
         export const OPERATION_ROUTES: { readonly [K in OperationName]: { method: HttpMethod; path: string } } = {\n",
    );
    for route in &ops.routes {
        out.push_str(route);
        out.push('\n');
    }
    out.push_str("};\n");
    out
}

#[test]
fn the_ui_types_are_generated_from_the_rust_types() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/generated/engine.ts");
    let want = generated();
    if std::env::var_os("ECHO_UPDATE_TS").is_some() {
        assert!(
            std::env::var_os("CI").is_none(),
            "ECHO_UPDATE_TS is set on CI, where it would rewrite ui/src/generated/engine.ts instead of checking it"
        );
        std::fs::write(&path, &want).expect("write the generated types");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is out of date with the Rust types; run `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript`",
        path.display()
    );
}

#[test]
fn every_operation_and_its_types_are_in_the_generated_file() {
    let text = generated();
    for op in echo_agent::OPERATIONS {
        assert!(
            text.contains(&format!("\n  {}: {{ request: ", op.name)),
            "{} is missing from Operations",
            op.name
        );
        assert!(
            text.contains(&format!("\n  {}: {{ method: ", op.name)),
            "{} is missing from OPERATION_ROUTES",
            op.name
        );
    }
    // Types reached only through other types are found too.
    for name in [
        "MemoryTier",
        "RuleDecision",
        "TurnEvent",
        "ErrorCode",
        "ApprovalAnswer",
    ] {
        assert!(
            text.contains(&format!("export type {name} =")),
            "{name} was not discovered"
        );
    }
}
