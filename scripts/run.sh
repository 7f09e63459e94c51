#!/usr/bin/env bash
# Sets up and runs Echo Desk on a fresh Debian/Ubuntu machine (README "Build from source"):
# installs the system packages that are missing (with sudo unless root), builds the web UI
# and the app, fetches the built-in model (SmolLM2-135M-Instruct, ~100 MB, once), then starts
# the desktop app — or `echod chat` in the terminal when there is no display.
#
# With no provider configured and no Ollama running, Echo Desk answers with the built-in
# model: no API key and no network needed once this has run once.
#
#   bash scripts/run.sh            # desktop app (or terminal chat without a display)
#   bash scripts/run.sh --terminal # terminal chat
set -euo pipefail
cd "$(dirname "$0")/.."

terminal=0
[ "${1:-}" = "--terminal" ] && terminal=1
[ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && terminal=1

if [ "$terminal" = 1 ]; then bash scripts/install-build-deps.sh; else bash scripts/install-build-deps.sh --desktop; fi

# The built-in model, checked against its SHA-256, and the embedding model memory search uses
# (both kept in ~/.cache/echo-desk-models, where Echo Desk looks for them; it downloads
# nothing by itself).
bash scripts/fetch-local-model.sh >/dev/null
bash scripts/fetch-embed-model.sh >/dev/null

if [ "$terminal" = 1 ]; then
  exec cargo run --release --locked -p echod -- chat
fi
command -v npm >/dev/null || { echo "Node.js >= 20.19 with npm is needed for the desktop app's UI" >&2; exit 1; }
[ -d node_modules ] || npm ci
[ -f ui/dist/index.html ] || npm run build
exec cargo run --release --locked -p echo-desk
