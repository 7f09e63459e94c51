#!/usr/bin/env bash
# Backend overhead per turn (docs/benchmarks.md): release builds of echod and the mock model
# server, a zero-latency mock on loopback, 200 turns of plain text and 200 turns with one tool
# round trip each (20 turns to a session), then 200 turns of plain text in one session, with
# keyword recall only and with the local embedder (the report's `growth` compares the first
# and the last 20 turns of the session), each mode in a fresh data directory. Prints one JSON
# report per mode, after a line `== mode: text|tool|long-keywords|long-embedder`. The
# embedder mode needs all-MiniLM-L6-v2 (bash scripts/fetch-embed-model.sh; found at
# $ECHO_EMBED_MODEL_DIR or in ~/.cache/echo-desk-models) and fails without it. echod is built with the shipped selection (`-p echo-desk -p
# echod`, as scripts/package.sh builds it), the mock server on its own; scripts/bench.sh, which
# has built both, skips the build with ECHO_BENCH_BUILT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"  # cargo's default unless set
TURNS="${TURNS:-200}"
if [ -z "${ECHO_BENCH_BUILT:-}" ]; then
  cargo build --release --locked -p echo-desk -p echod --bin echod
  cargo build --release --locked -p echo-mock-model --bin mock-model
fi
bin="$CARGO_TARGET_DIR/release"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

run_mode() {
  local mode=$1 script=$2 per_session=${3:-20} embedder=${4:-}
  # The mock's stdin is a FIFO this shell holds open; closing it ends the mock.
  rm -f "$work/mock.in"; mkfifo "$work/mock.in"
  "$bin/mock-model" --script "$script" --exit-on-stdin-eof > "$work/mock.out" < "$work/mock.in" &
  local mock=$!
  exec 3>"$work/mock.in"
  for _ in $(seq 100); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
  local url; url=$(sed -n 's/^mock-model listening on //p' "$work/mock.out")
  echo "== mode: $mode"
  mkdir -p "$work/home-$mode"
  # No side jobs: the built-in model in the shared cache would otherwise write titles and
  # follow-ups inside the measured turns.
  {
    if [ -n "$embedder" ]; then printf '[memory]\nembedder = "%s"\n' "$embedder"; fi
    printf '[side]\nmodel = "none"\n'
  } >"$work/home-$mode/config.toml"
  "$bin/echod" --home "$work/home-$mode" --provider openai --base-url "$url/v1" --model bench \
    bench overhead --turns "$TURNS" --per-session "$per_session" | tee "$work/report-$mode.json"
  exec 3>&-
  wait "$mock" || true
}

echo '{"steps": [], "default": {"text": "Short answer from the mock.", "chunks": 4}}' > "$work/text.json"
python3 - "$TURNS" > "$work/tools.json" <<'PY'
import json, sys
n = int(sys.argv[1])
steps = []
# Only the turn's own requests offer current_time; background calls (memory extraction) take
# the default instead of a step meant for a turn.
for i in range(n):
    steps.append({"when_tool": "current_time", "tool_calls": [{"id": f"call_{i}", "name": "current_time", "arguments": "{}"}], "chunks": 2})
    steps.append({"when_tool": "current_time", "text": "It is late enough.", "chunks": 4})
print(json.dumps({"steps": steps, "default": {"text": "Nothing to note.", "chunks": 1}}))
PY
run_mode text "$work/text.json"
run_mode tool "$work/tools.json"
run_mode long-keywords "$work/text.json" "$TURNS" none
run_mode long-embedder "$work/text.json" "$TURNS" local
# The embedder mode measures nothing it claims unless recall really ranked by meaning.
if ! grep -q "\"recall_by_meaning\": $TURNS," "$work/report-long-embedder.json"; then
  echo "bench-overhead.sh: the long-embedder mode ran without the local embedder (bash scripts/fetch-embed-model.sh)" >&2
  exit 1
fi
