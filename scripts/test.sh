#!/usr/bin/env bash
# The one test command (README "Test"): formatting, lints, every test of the workspace, then
# the web UI's checks and its browser end-to-end test. The scenario tests start the real
# `echod` binary and the scripted mock model server (tests/mock-model) as separate processes
# on loopback; nothing touches the network.
set -euo pipefail
cd "$(dirname "$0")/.."

# One build directory outside the clone, reused across runs (see BUILD notes in README).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/echo-desk-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# The embedder's tests need the local model; fetch it unless the caller pointed at one.
if [ -z "${ECHO_EMBED_MODEL_DIR:-}" ]; then
  ECHO_EMBED_MODEL_DIR="$(bash scripts/fetch-embed-model.sh | tail -n 1)"
  export ECHO_EMBED_MODEL_DIR
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo test"
cargo test --workspace --locked

echo "== web UI: typecheck, lint, unit tests, build, browser end-to-end (scripts/ui-check.sh)"
bash scripts/ui-check.sh
