#!/usr/bin/env bash
# Start/stop a local HeTu benchmark server (examples/hetu-bench) from the cached runtime that
# hack/hetu-runtime.sh builds. Everything listens on 127.0.0.1 only.
#
#   hack/hetu-server.sh start  [--port 2466] [--layers full|msgpack] [--authkey-file FILE]
#                              [--workers 2] [--instance bench]
#                              [--redis-url redis://HOST:PORT/DB | --redis-port PORT]
#                              [--debug] [--client-send-limits '[[10,1],[27,5]]']
#   hack/hetu-server.sh status [--port 2466]
#   hack/hetu-server.sh stop   [--port 2466]
#
# The auth key can also come from the HETU_AUTH_KEY environment variable; it is never printed
# nor put on a command line. Without --redis-url a private redis-server is started on
# 127.0.0.1:--redis-port (default: port+1) and stopped with the server.
#
# How it runs: `unshare --mount --pid --fork --kill-child` + chroot into the rootfs. /proc and
# /dev/shm are mounted inside that private mount namespace, so they vanish with the server (no
# unmount step, nothing leaks to the host's mount table), and the server's worker processes
# live in their own PID namespace: when its first process dies, the kernel kills them all.
# State (pidfiles, logs): ${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/hetu-server/<port>/.
set -euo pipefail

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APP_SRC="$ROOT_DIR/examples/hetu-bench"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
ROOTFS="$CACHE/hetu-runtime/rootfs"

log() { printf '[hetu-server] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

CMD=${1:-}; [[ -n "$CMD" ]] || usage; shift
PORT=2466 LAYERS=full WORKERS=2 INSTANCE=bench REDIS_URL="" REDIS_PORT="" AUTHKEY_FILE=""
DEBUG=0 CLIENT_LIMITS="[]"
while (($#)); do
  case "$1" in
    --port) PORT=$2; shift 2 ;;
    --layers) LAYERS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --instance) INSTANCE=$2; shift 2 ;;
    --redis-url) REDIS_URL=$2; shift 2 ;;
    --redis-port) REDIS_PORT=$2; shift 2 ;;
    --authkey-file) AUTHKEY_FILE=$2; shift 2 ;;
    --debug) DEBUG=1; shift ;;
    --client-send-limits) CLIENT_LIMITS=$2; shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown argument: $1" ;;
  esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] || die "--port must be a number"
[[ "$LAYERS" == full || "$LAYERS" == msgpack ]] || die "--layers must be full or msgpack"
[[ "$WORKERS" =~ ^-?[0-9]+$ ]] || die "--workers must be a number"
[[ "$INSTANCE" =~ ^[A-Za-z0-9_-]+$ ]] || die "--instance must match [A-Za-z0-9_-]+"
[[ "$CLIENT_LIMITS" =~ ^[][0-9,\ ]*$ ]] || die "--client-send-limits must look like [[10,1],[27,5]]"
REDIS_PORT=${REDIS_PORT:-$((PORT + 1))}
[[ "$REDIS_PORT" =~ ^[0-9]+$ ]] || die "--redis-port must be a number"

STATE="$CACHE/hetu-server/$PORT"
APPDIR_IN_ROOT="/srv/hetu-bench-$PORT"
APPDIR="$ROOTFS$APPDIR_IN_ROOT"
PIDFILE="$STATE/hetu.pid"          # pid of the `unshare` process (parent of the PID namespace)
REDIS_PIDFILE="$STATE/redis.pid"   # only when we started redis-server ourselves

alive() {  # pidfile's process exists and is not a zombie
  local pid; pid=$(cat "$1" 2>/dev/null) || return 1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" != Z* ]]
}
http_ok() { curl -sf --max-time 2 "http://127.0.0.1:$PORT/" >/dev/null 2>&1; }

stop_server() {
  if alive "$PIDFILE"; then
    local pid child i
    pid=$(cat "$PIDFILE")
    child=$(pgrep -P "$pid" || true)   # HeTu's main process = PID 1 of the namespace
    log "stopping HeTu (pid $pid) ..."
    [[ -n "$child" ]] && kill -TERM "$child" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      log "HeTu did not stop in 10s, killing it"
      kill -KILL "$pid" 2>/dev/null || true   # --kill-child takes the namespace down with it
      for i in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
  fi
  rm -f "$PIDFILE"
  local rpid
  rpid=$(cat "$REDIS_PIDFILE" 2>/dev/null || true)
  if [[ -n "$rpid" ]] && kill -0 "$rpid" 2>/dev/null; then
    log "stopping redis-server (pid $rpid)"
    kill -TERM "$rpid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$REDIS_PIDFILE"
  # Mounts live in the server's private namespace; this only catches leftovers from a crash
  # of an older version of this script.
  local m
  for m in "$ROOTFS/dev/shm" "$ROOTFS/proc"; do
    if mountpoint -q "$m" 2>/dev/null; then umount -l "$m" && log "unmounted stale $m"; fi
  done
}

case "$CMD" in
  status)
    if alive "$PIDFILE" && http_ok; then
      log "running: ws://127.0.0.1:$PORT/hetu/<instance> (pid $(cat "$PIDFILE"))"; exit 0
    elif alive "$PIDFILE"; then
      log "process alive (pid $(cat "$PIDFILE")) but GET / does not answer"; exit 1
    fi
    log "not running on port $PORT"; exit 3 ;;
  stop)
    stop_server
    log "stopped (port $PORT)"; exit 0 ;;
  start) ;;
  *) usage ;;
esac

