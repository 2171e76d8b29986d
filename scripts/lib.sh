# Sourced by start.sh and test.sh: PATH for Debian's PostgreSQL binaries, the system packages
# needed when DATABASE_URL / REDIS_URL are unset, dependencies and a current build.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && PATH="$PATH:$d"; done
export PATH
NEED_REDIS=$([ -z "${REDIS_URL:-}${REDIS_CLUSTER_NODES:-}" ] && echo 1 || echo 0) NEED_POSTGRES=$([ -z "${DATABASE_URL:-}" ] && echo 1 || echo 0) \
  bash scripts/ensure-system-deps.sh
bash scripts/ensure-built.sh
