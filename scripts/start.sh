#!/usr/bin/env bash
# npm start: install what is missing, build, then run api + worker (see scripts/start.ts).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec node dist/scripts/start.js
