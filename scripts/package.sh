#!/usr/bin/env bash
# Builds the Debian package (README "Install"): the web UI, the app, then Tauri's own bundler
# (@tauri-apps/cli, pinned in package.json) writes
# $CARGO_TARGET_DIR/<profile>/bundle/deb/echo-desk_<version>_amd64.deb and this prints its path.
#
#   bash scripts/package.sh                    # the release package (what people install)
#   bash scripts/package.sh --profile debug    # a debug build's package
#   bash scripts/package.sh --profile debug --no-build
#                                              # package the binary already built (the tests:
#                                              # the test build's echo-desk, no second build)
#
# The package holds one engine binary, /usr/bin/echo-desk, with the web UI built into it;
# /usr/bin/echod runs it under the name `echod` (src-tauri/packaging/echod). The built-in model
# and the embedder are not in it: they are downloaded on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="${2:?--profile needs release or debug}"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "usage: bash scripts/package.sh [--profile release|debug] [--no-build]" >&2; exit 2 ;;
  esac
done
case "$profile" in
  release) cargo_profile=(--release) bundle_profile=() ;;
  debug) cargo_profile=() bundle_profile=(--debug) ;;
  *) echo "--profile is release or debug, not '$profile'" >&2; exit 2 ;;
esac

[ "$build" = 1 ] && bash scripts/install-build-deps.sh --desktop
command -v npm >/dev/null || { echo "Node.js >= 20.19 with npm is needed (the web UI and Tauri's bundler)" >&2; exit 1; }
[ -x node_modules/.bin/tauri ] || npm ci >&2
if [ "$build" = 1 ]; then
  npm run build >&2                                   # ui/dist, built into the binary
  cargo build "${cargo_profile[@]}" --locked -p echo-desk >&2
fi

target="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target/$profile/echo-desk"
[ -x "$bin" ] || { echo "$bin is missing: build it first, or leave out --no-build" >&2; exit 1; }
out="$target/$profile/bundle/deb"
rm -f "$out"/*.deb
# Tauri's bundler reads src-tauri/tauri.conf.json (the package's name, icons, launcher entry,
# dependencies, /usr/bin/echod) and takes the binary cargo built; it compiles nothing.
node_modules/.bin/tauri bundle --bundles deb "${bundle_profile[@]}" >&2
built=("$out"/*.deb)
[ ${#built[@]} = 1 ] && [ -f "${built[0]}" ] || { echo "expected one package in $out, found: ${built[*]}" >&2; exit 1; }
# The bundler names the file after the product ("Echo Desk_…"); Debian's name is
# <package>_<version>_<architecture>.deb.
deb="$out/$(dpkg-deb -f "${built[0]}" Package)_$(dpkg-deb -f "${built[0]}" Version)_$(dpkg-deb -f "${built[0]}" Architecture).deb"
[ "${built[0]}" = "$deb" ] || mv "${built[0]}" "$deb"
echo "$deb"
