#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer through cargo-fuzz, on the stable toolchain with no
# sanitizer) of the parsers that read outside bytes: config.toml, a model server's streamed and
# whole answers, SKILL.md, and a GGUF model file's header, metadata, tokenizer and template.
# Targets live in fuzz/; each asserts what its parser promises (an answer or an error that
# names the problem), so a broken promise is a crash like a panic is.
#
#   bash scripts/fuzz.sh                 # every target, 100,000 runs each (CI; libFuzzer seed 1)
#   bash scripts/fuzz.sh --runs N        # N runs each
#   bash scripts/fuzz.sh --minutes M     # M minutes each (docs/reliability.md: an hour each)
#   bash scripts/fuzz.sh ... TARGET...   # only these targets
#
# The corpus lives in $CARGO_TARGET_DIR/fuzz-corpus/TARGET (outside the clone), beside the seeds
# in fuzz/seeds/TARGET. Timed runs (--minutes) add what they find to it; runs by count (CI)
# start from it and keep what they find only for the run, so the test command does not slow
# down as the corpus grows. A crash is written to fuzz/artifacts/TARGET/ and ends the run with
# the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
runs=100000
seconds=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --minutes) seconds=$(( $2 * 60 )); shift 2 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(config model_stream model_body skill_md model_file)

TOOLS="${ECHO_TOOLS_DIR:-$HOME/.cache/echo-desk-tools}"
export PATH="$TOOLS/bin:$PATH"
if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
  echo "== cargo install cargo-fuzz $CARGO_FUZZ_VERSION (into $TOOLS)"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --root "$TOOLS"
fi
# The fuzz build is its own workspace with its own flags: no clippy wrapper.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
corpora="${CARGO_TARGET_DIR:-$PWD/target}/fuzz-corpus"

echo "== cargo fuzz build (release, debug assertions, no sanitizer)"
cargo fuzz build --fuzz-dir fuzz --sanitizer none
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

for t in "${targets[@]}"; do
  mkdir -p "$corpora/$t" "fuzz/artifacts/$t"
  if [ -n "$seconds" ]; then
    limit=(-max_total_time="$seconds"); dirs=("$corpora/$t" "fuzz/seeds/$t")
  else
    fresh="$(mktemp -d)"; limit=(-runs="$runs" -seed=1); dirs=("$fresh" "$corpora/$t" "fuzz/seeds/$t")
  fi
  echo "== fuzz $t (${limit[*]})"
  status=0
  cargo fuzz run --fuzz-dir fuzz --sanitizer none "$t" "${dirs[@]}" -- \
    "${limit[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 ||
    status=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added|Done )|panicked|SUMMARY|Test unit written|Reproduce with" "$log" || tail -n 30 "$log"
  if [ -z "$seconds" ]; then rm -rf "$fresh"; fi
  echo "   corpus: $(find "$corpora/$t" -type f | wc -l) inputs in $corpora/$t"
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $t failed; the input is in fuzz/artifacts/$t/ (cargo fuzz run --fuzz-dir fuzz -s none $t FILE replays it)" >&2
    exit 1
  fi
done
