#!/usr/bin/env bash
# The one test command (README "Test"): formatting, the web UI's checks and build (the desktop
# app embeds it), lints, every test of the workspace, the fuzz targets for a fixed number of
# runs, then the browser end-to-end test. The
# scenario tests start the real `echod` binary and the scripted mock model server
# (tests/mock-model) as separate processes on loopback; nothing touches the network. The
# workspace tests run inside scripts/with-desktop-session.sh: Xvfb for the desktop app's real
# window, and a private D-Bus session with an unlocked gnome-keyring for the real keychain.
set -euo pipefail
cd "$(dirname "$0")/.."

# Builds go where every other cargo command of this clone puts them: cargo's default
# ./target, or $CARGO_TARGET_DIR when it is set (.ci/run sets it; README "Test").
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# The embedder's tests need the local model; fetch it unless the caller pointed at one.
if [ -z "${ECHO_EMBED_MODEL_DIR:-}" ]; then
  ECHO_EMBED_MODEL_DIR="$(bash scripts/fetch-embed-model.sh | tail -n 1)"
  export ECHO_EMBED_MODEL_DIR
fi

# The built-in model's tests run the real SmolLM2-135M-Instruct weights (~100 MB, cached).
if [ -z "${ECHO_LOCAL_MODEL:-}" ]; then
  ECHO_LOCAL_MODEL="$(bash scripts/fetch-local-model.sh | tail -n 1)"
  export ECHO_LOCAL_MODEL
fi

# tauri-driver (the desktop window test) is installed once into a tools dir outside the clone.
TOOLS="${ECHO_TOOLS_DIR:-$HOME/.cache/echo-desk-tools}"
export PATH="$TOOLS/bin:$PATH"
if ! command -v tauri-driver >/dev/null; then
  echo "== cargo install tauri-driver (into $TOOLS)"
  cargo install tauri-driver --locked --root "$TOOLS"
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== web UI: typecheck, lint, unit tests, build (scripts/ui-check.sh)"
bash scripts/ui-check.sh

echo "== cargo clippy and the test build, in one (all targets, warnings are errors)"
# `cargo clippy` would check every dependency (metadata only) and the test build would then
# compile them all again: two builds of the dependencies, about 10 of a cold run's 42 minutes
# (docs/reliability.md, section 10). Instead the one build compiles the workspace's own crates
# with clippy-driver (rustc with Clippy's lints) the way `cargo clippy` runs it: as
# RUSTC_WORKSPACE_WRAPPER, with its arguments in CLIPPY_ARGS. The test run below keeps both
# set, so it finds everything built.
clippy_driver="$(rustc --print sysroot)/bin/clippy-driver"
[ -x "$clippy_driver" ] || { echo "$clippy_driver is missing: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# CLIPPY_ARGS is how cargo-clippy talks to clippy-driver, not a documented interface: make sure
# a lint still fails the build, so a change there cannot turn the lints off unnoticed.
canary="$(mktemp -d)"
printf 'fn main() {\n    let v = vec![1];\n    println!("{}", v.len());\n}\n' >"$canary/main.rs"
if "$clippy_driver" rustc --edition 2021 --crate-type bin -o "$canary/main" "$canary/main.rs" 2>/dev/null; then
  echo "clippy-driver did not deny clippy::useless_vec with CLIPPY_ARGS=$CLIPPY_ARGS: lints would not run" >&2
  exit 1
fi
rm -rf "$canary"
cargo build --workspace --all-targets --locked

echo "== cargo test (in a private X + D-Bus + keyring session)"
bash scripts/with-desktop-session.sh cargo test --workspace --locked

echo "== fuzzers: the parsers of outside bytes, briefly (scripts/fuzz.sh)"
bash scripts/fuzz.sh

# src-tauri/tests/package.rs built, installed and removed this package; what it holds:
deb="$(ls "${CARGO_TARGET_DIR:-target}"/debug/bundle/deb/echo-desk_*.deb)"
echo "== the package the tests installed: $deb"
dpkg-deb --info "$deb"
dpkg-deb --contents "$deb"

echo "== web UI: browser end-to-end against echod serve"
bash scripts/with-desktop-session.sh npm run e2e
