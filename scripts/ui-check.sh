#!/usr/bin/env bash
# Checks the web UI: install from the lock file, typecheck, lint, unit tests, build, and the
# browser end-to-end test (needs the debug `echod` and `mock-model` binaries and chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  apt-get update -qq && apt-get install -y chromium >/dev/null
fi
npm ci --no-audit --no-fund
npm run typecheck
npm run lint
npm test
npm run build
npm run e2e