# ---- start ----
START=$(date +%s.%N)
[[ $(id -u) -eq 0 ]] || die "must run as root (chroot and namespaces need it)"
[[ -f "$ROOTFS/.benchrun-venv" && -x "$ROOTFS/opt/hetu/bin/hetu" ]] \
  || die "HeTu runtime missing: run hack/hetu-runtime.sh first"
alive "$PIDFILE" && die "already running on port $PORT (pid $(cat "$PIDFILE")); stop it first"
if curl -s --max-time 1 "http://127.0.0.1:$PORT/" >/dev/null 2>&1; then
  die "port $PORT is already in use by another process"
fi
mkdir -p "$STATE"
chmod 700 "$STATE"

AUTH_KEY="${HETU_AUTH_KEY:-}"
if [[ -n "$AUTHKEY_FILE" ]]; then
  [[ -r "$AUTHKEY_FILE" ]] || die "cannot read --authkey-file $AUTHKEY_FILE"
  AUTH_KEY=$(tr -d '\r\n' <"$AUTHKEY_FILE")
fi
[[ -n "$AUTH_KEY" && "$LAYERS" == msgpack ]] && die "an auth key needs --layers full (crypto layer)"

# 1. Redis (ours, unless a URL was given).
trap 'log "start failed, cleaning up"; stop_server' ERR
if [[ -z "$REDIS_URL" ]]; then
  command -v redis-server >/dev/null || die "redis-server not installed (hack/hetu-runtime.sh installs it)"
  if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    die "something already answers on redis port $REDIS_PORT; pass --redis-url or --redis-port"
  fi
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --daemonize yes --pidfile "$REDIS_PIDFILE" --logfile "$STATE/redis.log" --dir "$STATE" \
    >/dev/null
  for _ in $(seq 1 50); do
    [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
  done
  [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]] \
    || die "redis-server did not start (see $STATE/redis.log)"
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
fi

# 2. App + config + environment file inside the rootfs (the env file keeps the key off argv).
rm -rf "$APPDIR"
mkdir -p "$APPDIR/logs"
cp "$APP_SRC/app.py" "$APP_SRC/config.yml" "$APPDIR/"
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
umask 077
{
  echo "HETU_LISTEN=$(q "127.0.0.1:$PORT")"
  echo "HETU_LAYERS=$(q "$LAYERS")"
  echo "HETU_WORKERS=$(q "$WORKERS")"
  echo "HETU_INSTANCE=$(q "$INSTANCE")"
  echo "HETU_REDIS_URL=$(q "$REDIS_URL")"
  echo "HETU_AUTH_KEY=$(q "$AUTH_KEY")"
  echo "HETU_DEBUG=$(q "$DEBUG")"
  echo "HETU_CLIENT_SEND_LIMITS=$(q "$CLIENT_LIMITS")"
} >"$APPDIR/server.env"
umask 022

# 3. HeTu in its own mount + PID namespace, chrooted into the rootfs, detached (setsid).
INNER='set -e
mount -t proc proc "$ROOTFS/proc"
mount -t tmpfs -o mode=1777,size=256m shm "$ROOTFS/dev/shm"
exec chroot "$ROOTFS" /usr/bin/env -i PATH=/opt/hetu/bin:/usr/bin:/bin HOME=/root \
  LANG=C.UTF-8 PYTHONUNBUFFERED=1 APPDIR="$APPDIR_IN_ROOT" /bin/sh -c \
  '\''cd "$APPDIR" && set -a && . ./server.env && set +a && exec hetu start --config=config.yml'\'''
ROOTFS="$ROOTFS" APPDIR_IN_ROOT="$APPDIR_IN_ROOT" setsid \
  unshare --mount --pid --fork --kill-child --propagation private /bin/sh -c "$INNER" \
  </dev/null >"$STATE/hetu.log" 2>&1 &
echo $! >"$PIDFILE"

# 4. Wait for GET / to answer.
for _ in $(seq 1 300); do
  http_ok && break
  alive "$PIDFILE" || { tail -n 30 "$STATE/hetu.log" >&2; die "HeTu exited during start (log: $STATE/hetu.log)"; }
  sleep 0.2
done
http_ok || { tail -n 30 "$STATE/hetu.log" >&2; die "HeTu did not answer GET / within 60s"; }
# GET / answers as soon as one worker is up; wait for all of them (Sanic logs "Worker ready").
want=$WORKERS; ((want > 0)) || want=$(nproc)
for _ in $(seq 1 300); do
  (( $(grep -ac '^Worker ready' "$STATE/hetu.log" || true) >= want )) && break
  alive "$PIDFILE" || { tail -n 30 "$STATE/hetu.log" >&2; die "HeTu exited during start"; }
  sleep 0.2
done
(( $(grep -ac '^Worker ready' "$STATE/hetu.log" || true) >= want )) \
  || log "warning: fewer than $want workers reported ready after 60s (see $STATE/hetu.log)"
trap - ERR
rm -f "$APPDIR/server.env"   # read once at start; do not keep the auth key at rest
keynote="no auth key"; [[ -n "$AUTH_KEY" ]] && keynote="auth key set"
REDIS_SHOWN=$(printf '%s' "$REDIS_URL" | sed -E 's#//[^@/]*@#//***@#')   # hide credentials
log "up in $(printf '%.1f' "$(echo "$(date +%s.%N) - $START" | bc)")s: ws://127.0.0.1:$PORT/hetu/$INSTANCE" \
    "(layers $LAYERS, $keynote, workers $WORKERS, redis $REDIS_SHOWN, pid $(cat "$PIDFILE"), log $STATE/hetu.log)"
