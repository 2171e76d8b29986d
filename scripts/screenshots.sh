#!/usr/bin/env bash
# npm run screenshots: the dashboard's pages to docs/img/ (see scripts/screenshots.ts).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec node dist/scripts/screenshots.js
