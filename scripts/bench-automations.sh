#!/usr/bin/env bash
# Automations (docs/benchmarks.md): event → run start for single files and a burst of 1,000,
# and idle CPU/memory with 10 watch rules over 10,000 files against the same process before
# it watched (the baseline, in the same run). echod from $PROFILE (default `release`, built
# with the shipped selection `-p echo-desk -p echod`; `dev` for a debug build), the mock model
# server beside it, a zero-latency mock on loopback, a fresh data directory. Prints one JSON
# report. scripts/bench.sh, which has built both in release, skips the build with
# ECHO_BENCH_BUILT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"  # cargo's default unless set
PROFILE="${PROFILE:-release}"
if [ -z "${ECHO_BENCH_BUILT:-}" ]; then
  if [ "$PROFILE" = release ]; then
    cargo build --release --locked -p echo-desk -p echod --bin echod
    cargo build --release --locked -p echo-mock-model --bin mock-model
  else
    cargo build --profile "$PROFILE" --locked -p echod -p echo-mock-model
  fi
fi
dir=$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")
bin="$CARGO_TARGET_DIR/$dir"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
echo '{"steps": [], "default": {"text": "Filed.", "chunks": 2}}' > "$work/script.json"
"$bin/mock-model" --script "$work/script.json" --exit-on-stdin-eof > "$work/mock.out" < <(sleep 100000) &
for _ in $(seq 100); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^mock-model listening on //p' "$work/mock.out")
printf '[memory]\nextraction = false\nembedder = "none"\n[side]\nmodel = "none"\n' > "$work/config.toml.in"
mkdir -p "$work/home" && cp "$work/config.toml.in" "$work/home/config.toml"
"$bin/echod" --home "$work/home" --provider openai --base-url "$url/v1" --model bench \
  bench automations --dir "$work/watched" "$@"
