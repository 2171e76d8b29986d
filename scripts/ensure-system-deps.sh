#!/usr/bin/env bash
# Installs redis-server (Debian) when it is needed and missing. PostgreSQL binaries are
# expected on PATH (initdb, postgres; callers add /usr/lib/postgresql/*/bin); installed from
# Debian's postgresql when absent.
set -euo pipefail
need_redis=${NEED_REDIS:-1}
need_pg=${NEED_POSTGRES:-1}
missing=()
[ "$need_redis" = 1 ] && ! command -v redis-server >/dev/null 2>&1 && missing+=(redis-server)
[ "$need_pg" = 1 ] && ! command -v initdb >/dev/null 2>&1 && missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "[cos] missing: ${missing[*]} — install them (e.g. sudo apt-get install -y ${missing[*]}) or set DATABASE_URL/REDIS_URL" >&2
  exit 1
fi
echo "[cos] installing ${missing[*]}…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
# Debian starts a system redis-server after install; we run our own on a free port.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
service redis-server stop >/dev/null 2>&1 || true
