#!/usr/bin/env bash
# npm run test:python: install what is missing, build, then run the Python SDK's tests against
# the built service started by dist/scripts/test-python-sdk.js (arguments go to it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec node dist/scripts/test-python-sdk.js "$@"
