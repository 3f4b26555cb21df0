#!/usr/bin/env bash
# Compare benchrun's k6 (bin/k6, scripts/k6/redis_basic.js, scenario "get") with
# redis-benchmark on GET, same connection count, same loopback redis-server, same run.
#
#   hack/bench-redis.sh [CONNS=50] [SECONDS=5]   env: K6=bin/k6 BATCH=100 KEYSPACE=100000 ROUNDS=3
#
# Starts a private redis-server on a free 127.0.0.1 port (stopped on exit), fills KEYSPACE
# keys, then runs `redis-benchmark -t get -P 1 -c CONNS -r KEYSPACE` and k6 with VUS=CONNS
# for about SECONDS each, alternating, ROUNDS times, and prints each tool's median GET rate
# and their ratio (k6 / redis-benchmark). The rounds alternate so a busy machine hurts both.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
CONNS=${1:-50}
SECS=${2:-5}
K6=${K6:-$ROOT/bin/k6}
KEYSPACE=${KEYSPACE:-100000}
BATCH=${BATCH:-100}
ROUNDS=${ROUNDS:-3}
need redis-server redis-benchmark redis-cli
setup_redis

# Same keys for both tools: key:000000000000 .. key:<KEYSPACE-1>, 3-byte values.
redis-benchmark -p "$PORT" -t set -r "$KEYSPACE" -n $((KEYSPACE * 3)) -c 50 -P 16 -q >/dev/null

# redis-benchmark counts requests, not seconds: size -n from a short probe run.
probe=$(redis-benchmark -p "$PORT" -t get -P 1 -c "$CONNS" -r "$KEYSPACE" -n 100000 --csv |
  awk -F'"' '/"GET"/ {print $4}')
n=$(python3 -c "print(max(100000, int(float('$probe') * $SECS)))")

run_rb() {
  redis-benchmark -p "$PORT" -t get -P 1 -c "$CONNS" -r "$KEYSPACE" -n "$n" --csv |
    awk -F'"' '/"GET"/ {print $4}'
}

run_k6() {
  SCENARIOS=get DURATION="${SECS}s" GRACE=1s VUS="$CONNS" BATCH="$BATCH" KEYSPACE="$KEYSPACE" \
    REDIS_ADDR="127.0.0.1:$PORT" "$K6" run -q --summary-mode disabled --out "benchrun=$WORK/result.json" \
    "$ROOT/scripts/k6/redis_basic.js" >"$WORK/k6.log" 2>&1 || { cat "$WORK/k6.log" >&2; exit 1; }
  k6_rate "$WORK/result.json"
}

rbs=() k6s=()
for ((i = 1; i <= ROUNDS; i++)); do
  rbs+=("$(run_rb)")
  k6s+=("$(run_k6)")
  echo "round $i: redis-benchmark ${rbs[-1]} GET/s, k6 ${k6s[-1]} GET/s" >&2
done
rb=$(median "${rbs[@]}")
k6rate=$(median "${k6s[@]}")
echo "connections:            $CONNS"
echo "redis-benchmark GET/s:  $rb (median of $ROUNDS)"
echo "benchrun k6 GET/s:      $k6rate (median of $ROUNDS; BATCH=$BATCH calls per iteration)"
python3 -c "print(f'ratio k6/redis-benchmark: {$k6rate / $rb:.2f}')"
