#!/usr/bin/env bash
# Context assembly time (docs/benchmarks.md, "Long conversations"): a release echod against a
# zero-latency mock model, a session of 1,000 messages and 10,000 memories in a fresh data
# directory, then the `context` span of 100 more turns. The window is large and compression
# is off, so every measured request carries the whole session (the worst case for assembly).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"  # cargo's default unless set
PROFILE="${PROFILE:-release}"
MESSAGES="${MESSAGES:-1000}" MEMORIES="${MEMORIES:-10000}" TURNS="${TURNS:-100}"
# The same package selections as the test run (`cargo test --workspace`) and the desktop
# release build (`-p echo-desk`), so nothing is built twice: cargo unifies a
# shared dependency's features over the packages one command builds, so `-p echod` alone
# would compile some of them again with other features (`cargo tree -e features -p echod`
# against `-p echo-desk -p echod` shows which). The mock model is a separate process whose
# time is not in the measured span: its debug build is fine.
# scripts/bench.sh, which has built echod and the mock in release, skips this with
# ECHO_BENCH_BUILT=1 and runs the mock from there.
mock_bin="$CARGO_TARGET_DIR/debug/mock-model"
if [ -n "${ECHO_BENCH_BUILT:-}" ]; then
  mock_bin="$CARGO_TARGET_DIR/release/mock-model"
else
  cargo build --locked --workspace --tests
  if [ "$PROFILE" = release ]; then
    cargo build --release --locked -p echo-desk -p echod --bin echod
  fi
fi
bin="$CARGO_TARGET_DIR/$PROFILE"
work=$(mktemp -d)
echo '{"steps": [], "default": {"text": "Noted.", "chunks": 2}}' > "$work/script.json"
"$mock_bin" --script "$work/script.json" > "$work/mock.out" &
mock=$!
trap 'kill $mock 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^mock-model listening on //p' "$work/mock.out")
mkdir -p "$work/home"
cat > "$work/home/config.toml" <<'TOML'
[llm]
context_window = 1000000
[context]
compress_at = 1.0
[memory]
extraction = false
embedder = "none"
consolidate_after = 0
[side]
model = "none"
TOML
"$bin/echod" --home "$work/home" --provider openai --base-url "$url/v1" --model bench \
  bench context --messages "$MESSAGES" --memories "$MEMORIES" --turns "$TURNS"
