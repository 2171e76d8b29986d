#!/usr/bin/env bash
# Installs dependencies when missing and rebuilds dist/ when any source is newer than it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[cos] installing dependencies…" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
stamp=dist/.build-stamp
if [ ! -f "$stamp" ] || [ -n "$(find api cli worker dashboard shared scripts tsconfig.json tsconfig.build.json package.json -newer "$stamp" -type f -print -quit)" ]; then
  echo "[cos] building…" >&2
  rm -rf dist
  npm run --silent build >&2
  touch "$stamp"
fi
