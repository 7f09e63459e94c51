#!/usr/bin/env bash
# Desktop app figures for docs/benchmarks.md, each beside a bare Tauri 2 app measured in the
# same run (tests/bare-tauri: one window, one static page, the same Tauri and WebKitGTK, the
# same profile), and printed as ratios to it:
#
# - start to the main page's first load (each binary logs `main page loaded ms=…`, counted
#   from its process start);
# - idle memory after a fresh start: proportional set size (PSS) summed over the process and
#   its WebKit processes (so shared libraries are not counted once per process), 5 s after
#   the page loaded, with a breakdown per process;
# - idle memory after use: the app started under tauri-driver (WebDriver), one chat turn
#   against the scripted mock model (with memory recall) and one memory search through the
#   app's IPC, then idle: 5 s with what the use loaded kept (`memory.release_after_secs = 0`),
#   and 8 s with it let go after a 2 s quiet period (the WebDriver session itself adds to
#   the web process, so these figures err against the app);
# - the time to quit after SIGTERM, the binary's size, and the .deb's when it was built.
#
#   cargo build --release --locked -p echo-desk
#   cargo build --release --locked -p echo-bare-tauri
#   cargo build --locked -p echo-mock-model            # the mock model (any profile)
#   bash scripts/with-desktop-session.sh bash scripts/bench-desktop.sh [release|debug] [RUNS]
#
# Each run starts on a fresh data directory. With write access to /proc/sys/vm/drop_caches
# the page cache is dropped before each of the two timed fresh starts of a run (cold);
# otherwise those starts are warm. The starts under WebDriver (after use) are always warm and
# time nothing. Every line says which kind of start it measured. The app runs as a person's
# does: the built-in model and the embedder where scripts/fetch-*-model.sh put them (the
# embedder is used if present), memory extraction off.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-release}"
runs="${2:-5}"
target="${CARGO_TARGET_DIR:-$PWD/target}"  # cargo's default unless set
app="$target/$profile/echo-desk"
bare="$target/$profile/bare-tauri"
for bin in "$app" "$bare"; do
  [ -x "$bin" ] || { echo "$bin is missing: cargo build --$profile --locked -p echo-desk -p echo-bare-tauri (each on its own, see above)" >&2; exit 1; }
done
mock=""
for p in "$profile" debug release; do
  [ -x "$target/$p/mock-model" ] && { mock="$target/$p/mock-model"; break; }
