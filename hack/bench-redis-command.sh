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
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
CONNS=${1:-50}
REQUESTS=${2:-100000}
K6=${K6:-$ROOT/bin/k6}
SIZE=${SIZE:-1024}
ROUNDS=${ROUNDS:-3}
need redis-server redis-benchmark redis-cli
setup_redis

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

PLAN=$(printf '{"scenarios":[{"name":"hset","type":"redis.command","address":"redis","startMs":0,"durationMs":120000,"vus":%d,"keySpace":100000,"requests":%d,"command":["HSET","key:__rand_int__","f","__data__"],"dataSize":%d,"params":{"serverCounts":"false"}}],"graceMs":1000}' "$CONNS" "$REQUESTS" "$SIZE")
run_k6() {
  redis-cli -p "$PORT" config resetstat >/dev/null
  BENCHRUN_PLAN=$PLAN BENCHRUN_TARGET="{\"redis\":{\"addrs\":[\"127.0.0.1:$PORT\"]}}" BENCHRUN_RUNNER=bench \
    "$K6" run -q --summary-mode disabled --out "benchrun=$WORK/result.json" "$ROOT/scripts/k6/benchrun.js" \
    >"$WORK/k6.log" 2>&1 || { cat "$WORK/k6.log" >&2; exit 1; }
  check "benchrun k6" "$(hsets)"
  k6_rate "$WORK/result.json" "$REQUESTS"
}

rbs=() k6s=()
for ((i = 1; i <= ROUNDS; i++)); do
  rbs+=("$(run_rb)")
  k6s+=("$(run_k6)")
  echo "round $i: redis-benchmark ${rbs[-1]} HSET/s, k6 ${k6s[-1]} HSET/s" >&2
done
rb=$(median "${rbs[@]}")
k6rate=$(median "${k6s[@]}")
echo "connections, requests:    $CONNS, $REQUESTS HSETs of $SIZE bytes (Redis counted exactly $REQUESTS for each tool, every round)"
echo "redis-benchmark HSET/s:   $rb (median of $ROUNDS; a fixed literal value)"
echo "benchrun k6 HSET/s:       $k6rate (median of $ROUNDS; redis.command, random __data__ per call)"
python3 -c "print(f'ratio k6/redis-benchmark: {$k6rate / $rb:.2f}')"
