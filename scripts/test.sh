#!/usr/bin/env bash
# The one test command (README "Test"): formatting, the web UI's checks and build (the desktop
# app embeds it), lints, every test of the workspace, then the browser end-to-end test. The
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

echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo test (in a private X + D-Bus + keyring session)"
bash scripts/with-desktop-session.sh cargo test --workspace --locked

echo "== web UI: browser end-to-end against echod serve"
bash scripts/with-desktop-session.sh npm run e2e