done
[ -n "$mock" ] || { echo "the mock model is missing: cargo build --locked -p echo-mock-model" >&2; exit 1; }
export PATH="${ECHO_TOOLS_DIR:-$HOME/.cache/echo-desk-tools}/bin:$PATH"
command -v tauri-driver >/dev/null || { echo "tauri-driver is missing: cargo install tauri-driver --locked" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl is missing: apt-get install curl" >&2; exit 1; }
[ -n "${DISPLAY:-}" ] || { echo "no DISPLAY: run through scripts/with-desktop-session.sh" >&2; exit 1; }
embed_dir="$(bash scripts/fetch-embed-model.sh 2>/dev/null | tail -n 1 || true)"

tree_pids() {
  local pid=$1 child
  echo "$pid"
  for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do tree_pids "$child"; done
}
pss_kb() { awk '/^Pss:/{print $2}' /proc/"$1"/smaps_rollup 2>/dev/null || echo 0; }
# "total_kb name=kb name=kb …" over the process tree of $1.
tree_pss() {
  local total=0 pid kb name parts=()
  for pid in $(tree_pids "$1"); do
    kb=$(pss_kb "$pid"); kb=${kb:-0}
    name=$(tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null | awk '{n=$1; sub(".*/", "", n); print n}')
    total=$((total + kb)); parts+=("${name:-?}=$((kb / 1024))")
  done
  echo "$total ${parts[*]}"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# Before a timed start: $cache says whether the page cache could be dropped (cold) or not (warm).
drop_caches() {
  if { sync && echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then cache=cold; cold=$((cold + 1)); else cache=warm; fi
  timed=$((timed + 1))
}
fresh_home() {  # $1: memory.release_after_secs (default: the app's own)
  local home; home="$(mktemp -d)"
  printf '[side]\nmodel = "none"\n[memory]\nextraction = false\n%s' "${1:+release_after_secs = $1
}" > "$home/config.toml"
  echo "$home"
}

# Starts $1 on a fresh home, waits for its page, idles 5 s; prints "ms pss_kb quit_ms breakdown".
start_idle_quit() {
  local bin=$1 home log pid ms line quit t0 t1
  home="$(fresh_home)"; log="$home/stderr.log"
  ECHO_DESK_HOME="$home" ECHO_EMBED_MODEL_DIR="$embed_dir" ECHO_LOG="echo_desk=info" "$bin" 2> "$log" &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q "main page loaded" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  ms=$(sed -n 's/.*main page loaded ms=\([0-9]*\).*/\1/p' "$log" | head -n 1)
  [ -n "$ms" ] || { echo "$bin: no 'main page loaded' line:" >&2; cat "$log" >&2; kill "$pid"; exit 1; }
  sleep 5
  line=$(tree_pss "$pid")
  t0=$(date +%s%N); kill -TERM "$pid"; wait "$pid" || true; t1=$(date +%s%N)
  quit=$(( (t1 - t0) / 1000000 ))
  rm -rf "$home"
  echo "$ms ${line%% *} $quit ${line#* }"
}

# WebDriver over HTTP (tauri-driver → WebKitWebDriver → the app).
wd() { curl -sf -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "http://127.0.0.1:$wd_port$2"; }
wd_until() {  # $1 session, $2 script returning true when done, $3 what
  local i
  for i in $(seq 1 300); do
    wd POST "/session/$1/execute/sync" "{\"script\": \"$2\", \"args\": []}" | grep -q '"value":true' && return 0
    sleep 0.1
  done
  echo "timed out waiting for $3" >&2; return 1
}

# The app under WebDriver: one turn, one memory search, then $2 s idle with
# memory.release_after_secs = $1; prints "pss_kb breakdown".
used_idle() {
  local home script mock_pid mock_url driver_pid session element pid line
  home="$(fresh_home "$1")"
  script="$home/mock.json"
  printf '{"steps": [], "default": {"text": "An answer from the mock model, streamed.", "chunks": 4}}\n' > "$script"
  coproc MOCK { exec "$mock" --script "$script" --exit-on-stdin-eof; }
  mock_pid=$MOCK_PID
  read -r line <&"${MOCK[0]}"; mock_url="${line##* }/v1"
  wd_port=$(( 20000 + RANDOM % 20000 ))
  ECHO_DESK_HOME="$home" ECHO_EMBED_MODEL_DIR="$embed_dir" ECHO_LLM_KIND=openai \
    ECHO_LLM_BASE_URL="$mock_url" ECHO_LLM_MODEL=primary \
    tauri-driver --port "$wd_port" --native-port $((wd_port + 1)) >/dev/null 2>&1 &
  driver_pid=$!
  for _ in $(seq 1 200); do wd GET /status >/dev/null 2>&1 && break; sleep 0.05; done
  session=$(wd POST /session "{\"capabilities\": {\"alwaysMatch\": {\"tauri:options\": {\"application\": \"$app\"}}}}" \
    | sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p')
  [ -n "$session" ] || { echo "no WebDriver session with $app" >&2; kill "$driver_pid"; exit 1; }
  wd_until "$session" "return !!document.querySelector('.composer textarea')" "the composer"
  element=$(wd POST "/session/$session/element" '{"using": "css selector", "value": ".composer textarea"}' \
    | sed -n 's/.*"element-6066-11e4-a52e-4f735466cecf":"\([^"]*\)".*/\1/p')
  wd POST "/session/$session/element/$element/value" '{"text": "What did I say about the garden?\ue007"}' >/dev/null
  wd_until "$session" "const m = document.querySelectorAll('.message.assistant'); return m.length > 0 && m[m.length - 1].dataset.status === 'completed'" "the answer"
  wd POST "/session/$session/execute/async" \
    '{"script": "const done = arguments[arguments.length - 1]; window.__TAURI_INTERNALS__.invoke(\"memory_search\", {request: {query: \"garden\"}}).then(() => done(true), (e) => done(String(e)));", "args": []}' \
    | grep -q '"value":true' || { echo "the memory search failed" >&2; exit 1; }
  sleep "$2"
  pid=$(for p in $(pgrep -f "^$app"); do [ "$(readlink /proc/"$p"/exe)" = "$(readlink -f "$app")" ] && echo "$p"; done | head -n 1)
  line=$(tree_pss "$pid")
  wd DELETE "/session/$session" >/dev/null || true
  kill "$driver_pid" 2>/dev/null || true; wait "$driver_pid" 2>/dev/null || true
  exec {MOCK[1]}>&-; wait "$mock_pid" 2>/dev/null || true
  rm -rf "$home"
  echo "$line"
}

cache=warm cold=0 timed=0
bare_ms=() bare_pss=() app_ms=() app_pss=() app_quit=() used_pss=() released_pss=()
for i in $(seq 1 "$runs"); do
  drop_caches
  read -r ms pss quit parts < <(start_idle_quit "$bare")
  echo "run $i bare-tauri ($cache start): main page loaded ${ms} ms, idle PSS $((pss / 1024)) MiB ($parts), quit ${quit} ms"
  bare_ms+=("$ms"); bare_pss+=("$pss")
  drop_caches
  read -r ms pss quit parts < <(start_idle_quit "$app")
  echo "run $i echo-desk ($cache start):  main page loaded ${ms} ms, idle PSS $((pss / 1024)) MiB ($parts), quit ${quit} ms"
  app_ms+=("$ms"); app_pss+=("$pss"); app_quit+=("$quit")
  read -r pss parts < <(used_idle 0 5)
  echo "run $i echo-desk (warm start) after one turn and one memory search, kept: idle PSS $((pss / 1024)) MiB ($parts)"
  used_pss+=("$pss")
  read -r pss parts < <(used_idle 2 8)
  echo "run $i echo-desk (warm start) after one turn and one memory search, let go: idle PSS $((pss / 1024)) MiB ($parts)"
  released_pss+=("$pss")
done

m() { printf '%s\n' "$@" | median; }
bms=$(m "${bare_ms[@]}") bpss=$(m "${bare_pss[@]}") ams=$(m "${app_ms[@]}") apss=$(m "${app_pss[@]}")
upss=$(m "${used_pss[@]}") rpss=$(m "${released_pss[@]}")
bsize=$(stat -c %s "$bare") asize=$(stat -c %s "$app")
echo "profile=$profile runs=$runs embedder=${embed_dir:-none}"
echo "fresh starts: $cold of $timed cold (page cache dropped before them), the rest warm; starts after use: warm"
echo "start to main page loaded: echo-desk $ams ms, bare Tauri $bms ms, ratio $(ratio "$ams" "$bms")"
echo "idle PSS, fresh start: echo-desk $((apss / 1024)) MiB, bare Tauri $((bpss / 1024)) MiB, ratio $(ratio "$apss" "$bpss")"
echo "idle PSS after one turn and one memory search, kept: echo-desk $((upss / 1024)) MiB, ratio to bare Tauri $(ratio "$upss" "$bpss")"
echo "idle PSS after one turn and one memory search, let go after a quiet period: echo-desk $((rpss / 1024)) MiB, ratio to bare Tauri $(ratio "$rpss" "$bpss")"
echo "quit after SIGTERM: echo-desk $(m "${app_quit[@]}") ms"
echo "binary: echo-desk $((asize / 1024 / 1024)) MiB, bare Tauri $((bsize / 1024 / 1024)) MiB, ratio $(ratio "$asize" "$bsize")"
deb=$(ls "$target/$profile"/bundle/deb/echo-desk_*.deb 2>/dev/null | head -n 1 || true)
if [ -n "$deb" ]; then
  echo "package: $(basename "$deb") $(( $(stat -c %s "$deb") / 1024 / 1024 )) MiB, installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
else
  echo "package: not built (bash scripts/package.sh --profile $profile)"
fi
