#!/usr/bin/env bash
# What an idle `echod serve` holds of the built-in model: its PSS before the first turn, with
# the model's worker process running after one turn (and the worker's own), and after the
# worker ended at the end of its quiet period (`llm.release_after_secs`, 3 s here).
#
#   bash scripts/bench-local-idle.sh [MODEL.gguf]     (default: $ECHO_LOCAL_MODEL)
#
# Uses the release build of echod ($CARGO_TARGET_DIR or ./target; cargo build --release
# --locked -p echo-desk -p echod --bin echod) and a throw-away data directory.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-${ECHO_LOCAL_MODEL:-}}"
[ -n "$MODEL" ] && [ -f "$MODEL" ] || { echo "usage: bench-local-idle.sh MODEL.gguf (or set ECHO_LOCAL_MODEL)" >&2; exit 2; }
ECHOD="${CARGO_TARGET_DIR:-target}/release/echod"
[ -x "$ECHOD" ] || { echo "$ECHOD is missing: cargo build --release --locked -p echo-desk -p echod --bin echod" >&2; exit 1; }

home="$(mktemp -d)"
serve=""
trap '[ -n "$serve" ] && kill "$serve" 2>/dev/null; rm -rf "$home"' EXIT
printf '[llm]\nmax_tokens = 32\nrelease_after_secs = 3\n[memory]\nextraction = false\nembedder = "none"\n[side]\nmodel = "none"\n' >"$home/config.toml"
ECHO_DESK_HOME="$home" ECHO_LLM_KIND=local ECHO_LOCAL_MODEL="$MODEL" OLLAMA_HOST=127.0.0.1:9 \
  "$ECHOD" serve >"$home/serve.out" 2>"$home/serve.err" &
serve=$!

pss() { awk '/^Pss:/ { print int($2 / 1024) }' "/proc/$1/smaps_rollup"; }
workers() { cat /proc/"$serve"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -v '^$' || true; }
# Waits up to 30 s for `$1` to succeed.
until_ok() { for _ in $(seq 1 300); do if "$@"; then return 0; fi; sleep 0.1; done; echo "timed out: $*" >&2; exit 1; }

until_ok grep -q "listening on" "$home/serve.out"
port="$(grep -o '[0-9]*$' "$home/serve.out" | head -n 1)"
token="$(cat "$home/serve-token")"
echo "before the first turn: echod $(pss "$serve") MiB, no worker ($(workers | wc -l) running)"

curl -sf -N -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"session":"idle","input":"Name a colour."}' "http://127.0.0.1:$port/api/turns" | grep -q turn_finished
worker="$(workers | head -n 1)"
[ -n "$worker" ] || { echo "no worker process after a turn" >&2; exit 1; }
echo "after one turn: echod $(pss "$serve") MiB, its model worker $(pss "$worker") MiB"

no_worker() { [ -z "$(workers)" ]; }
until_ok no_worker
echo "after the quiet period: echod $(pss "$serve") MiB, no worker"
