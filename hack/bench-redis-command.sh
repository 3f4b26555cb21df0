#!/usr/bin/env bash
# Fixed-count custom command (the packetd table's shape): benchrun's k6 running a redis.command
# scenario through benchrun.js (`requests`, a budget shared by the VUs) vs redis-benchmark's
# custom command, same connections, same request count, same loopback redis-server.
#
#   hack/bench-redis-command.sh [CONNS=50] [REQUESTS=100000]   env: K6=bin/k6 SIZE=1024 ROUNDS=3
#
# Both send HSET key:<random 12 digits> f <SIZE bytes>: redis-benchmark 7 does not fill
# __data__ in custom commands, so it sends a fixed SIZE-byte literal; ours fills __data__ with
# SIZE random bytes per call (more work per call). Each round resets Redis' command stats and
# checks that Redis counted exactly REQUESTS HSETs for each tool (k6's fixed count is exact).
# Prints each tool's median HSET/s (requests / elapsed) and their ratio (k6 / redis-benchmark).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONNS=${1:-50}
REQUESTS=${2:-100000}
K6=${K6:-$ROOT/bin/k6}
SIZE=${SIZE:-1024}
ROUNDS=${ROUNDS:-3}
[[ -x "$K6" ]] || { echo "build $K6 first: make k6" >&2; exit 1; }
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
  { echo "needs redis-server and redis-benchmark (apt-get install -y redis-server)" >&2; exit 1; }

WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$PORT" --save '' --appendonly no --daemonize yes \
  --pidfile "$WORK/redis.pid" --logfile "$WORK/redis.log"
cleanup() {
  if [[ -f "$WORK/redis.pid" ]]; then
    local pid
    pid=$(cat "$WORK/redis.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

hsets() { redis-cli -p "$PORT" info commandstats | awk -F'[=:,]' '/^cmdstat_hset:/ {print $3}'; }
check() { # tool count
  [[ "$2" == "$REQUESTS" ]] || { echo "$1: Redis counted $2 HSETs, want $REQUESTS" >&2; exit 1; }
}
VALUE=$(head -c "$SIZE" /dev/zero | tr '\0' x)

run_rb() {
  redis-cli -p "$PORT" config resetstat >/dev/null
  local rate
  rate=$(redis-benchmark -p "$PORT" -c "$CONNS" -n "$REQUESTS" -r 100000 --csv HSET key:__rand_int__ f "$VALUE" |
    awk -F'"' 'NR == 2 {print $4}')
  check redis-benchmark "$(hsets)"
  echo "$rate"
}

PLAN=$(printf '{"scenarios":[{"name":"hset","type":"redis.command","startMs":0,"durationMs":120000,"vus":%d,"keySpace":100000,"requests":%d,"command":["HSET","key:__rand_int__","f","__data__"],"dataSize":%d,"params":{"serverCounts":"false"}}],"graceMs":1000}' "$CONNS" "$REQUESTS" "$SIZE")
run_k6() {
  redis-cli -p "$PORT" config resetstat >/dev/null
  BENCHRUN_PLAN=$PLAN BENCHRUN_TARGET="{\"redis\":{\"addrs\":[\"127.0.0.1:$PORT\"]}}" BENCHRUN_RUNNER=bench \
    "$K6" run -q --summary-mode disabled --out "benchrun=$WORK/result.json" "$ROOT/scripts/k6/benchrun.js" \
    >"$WORK/k6.log" 2>&1 || { cat "$WORK/k6.log" >&2; exit 1; }
  check "benchrun k6" "$(hsets)"
  python3 - "$WORK/result.json" "$REQUESTS" <<'PY'
import json, re, sys
from datetime import datetime
def ts(v):  # RFC 3339 with nanoseconds -> datetime (microseconds)
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-].*)$", v)
    frac = (m.group(2) or ".0")[:7]
    return datetime.fromisoformat(m.group(1) + frac + ("+00:00" if m.group(3) == "Z" else m.group(3)))
s = json.load(open(sys.argv[1]))["scenarios"][0]
if s["calls"] != int(sys.argv[2]) or s["errors"]:
    sys.exit(f"k6 made {s['calls']} calls ({s['errors']} errors), want {sys.argv[2]}")
print(f"{s['calls'] / (ts(s['lastEnd']) - ts(s['firstStart'])).total_seconds():.0f}")
PY
}

rbs=() k6s=()
for ((i = 1; i <= ROUNDS; i++)); do
  rbs+=("$(run_rb)")
  k6s+=("$(run_k6)")
  echo "round $i: redis-benchmark ${rbs[-1]} HSET/s, k6 ${k6s[-1]} HSET/s" >&2
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rb=$(median "${rbs[@]}")
k6rate=$(median "${k6s[@]}")
echo "connections, requests:    $CONNS, $REQUESTS HSETs of $SIZE bytes (Redis counted exactly $REQUESTS for each tool, every round)"
echo "redis-benchmark HSET/s:   $rb (median of $ROUNDS; a fixed literal value)"
echo "benchrun k6 HSET/s:       $k6rate (median of $ROUNDS; redis.command, random __data__ per call)"
python3 -c "print(f'ratio k6/redis-benchmark: {$k6rate / $rb:.2f}')"
