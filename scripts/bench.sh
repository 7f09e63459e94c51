#!/usr/bin/env bash
# The headless benchmarks of docs/benchmarks.md in one command, on the build we ship: the
# `release` profile with the desktop package's selection (`-p echo-desk -p echod`), each
# figure with its baseline measured in the same run, ROUNDS rounds, and one JSON file with the
# commit, profile, date, CPU, load average and every figure's median, minimum and maximum.
#
#   bash scripts/bench.sh [--rounds N] [--out FILE] [NAME...]
#
# NAMEs (default: all): overhead, research, memory, embed, memory_list, context, automations,
# local_model, local_busy, locomo.
#   overhead     per-turn cost of our own process against a zero-latency mock model, text
#                turns and turns with one tool round trip (scripts/bench-overhead.sh);
#   research     the same for a research turn, by node (plan, search, read, write, check),
#                beside quick turns of the same run, against zero-latency search and page
#                servers (scripts/bench-research.sh);
#   memory       write rate, recall latency and first search at 100,000 memories, with 1,000
#                as the baseline in the same process (`echod bench memory`);
#   embed        the local embedder's throughput on 1,000 memory-sized sentences in batches of
#                32, beside the same sentences one at a time (`echod bench embed`);
#   memory_list  the memory page in headless Chromium against `echod serve` at 100,000
#                memories, with 1,000 as the baseline in the same run
#                (scripts/bench-memory-list.mjs; builds the UI);
#   context      context assembly (the `context` span) in a session of 1,000 messages with 10,000
#                memories, beside one of 10 messages with 100 memories as the baseline
#                (scripts/bench-context.sh);
#   automations  file event → run start, single files and a burst of 1,000, and idle CPU and
#                memory with 10 rules over 10,000 files against the same process before it
#                watched (scripts/bench-automations.sh);
#   local_model  the built-in model against llama.cpp's llama-bench built from the same source,
#                taking turns on the same file (scripts/bench-local.sh; needs ECHO_LOCAL_MODEL);
#   local_busy   the built-in model on an idle and on a busy machine, with the worker's OpenMP
#                spin count beside libgomp's default (scripts/bench-local-busy.sh);
#   locomo       recall on the LoCoMo conversations, BM25 only and hybrid without the
#                turns' dates beside hybrid (`echod bench locomo`); needs LOCOMO_DIR with
#                its JSON files (they are not in the repository; without them the figure
#                is recorded as not run, with the reason).
# The file goes to bench-results/ (ignored by git) unless --out says where.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
out=""
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=(overhead research memory embed memory_list context automations local_model local_busy locomo)
for n in "${names[@]}"; do
  case "$n" in overhead|research|memory|embed|memory_list|context|automations|local_model|local_busy|locomo) ;; *) echo "bench.sh: no benchmark $n" >&2; exit 2 ;; esac
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# The shipped build: no clippy wrapper, the release profile, the package's selection.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
echo "== cargo build --release (echo-desk + echod, as shipped; the mock model server apart)" >&2
cargo build --release --locked -p echo-desk -p echod --bin echod >&2
cargo build --release --locked -p echo-mock-model --bin mock-model >&2
export ECHO_BENCH_BUILT=1
echod="$CARGO_TARGET_DIR/release/echod"
if [[ " ${names[*]} " == *" memory_list "* ]]; then
  echo "== npm run build (the UI echod serves to the memory page benchmark)" >&2
  npm run build >&2
fi

commit="$(git rev-parse --short=7 HEAD)"
[ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"
[ -n "$out" ] || out="bench-results/bench-$(date -u +%Y-%m-%d)-$commit.json"
mkdir -p "$(dirname "$out")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

# Only the JSON lines of a benchmark's output count.
json_lines() { grep -E '^\{' || true; }
# One pretty-printed JSON report (everything from its first `{`) as one line.
one_line() { python3 -c 'import json, sys; t = sys.stdin.read(); print(json.dumps(json.loads(t[t.index("{"):])))'; }

for round in $(seq 1 "$rounds"); do
  for n in "${names[@]}"; do
    case "$n" in
      overhead)
        echo "== round $round: overhead" >&2
        # One pretty-printed report per mode, each after its `== mode: NAME` line.
        bash scripts/bench-overhead.sh | python3 -c '
