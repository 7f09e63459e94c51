#!/usr/bin/env bash
# Checks the web UI: install from the lock file, typecheck, lint, unit tests and the build
# (`ui/dist`, which `echod serve --ui` serves and the desktop app embeds). The browser
# end-to-end test (`npm run e2e`) runs after the Rust build, from scripts/test.sh.
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
