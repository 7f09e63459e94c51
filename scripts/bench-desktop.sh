#!/usr/bin/env bash
# Desktop app figures for docs/benchmarks.md: start to the main page's first load, the idle
# memory of the whole app (echo-desk plus its WebKit processes) with quick ask closed, the
# time to quit, and the binary size.
#
#   bash scripts/with-desktop-session.sh bash scripts/bench-desktop.sh [release|debug] [RUNS]
#
# Each run starts echo-desk on a fresh data directory, waits for its "main page loaded" log
# line (the time it reports is from process start), lets it idle 5 s, sums VmRSS over the
# process tree (PSS), then sends SIGTERM and times the exit. With write access to
# /proc/sys/vm/drop_caches the page cache is dropped before each run (a cold start);
# otherwise the runs are warm-cache starts, which the output says.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-release}"
runs="${2:-5}"
target="${CARGO_TARGET_DIR:-$PWD/target}"  # cargo's default unless set
bin="$target/$profile/echo-desk"
[ -x "$bin" ] || { echo "$bin is missing: cargo build --$profile -p echo-desk (debug: cargo build -p echo-desk)" >&2; exit 1; }
[ -n "${DISPLAY:-}" ] || { echo "no DISPLAY: run through scripts/with-desktop-session.sh" >&2; exit 1; }

tree_pids() {
  local pid=$1 child
  echo "$pid"
  for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do tree_pids "$child"; done
}
# Proportional set size (shared pages divided among the processes that map them), so WebKit
# libraries mapped by three processes are not counted three times.
tree_pss_kb() {
  local total=0 pid kb
  for pid in $(tree_pids "$1"); do
    kb=$(awk '/^Pss:/{print $2}' /proc/"$pid"/smaps_rollup 2>/dev/null || echo 0)
    total=$((total + ${kb:-0}))
  done
  echo "$total"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }

cache="warm"
starts=() rsses=() procs=() quits=()
for i in $(seq 1 "$runs"); do
  if { sync && echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then cache="cold"; fi
  home="$(mktemp -d)"; log="$home/stderr.log"
  printf '[memory]\nextraction = false\n' > "$home/config.toml"
  ECHO_DESK_HOME="$home" ECHO_LOG="echo_desk=info" "$bin" 2> "$log" &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q "main page loaded" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  ms=$(sed -n 's/.*main page loaded ms=\([0-9]*\).*/\1/p' "$log" | head -n 1)
  [ -n "$ms" ] || { echo "no 'main page loaded' line:" >&2; cat "$log" >&2; kill "$pid"; exit 1; }
  sleep 5
  rss=$(tree_pss_kb "$pid"); n=$(tree_pids "$pid" | wc -l)
  t0=$(date +%s%N); kill -TERM "$pid"; wait "$pid" || true; t1=$(date +%s%N)
  quit=$(( (t1 - t0) / 1000000 ))
  echo "run $i: main page loaded ${ms} ms, idle memory (PSS) $((rss / 1024)) MiB over $n processes, quit ${quit} ms"
  starts+=("$ms"); rsses+=("$rss"); procs+=("$n"); quits+=("$quit")
  rm -rf "$home"
done
echo "profile=$profile runs=$runs cache=$cache"
echo "start to main page loaded: median $(printf '%s\n' "${starts[@]}" | median) ms"
echo "idle memory, PSS of app + WebKit processes, quick ask closed: median $(( $(printf '%s\n' "${rsses[@]}" | median) / 1024 )) MiB over $(printf '%s\n' "${procs[@]}" | median) processes"
echo "quit after SIGTERM: median $(printf '%s\n' "${quits[@]}" | median) ms"
echo "binary size: $(( $(stat -c %s "$bin") / 1024 / 1024 )) MiB ($bin)"
