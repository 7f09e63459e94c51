#!/usr/bin/env bash
# Engine overhead of a research turn, by node (docs/benchmarks.md): release builds of echod and
# the mock model server, a zero-latency mock on loopback, a SearXNG-like search service and the
# pages it finds on another loopback port (python3, answering at once), then `echod bench
# research`: TURNS quick turns as the baseline, each followed by a research turn (one plan
# call, two recalls from a memory with nothing in it, two searches, four pages read with a
# notes call each, the report, the check), in a fresh data directory. Prints the JSON report.
# scripts/bench.sh, which has built both binaries, skips the build with ECHO_BENCH_BUILT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"  # cargo's default unless set
TURNS="${TURNS:-20}"
if [ -z "${ECHO_BENCH_BUILT:-}" ]; then
  cargo build --release --locked -p echo-desk -p echod --bin echod
  cargo build --release --locked -p echo-mock-model --bin mock-model
fi
bin="$CARGO_TARGET_DIR/release"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# The search service and its pages: /search?q=… names two pages, /page/N is one; every page
# holds the sentence the scripted notes quote.
python3 - "$work/web.port" <<'PY' &
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EVIDENCE = "Family rooms cost 120 EUR a night."

class Web(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        base = "http://%s:%d" % self.server.server_address
        if self.path.startswith("/search"):
            first = 3 if "train" in self.path else 1
            body = json.dumps({"results": [
                {"title": "Kyoto page %d" % n, "url": "%s/page/%d" % (base, n),
                 "content": "about Kyoto", "publishedDate": "2026-03-01"}
                for n in (first, first + 1)]})
            kind = "application/json"
        else:
            n = self.path.rsplit("/", 1)[-1]
            body = ("<!doctype html><html><head><title>Kyoto page %s</title></head><body>"
                    "<h1>Kyoto page %s</h1><p>%s</p><p>The train from the station takes "
                    "%s0 minutes.</p></body></html>" % (n, n, EVIDENCE, n))
            kind = "text/html"
        data = body.encode()
        # One write: head and body in separate packets would wait for the client's delayed
        # ACK (about 40 ms), which is the server's time, not the engine's.
        head = "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (kind, len(data))
        self.wfile.write(head.encode() + data)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Web)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
PY

python3 - "$TURNS" > "$work/script.json" <<'PY'
import json, sys
n = int(sys.argv[1])
plan = {"sub_questions": [
    {"question": "kyoto family hotels", "look_for": "price a night"},
    {"question": "kyoto trains", "look_for": "minutes"}]}
notes = {"notes": [{"quote": "Family rooms cost 120 EUR a night.", "supports": "the price"}]}
report = ("Short answer: a family room fits the budget [1].\n\n## Hotels\n\nRooms near the "
          "station [2].\n\n## Trains\n\nTrains are quick [3][4].")
print(json.dumps({
    "steps": [
        {"when_tool": "research_plan", "times": n, "chunks": 2, "tool_calls": [
            {"id": "p1", "name": "research_plan", "arguments": json.dumps(plan)}]},
        {"when_tool": "research_notes", "times": 4 * n, "chunks": 2, "tool_calls": [
            {"id": "n1", "name": "research_notes", "arguments": json.dumps(notes)}]},
        {"when_tool": "research_check", "times": n, "chunks": 2, "tool_calls": [
            {"id": "c1", "name": "research_check", "arguments": json.dumps({"unsupported": []})}]},
    ],
    # Quick turns, the report and background calls.
    "default": {"text": report, "chunks": 4}}))
PY

rm -f "$work/mock.in"; mkfifo "$work/mock.in"
"$bin/mock-model" --script "$work/script.json" --exit-on-stdin-eof > "$work/mock.out" < "$work/mock.in" &
exec 3>"$work/mock.in"
for _ in $(seq 100); do
  grep -q listening "$work/mock.out" 2>/dev/null && [ -s "$work/web.port" ] && break
  sleep 0.05
done
url=$(sed -n 's/^mock-model listening on //p' "$work/mock.out")
[ -n "$url" ] && [ -s "$work/web.port" ] || { echo "bench-research.sh: the servers did not start" >&2; exit 1; }
home="$work/home"
mkdir -p "$home"
printf '[side]\nmodel = "none"\n' >"$home/config.toml"  # titles and follow-ups are not research
echod() { "$bin/echod" --home "$home" --provider openai --base-url "$url/v1" --model bench "$@"; }
for tool in web_search web_fetch; do
  echod rules add --tool "$tool" --decision allow >/dev/null
done
ECHO_SEARCH_KIND=searxng ECHO_SEARCH_URL="http://127.0.0.1:$(cat "$work/web.port")" \
  echod bench research --turns "$TURNS"
exec 3>&-