import json, re, sys
for mode, body in re.findall(r"^== mode: (\S+)\n(.*?)(?=^== mode: |\Z)", sys.stdin.read(), re.S | re.M):
    print(json.dumps({"mode": mode, **json.loads(body)}))' >"$work/overhead-$round.jsonl"
        ;;
      research)
        echo "== round $round: research" >&2
        bash scripts/bench-research.sh | one_line >"$work/research-$round.jsonl"
        ;;
      memory)
        echo "== round $round: memory (1,000 and 100,000)" >&2
        "$echod" --home "$work/memory-home-$round" bench memory --sizes 1000,100000 | json_lines \
          >"$work/memory-$round.jsonl"
        ;;
      embed)
        echo "== round $round: embed (batches of 32, one at a time)" >&2
        "$echod" --home "$work/embed-home-$round" bench embed | json_lines >"$work/embed-$round.jsonl"
        ;;
      memory_list)
        echo "== round $round: memory_list (100,000 and 1,000)" >&2
        node scripts/bench-memory-list.mjs --profile release --echod "$echod" | json_lines >"$work/memory_list-$round.jsonl"
        ;;
      context)
        for size in "10 100" "1000 10000"; do
          read -r messages memories <<<"$size"
          echo "== round $round: context ($messages messages, $memories memories)" >&2
          MESSAGES="$messages" MEMORIES="$memories" bash scripts/bench-context.sh | one_line \
            >>"$work/context-$round.jsonl"
        done
        ;;
      automations)
        echo "== round $round: automations" >&2
        bash scripts/bench-automations.sh | one_line >"$work/automations-$round.jsonl"
        ;;
      locomo)
        if [ -z "${LOCOMO_DIR:-}" ] || ! ls "$LOCOMO_DIR"/*.json >/dev/null 2>&1; then
          echo "not run: LOCOMO_DIR does not name a folder with the LoCoMo JSON files" >"$work/locomo.skipped"
          continue
        fi
        echo "== round $round: locomo (BM25 only, hybrid without dates, hybrid)" >&2
        for method in bm25 hybrid-undated hybrid; do
          case "$method" in
            bm25) flags=(--embedder none) ;;
            hybrid-undated) flags=(--embedder local --undated) ;;
            hybrid) flags=(--embedder local) ;;
          esac
          "$echod" --home "$work/locomo-$method-$round" bench locomo "$LOCOMO_DIR"/*.json "${flags[@]}" |
            json_lines | sed "s/^{/{\"method\":\"$method\",/" >>"$work/locomo-$round.jsonl"
        done
        ;;
      local_model|local_busy) ;; # their own rounds, below: each alternates inside a round
    esac
  done
done

for n in "${names[@]}"; do
  case "$n" in local_model|local_busy) ;; *) continue ;; esac
  if [ -z "${ECHO_LOCAL_MODEL:-}" ] || [ ! -f "$ECHO_LOCAL_MODEL" ]; then
    echo "not run: ECHO_LOCAL_MODEL does not name a GGUF file (bash scripts/fetch-local-model.sh)" >"$work/$n.skipped"
    continue
  fi
  if [ "$n" = local_model ]; then
    echo "== local_model: $rounds rounds against llama-bench" >&2
    BENCH_LOCAL_JSON="$work/local_model.json" bash scripts/bench-local.sh "$ECHO_LOCAL_MODEL" "$rounds" >&2
  else
    echo "== local_busy: $rounds rounds, idle and busy" >&2
    BENCH_LOCAL_BUSY_JSON="$work/local_busy.json" bash scripts/bench-local-busy.sh "$ECHO_LOCAL_MODEL" "$rounds" >&2
  fi
done

load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$out" "$rounds" "$commit" "$load_start" "$load_end" "${names[@]}" <<'PY'
import glob, json, os, platform, statistics, sys, time

work, out, rounds, commit, load_start, load_end, *names = sys.argv[1:]
rounds = int(rounds)

def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()

def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}

def numbers(obj, prefix=""):
    """Every numeric leaf of a JSON object, by its dotted path."""
    if isinstance(obj, bool):
        return {}
    if isinstance(obj, (int, float)):
        return {prefix: obj}
    found = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            found.update(numbers(v, f"{prefix}.{k}" if prefix else k))
    return found

def by_key(lines, key):
    """Rounds' JSON lines grouped by what tells them apart (mode, size, method)."""
    groups = {}
    for line in lines:
        obj = json.loads(line)
        label = str(obj.get(key, "")) if key else ""
        groups.setdefault(label, []).append(obj)
    return groups

keys = {"overhead": "mode", "memory": "memories", "context": "memories", "locomo": "method"}
report = {
    "commit": commit,
    "profile": "release",
    "build": "cargo build --release --locked -p echo-desk -p echod --bin echod",
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "cpu": cpu_model(),
    "cpus": os.cpu_count(),
    "load_average": {"start": load_start, "end": load_end},
    "rounds": rounds,
    "benchmarks": {},
}
for name in names:
    skipped = os.path.join(work, f"{name}.skipped")
    if os.path.exists(skipped):
        report["benchmarks"][name] = {"not_run": open(skipped).read().strip()}
        continue
    if name in ("local_model", "local_busy"):
        report["benchmarks"][name] = json.load(open(os.path.join(work, f"{name}.json")))
        continue
    lines = []
    for r in range(1, rounds + 1):
        path = os.path.join(work, f"{name}-{r}.jsonl")
        lines.append([l for l in open(path) if l.strip()] if os.path.exists(path) else [])
    figures = {}
    for label in by_key([l for rl in lines for l in rl], keys.get(name)):
        per_round = [by_key(rl, keys.get(name)).get(label, []) for rl in lines]
        series = {}
        for objs in per_round:
            for obj in objs:
                for path, value in numbers(obj).items():
                    series.setdefault(path, []).append(value)
        figures[label or "all"] = {p: spread(v) for p, v in series.items() if len(v) == rounds}
    report["benchmarks"][name] = figures

with open(out, "w") as f:
    json.dump(report, f, indent=1)
    f.write("\n")
print(out)
PY
