#!/usr/bin/env bash
# npm test: install what is missing, build (e2e tests spawn the built processes), run jest.
# Jest's global setup starts throwaway Postgres and Redis unless DATABASE_URL / REDIS_URL are set.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec node_modules/.bin/jest "$@"
