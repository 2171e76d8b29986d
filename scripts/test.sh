#!/usr/bin/env bash
# npm test: install what is missing, build (e2e tests spawn the built processes), run jest.
# Jest's global setup starts throwaway Postgres and Redis unless DATABASE_URL / REDIS_URL are set.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian installs PostgreSQL binaries outside PATH.
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && PATH="$PATH:$d"; done
export PATH
NEED_REDIS=$([ -z "${REDIS_URL:-}" ] && echo 1 || echo 0) NEED_POSTGRES=$([ -z "${DATABASE_URL:-}" ] && echo 1 || echo 0) \
  bash scripts/ensure-system-deps.sh
bash scripts/ensure-built.sh
exec npx jest "$@"
