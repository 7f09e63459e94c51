#!/usr/bin/env bash
# Sets up and runs Echo Desk on a fresh Debian/Ubuntu machine (README "Set up and run"):
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

PACKAGES=(build-essential pkg-config ca-certificates protobuf-compiler libprotobuf-dev unzip python3-pip)
[ "$terminal" = 0 ] && PACKAGES+=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  echo "== installing ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v cargo >/dev/null || { echo "a Rust toolchain is needed: https://rustup.rs" >&2; exit 1; }

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
