#!/usr/bin/env bash
# npm start: install what is missing, build, then run api + worker (see scripts/start.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian installs PostgreSQL binaries outside PATH.
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && PATH="$PATH:$d"; done
export PATH
NEED_REDIS=$([ -z "${REDIS_URL:-}" ] && echo 1 || echo 0) NEED_POSTGRES=$([ -z "${DATABASE_URL:-}" ] && echo 1 || echo 0) \
  bash scripts/ensure-system-deps.sh
bash scripts/ensure-built.sh
exec node dist/scripts/start.js
