#!/usr/bin/env bash
# The built-in model against llama.cpp's own llama-bench, in one run, on the same GGUF file,
# with the same threads and CPU flags:
#   - builds `echod` in release (the runtime people use);
#   - builds llama-bench against the very llama.cpp source the runtime links (the vendored
#     copy in the llama-cpp-sys-2 crate of Cargo.lock), with the flags that crate's build
#     gives ggml for this workspace's CPU target (x86-64-v3: AVX, AVX2, BMI2, F16C, FMA,
#     SSE4.2; no native tuning; OpenMP, with the spin count the worker uses);
#   - takes turns: `echod bench local-model --runs 1`, then llama-bench at the prompt length
#     and cache depth that run reported (prompt processing at depth 0, generation at the
#     depth of the whole prompt), ROUNDS times;
#   - prints each side's median and the ratios.
#
#   bash scripts/bench-local.sh [MODEL.gguf] [ROUNDS]     (default: $ECHO_LOCAL_MODEL, 3)
#   (llama-bench is built in $LLAMA_BENCH_DIR, default $CARGO_TARGET_DIR/llama-bench;
#   with BENCH_LOCAL_JSON=FILE the medians, ranges and ratios are also written there as JSON)
#
# Needs cmake and a C++ compiler (scripts/install-build-deps.sh installs them), python3 with
# pip, and the PyPI registry once (the pinned source package, cached beside the build).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-${ECHO_LOCAL_MODEL:-}}"
ROUNDS="${2:-3}"
[ -n "$MODEL" ] && [ -f "$MODEL" ] || { echo "usage: bench-local.sh MODEL.gguf [ROUNDS] (or set ECHO_LOCAL_MODEL)" >&2; exit 2; }
TARGET="${CARGO_TARGET_DIR:-target}"
THREADS="${THREADS:-$(python3 -c 'import os; print(len({tuple(open(f"/sys/devices/system/cpu/cpu{c}/topology/core_cpus_list").read().split()) for c in os.sched_getaffinity(0)}))')}"

if [ -z "${ECHO_BENCH_BUILT:-}" ]; then
  echo "== cargo build --release -p echod" >&2
  cargo build --release --locked -p echo-desk -p echod --bin echod >&2
fi
ECHOD="$TARGET/release/echod"

# The runtime's llama.cpp: the source vendored in the llama-cpp-sys-2 crate of Cargo.lock.
# That copy leaves out llama.cpp's tools, so llama-bench's own two files come from a pinned
# source package that carries them (llama-cpp-python's sdist, checked by its SHA-256) and are
# built against the runtime's llama.cpp, not the package's.
SRC="$(cargo metadata --format-version 1 --locked | python3 -c '
import json, os, sys
meta = json.load(sys.stdin)
pkg = next(p for p in meta["packages"] if p["name"] == "llama-cpp-sys-2")
print(os.path.join(os.path.dirname(pkg["manifest_path"]), "llama.cpp"))')"
BUILD="${LLAMA_BENCH_DIR:-$TARGET/llama-bench}"
SDIST=llama_cpp_python-0.3.36.tar.gz
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
mkdir -p "$BUILD/project"
if ! echo "$SDIST_SHA256  $BUILD/$SDIST" | sha256sum -c --status 2>/dev/null; then
  echo "== pip download llama-cpp-python==0.3.36 (source, for llama-bench's two files)" >&2
  python3 -m pip download --quiet --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d "$BUILD" >&2
  echo "$SDIST_SHA256  $BUILD/$SDIST" | sha256sum -c --quiet
fi
tar -xzf "$BUILD/$SDIST" -C "$BUILD/project" --strip-components=5 \
  llama_cpp_python-0.3.36/vendor/llama.cpp/tools/llama-bench/llama-bench.cpp \
  llama_cpp_python-0.3.36/vendor/llama.cpp/tools/llama-bench/main.cpp
cat >"$BUILD/project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.14)
project(llama-bench C CXX)
add_subdirectory("$SRC" llama.cpp)
add_executable(llama-bench llama-bench.cpp main.cpp)
target_link_libraries(llama-bench PRIVATE llama-common llama)
target_compile_features(llama-bench PRIVATE cxx_std_17)
CMAKE
echo "== llama-bench against $SRC" >&2
# The flags llama-cpp-sys-2's build script gives ggml for target-cpu=x86-64-v3.
cmake -S "$BUILD/project" -B "$BUILD/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF -DCMAKE_C_FLAGS=-march=x86-64-v3 -DCMAKE_CXX_FLAGS=-march=x86-64-v3 \
  -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_F16C=ON -DGGML_FMA=ON -DGGML_SSE42=ON \
  -DGGML_OPENMP=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_COMMON=ON >/dev/null
