//! Rebuilds the crate when a migration is added or changed: `sqlx::migrate!` embeds the
//! `migrations/` folders (this crate's and those of the crates that share its database, see
//! `src/store.rs`) at compile time, and Cargo does not watch them otherwise.
fn main() {
    for dir in [
        "migrations",
        "../echo-memory/migrations",
        "../echo-gate/migrations",
        "../echo-automations/migrations",
        "../echo-agent/migrations",
    ] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
