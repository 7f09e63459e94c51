#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages that building Echo Desk needs and that are missing
# (with sudo unless root): the engine's (a C compiler, protoc with its well-known .proto
# files), and with --desktop the desktop app's (WebKitGTK, GTK, appindicator, rsvg, xdo).
# scripts/run.sh and scripts/package.sh call it.
set -euo pipefail
PACKAGES=(build-essential pkg-config ca-certificates protobuf-compiler libprotobuf-dev cmake libclang-dev unzip python3-pip)
[ "${1:-}" = "--desktop" ] && PACKAGES+=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev)
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
