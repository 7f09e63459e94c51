#!/usr/bin/env bash
# The built-in model on a busy machine: `echod bench local-model` with the spin count its
# worker runs with (GOMP_SPINCOUNT=10000, crates/echo-local/src/process.rs) beside libgomp's
# own default (300,000, the baseline), taking turns, first on an idle machine, then beside
# BUSY processes that spin on the CPU the whole time (default: one per core).
#
#   bash scripts/bench-local-busy.sh [MODEL.gguf] [ROUNDS]   (default: $ECHO_LOCAL_MODEL, 3)
#   (BUSY=N sets the busy processes; with BENCH_LOCAL_BUSY_JSON=FILE the medians, ranges and
#   ratios are also written there as JSON)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-${ECHO_LOCAL_MODEL:-}}"
ROUNDS="${2:-3}"
BUSY="${BUSY:-$(nproc)}"
[ -n "$MODEL" ] && [ -f "$MODEL" ] || { echo "usage: bench-local-busy.sh MODEL.gguf [ROUNDS] (or set ECHO_LOCAL_MODEL)" >&2; exit 2; }
TARGET="${CARGO_TARGET_DIR:-target}"

if [ -z "${ECHO_BENCH_BUILT:-}" ]; then
  echo "== cargo build --release -p echod" >&2
  (unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS; cargo build --release --locked -p echo-desk -p echod --bin echod >&2)
fi
ECHOD="$TARGET/release/echod"

out="$(mktemp -d)"
busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  busy=()
}
trap 'stop_busy; rm -rf "$out"' EXIT

# One measured run with the given spin count ("" = the worker's own).
measure() {
  local file="$1" spin="$2"
  if [ -n "$spin" ]; then
    GOMP_SPINCOUNT="$spin" "$ECHOD" bench local-model --model "$MODEL" --runs 1 --json >"$file"
  else
    (unset GOMP_SPINCOUNT OMP_WAIT_POLICY; "$ECHOD" bench local-model --model "$MODEL" --runs 1 --json >"$file")
  fi
}

for round in $(seq 1 "$ROUNDS"); do
  for machine in idle busy; do
    if [ "$machine" = busy ]; then
      for _ in $(seq 1 "$BUSY"); do
        sh -c 'while :; do :; done' &
        busy+=("$!")
      done
    fi
    echo "== round $round, $machine machine: libgomp's default spin, then the worker's" >&2
    measure "$out/default-$machine-$round.json" 300000
    measure "$out/worker-$machine-$round.json" ""
    stop_busy
  done
done

python3 - "$out" "$ROUNDS" "$MODEL" "$BUSY" "${BENCH_LOCAL_BUSY_JSON:-}" <<'EOF'
import json, statistics, sys
out, rounds, model, busy, json_out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
med = statistics.median
keys = ["prompt_tokens_per_s", "generation_tokens_per_s", "forced_tokens_per_s"]
def runs(spin, machine):
    return [json.load(open(f"{out}/{spin}-{machine}-{i}.json"))["runs"][0] for i in range(1, rounds + 1)]
print(f"model {model}, {rounds} rounds (medians); busy = {busy} spinning processes")
print(f"{'':28}{'spin 300,000':>14}{'spin 10,000':>13}{'ratio':>8}")
def spread(values):
    return {"median": med(values), "min": min(values), "max": max(values), "runs": values}
report = {"model": model, "busy_processes": int(busy)}
for machine in ["idle", "busy"]:
    default, worker = runs("default", machine), runs("worker", machine)
    for k in keys:
        d, w = spread([r[k] for r in default]), spread([r[k] for r in worker])
        ratio = w["median"] / d["median"]
        print(f"{machine + ' ' + k.replace('_per_s', '/s').replace('_', ' '):28}{d['median']:14.1f}{w['median']:13.1f}{ratio:8.2f}")
        report[f"{machine}_{k}"] = {"default_spin": d, "worker_spin": w, "ratio": ratio}
if json_out:
    with open(json_out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
EOF