cmake --build "$BUILD/build" --target llama-bench -j "$(nproc)" >&2
LLAMA_BENCH="$BUILD/build/llama-bench"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round: echod bench local-model" >&2
  "$ECHOD" bench local-model --model "$MODEL" --runs 1 --json >"$out/ours-$round.json"
  read -r P N D < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
print(r["prompt_tokens"], r["generated_tokens"], r["generation_depth"])' "$out/ours-$round.json")
  echo "== round $round: llama-bench -p $P (depth 0), -n $N at depth $D, $THREADS threads" >&2
  # The spin count echod's model worker runs with (crates/echo-local/src/process.rs).
  GOMP_SPINCOUNT=10000 "$LLAMA_BENCH" -m "$MODEL" -t "$THREADS" -r 1 -p "$P" -n 0 -d 0 -o json >"$out/pp-$round.json"
  GOMP_SPINCOUNT=10000 "$LLAMA_BENCH" -m "$MODEL" -t "$THREADS" -r 1 -p 0 -n "$N" -d "$D" -o json >"$out/tg-$round.json"
done

python3 - "$out" "$ROUNDS" "$MODEL" "$THREADS" "${BENCH_LOCAL_JSON:-}" <<'EOF'
import json, statistics, sys
out, rounds, model, threads, json_out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ours = [json.load(open(f"{out}/ours-{i}.json")) for i in range(1, rounds + 1)]
runs = [o["runs"][0] for o in ours]
pp = [json.load(open(f"{out}/pp-{i}.json"))[0]["avg_ts"] for i in range(1, rounds + 1)]
tg = [json.load(open(f"{out}/tg-{i}.json"))[0]["avg_ts"] for i in range(1, rounds + 1)]
med = statistics.median
m = lambda k: med(r[k] for r in runs)
print(f"model {model}, {threads} threads, {rounds} rounds (medians)")
print(f"{'':34}{'echod':>10}{'llama-bench':>13}{'ratio':>8}")
print(f"{'prompt tokens/s (' + str(runs[0]['prompt_tokens']) + ' tok, depth 0)':34}{m('prompt_tokens_per_s'):10.1f}{med(pp):13.1f}{m('prompt_tokens_per_s') / med(pp):8.2f}")
print(f"{'generation tokens/s (depth ' + str(runs[0]['generation_depth']) + ')':34}{m('generation_tokens_per_s'):10.1f}{med(tg):13.1f}{m('generation_tokens_per_s') / med(tg):8.2f}")
print(f"follow-up turn, first token: {m('follow_up_ttft_ms'):.0f} ms ({runs[0]['follow_up_cached_tokens']} of {runs[0]['follow_up_prompt_tokens']} prompt tokens cached)")
print(f"forced call: {m('forced_tokens_per_s'):.1f} tokens/s, the same prompt as text {m('unforced_tokens_per_s'):.1f}: ratio {m('forced_tokens_per_s') / m('unforced_tokens_per_s'):.2f}")
print(f"weights loaded in {med(o['load_ms'] for o in ours):.0f} ms; first request (worker started, file read, weights loaded, one token) {med(o['first_request_ms'] for o in ours):.0f} ms")
print(f"peak RSS: echod {med(o['peak_rss_mib'] for o in ours):.0f} MiB, its model worker {med(o['worker_peak_rss_mib'] or 0 for o in ours):.0f} MiB")
if json_out:
    def spread(values):
        values = list(values)
        return {"median": med(values), "min": min(values), "max": max(values), "runs": values}
    ours_pp = [r["prompt_tokens_per_s"] for r in runs]
    ours_tg = [r["generation_tokens_per_s"] for r in runs]
    json.dump({
        "model": model, "threads": int(threads), "rounds": rounds,
        "prompt_tokens": runs[0]["prompt_tokens"], "generation_depth": runs[0]["generation_depth"],
        "prompt_tokens_per_s": spread(ours_pp), "llama_bench_prompt_tokens_per_s": spread(pp),
        "prompt_ratio": med(ours_pp) / med(pp),
        "generation_tokens_per_s": spread(ours_tg), "llama_bench_generation_tokens_per_s": spread(tg),
        "generation_ratio": med(ours_tg) / med(tg),
        "follow_up_ttft_ms": spread(r["follow_up_ttft_ms"] for r in runs),
        "forced_tokens_per_s": spread(r["forced_tokens_per_s"] for r in runs),
        "unforced_tokens_per_s": spread(r["unforced_tokens_per_s"] for r in runs),
        "forced_ratio": m("forced_tokens_per_s") / m("unforced_tokens_per_s"),
        "load_ms": spread(o["load_ms"] for o in ours),
        "first_request_ms": spread(o["first_request_ms"] for o in ours),
        "peak_rss_mib": spread(o["peak_rss_mib"] for o in ours),
        "worker_peak_rss_mib": spread(o["worker_peak_rss_mib"] or 0 for o in ours),
    }, open(json_out, "w"), indent=1)
EOF
