#!/usr/bin/env bash
# Suite 10 of docs/reliability.md: the CI entry point (.ci/run, the README's test command with
# what it installs) N times in a row on a fresh clone of this repository, beside a parallel
# build that runs the whole time (a from-scratch `cargo build -j 2` of echo-core, again and
# again, in a target directory of its own). Prints one line per run and the pass rate.
# Usage: bash scripts/test-under-load.sh [RUNS]   (default 10; about 30 min a run on 2 cores)
# The clone builds into $ECHO_LOAD_TARGET (default ~/.cache/echo-desk-target-load), so it does
# not disturb the warm target directory of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
out="$(mktemp -d)"
clone="$out/clone"
git clone -q . "$clone"
export CARGO_TARGET_DIR="${ECHO_LOAD_TARGET:-$HOME/.cache/echo-desk-target-load}"
load_target="$out/load-target"

(
  while [ ! -e "$out/stop" ]; do
    rm -rf "$load_target"
    CARGO_TARGET_DIR="$load_target" cargo build --offline -q -j 2 -p echo-core \
      --manifest-path "$clone/Cargo.toml" >/dev/null 2>&1 || sleep 5
  done
) &
load=$!
trap 'touch "$out/stop"; kill $load 2>/dev/null || true' EXIT

passed=0
for i in $(seq 1 "$runs"); do
  t0=$SECONDS
  if (cd "$clone" && bash .ci/run) >"$out/run-$i.log" 2>&1; then
    passed=$((passed + 1))
    result=passed
  else
    result="FAILED (log: $out/run-$i.log)"
  fi
  echo "run $i: $result in $((SECONDS - t0)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "$passed of $runs runs passed"
[ "$passed" -eq "$runs" ]
