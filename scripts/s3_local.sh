#!/usr/bin/env bash
# A local S3 server (moto) on 127.0.0.1 with one bucket, to try the S3 DVC remote without an
# account (docs/clusters.md); the cluster tests use it too.
#
#   scripts/s3_local.sh start [PORT]   start moto_server on 127.0.0.1:PORT (default 9555) and
#                                      create the bucket; prints the settings to use
#   scripts/s3_local.sh stop           stop the server this script started (by its PID)
#
# Needs moto[server] in the venv (`make cluster-env`). Everything lives in memory: stopping
# the server loses the bucket. Environment: LECODE_S3_STATE (state directory, default
# /var/tmp/lecode-s3), LECODE_S3_BUCKET (default lecode), LECODE_VENV (default .venv).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${LECODE_VENV:-$ROOT/.venv}"
STATE="${LECODE_S3_STATE:-/var/tmp/lecode-s3}"
BUCKET="${LECODE_S3_BUCKET:-lecode}"
PIDFILE="$STATE/moto.pid"

die() {
  echo "[s3_local] ERROR: $*" >&2
  exit 1
}

running() {
  [ -s "$PIDFILE" ] && [ -d "/proc/$(cat "$PIDFILE")" ] &&
    grep -q moto "/proc/$(cat "$PIDFILE")/cmdline" 2>/dev/null
}

start() {
  local port="${1:-9555}" url
  url="http://127.0.0.1:$port"
  [ -x "$VENV/bin/moto_server" ] || die "$VENV/bin/moto_server not found: make cluster-env"
  mkdir -p "$STATE"
  if running; then
    port=$(cat "$STATE/port")
    url="http://127.0.0.1:$port"
    echo "[s3_local] already running (pid $(cat "$PIDFILE")) at $url" >&2
  else
    setsid "$VENV/bin/moto_server" -H 127.0.0.1 -p "$port" </dev/null >"$STATE/moto.log" 2>&1 &
    echo $! >"$PIDFILE"
    echo "$port" >"$STATE/port"
    local deadline=$((SECONDS + 30))
    until "$VENV/bin/python" -c "import urllib.request as u; u.urlopen('$url/', timeout=1)" \
      >/dev/null 2>&1; do
      running || {
        tail -n 20 "$STATE/moto.log" >&2
        die "moto_server exited (port $port taken?)"
      }
      ((SECONDS < deadline)) || die "moto_server not answering at $url after 30 s"
      sleep 0.3
    done
  fi
  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "$VENV/bin/python" - "$url" "$BUCKET" <<'EOF'
import sys

import boto3

url, bucket = sys.argv[1:]
s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
if bucket not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
    s3.create_bucket(Bucket=bucket)
EOF
  cat <<EOF
S3 server at $url, bucket $BUCKET (any credentials work; in memory only). A DVC remote on it:
  export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
  .venv/bin/dvc remote modify --local storage url s3://$BUCKET/lecode
  .venv/bin/dvc remote modify --local storage endpointurl $url
EOF
}

stop() {
  if running; then
    local pid
    pid=$(cat "$PIDFILE")
    kill -TERM "$pid"
    local deadline=$((SECONDS + 10))
    while [ -d "/proc/$pid" ] && ((SECONDS < deadline)); do sleep 0.2; done
    [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    echo "[s3_local] stopped moto_server (pid $pid)" >&2
  else
    echo "[s3_local] nothing to stop" >&2
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop ;;
  *)
    echo "usage: $0 start [PORT] | stop" >&2
    exit 2
    ;;
esac
