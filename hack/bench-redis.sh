#!/usr/bin/env bash
# Compare benchrun's k6 (bin/k6, scripts/k6/redis_basic.js, scenario "get") with
# redis-benchmark on GET, same connection count, same loopback redis-server, same run:
# calls/s and CPU per call.
#
#   hack/bench-redis.sh [CONNS=50] [SECONDS=5]
#   env: K6=bin/k6 K6_BEFORE=(another k6 build, e.g. main's) BATCH=100 KEYSPACE=100000 ROUNDS=3
#
# Starts a private redis-server on a free 127.0.0.1 port (stopped on exit), fills KEYSPACE
# keys, then runs `redis-benchmark -t get -P 1 -c CONNS -r KEYSPACE` and k6 with VUS=CONNS
# (and K6_BEFORE the same way, when set) for about SECONDS each, alternating, ROUNDS times.
# Per tool and round:
#   calls/s         the tool's own count (redis-benchmark's GET/s; k6's result document) and
#                   Redis' own (INFO commandstats GET calls ÷ the tool's wall time, startup included)
#   CPU µs/call     user+system CPU of the load process (wait4: the whole process, k6's startup
#                   included) ÷ its calls
#   server µs/call  redis-server's user+system CPU (/proc/PID/stat) ÷ the GETs it counted
# Prints the medians and the median of the per-round ratios k6/redis-benchmark:
#   CPU per call    k6 µs/call ÷ redis-benchmark µs/call (below 1: k6 spends less CPU per call)
#   calls/s         k6 ÷ redis-benchmark
#   vs the server's own limit: k6 calls/s ÷ (10^6 ÷ redis-server µs/call in the same k6 run),
#                   the rate one full core of redis-server would give at that per-call cost
# The rounds alternate so a busy machine hurts all tools alike.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
CONNS=${1:-50}
SECS=${2:-5}
K6=${K6:-$ROOT/bin/k6}
K6_BEFORE=${K6_BEFORE:-}
KEYSPACE=${KEYSPACE:-100000}
BATCH=${BATCH:-100}
ROUNDS=${ROUNDS:-3}
need redis-server redis-benchmark redis-cli
[[ -z $K6_BEFORE || -x $K6_BEFORE ]] || { echo "K6_BEFORE=$K6_BEFORE is not executable" >&2; exit 1; }
setup_redis
RPID=$(cat "$WORK/redis.pid")

# Same keys for both tools: key:000000000000 .. key:<KEYSPACE-1>, 3-byte values.
redis-benchmark -p "$PORT" -t set -r "$KEYSPACE" -n $((KEYSPACE * 3)) -c 50 -P 16 -q >/dev/null

# redis-benchmark counts requests, not seconds: size -n from a short probe run.
probe=$(redis-benchmark -p "$PORT" -t get -P 1 -c "$CONNS" -r "$KEYSPACE" -n 100000 --csv |
  awk -F'"' '/"GET"/ {print $4}')
n=$(python3 -c "print(max(100000, int(float('$probe') * $SECS)))")

# Each run_* prints "calls/s redis-calls/s cpu-µs/call server-µs/call".
run_rb() {
  local m
  m=$(cpu_run "$RPID" get "$WORK/rb.csv" redis-benchmark -p "$PORT" -t get -P 1 -c "$CONNS" -r "$KEYSPACE" -n "$n" --csv)
  python3 - "$m" "$n" "$(awk -F'"' '/"GET"/ {print $4}' "$WORK/rb.csv")" <<'PY'
import sys
wall, cpu, scpu, scalls = map(float, sys.argv[1].split())
n, rate = int(sys.argv[2]), float(sys.argv[3])
if scalls != n:
    sys.exit(f"redis-benchmark: Redis counted {scalls:.0f} GETs, want {n}")
print(f"{rate:.0f} {scalls / wall:.0f} {cpu / n * 1e6:.2f} {scpu / scalls * 1e6:.2f}")
PY
}

run_k6() { # K6 binary
  local m
  m=$(SCENARIOS=get DURATION="${SECS}s" GRACE=1s VUS="$CONNS" BATCH="$BATCH" KEYSPACE="$KEYSPACE" \
    REDIS_ADDR="127.0.0.1:$PORT" cpu_run "$RPID" get "$WORK/k6.log" \
    "$1" run -q --summary-mode disabled --out "benchrun=$WORK/result.json" "$ROOT/scripts/k6/redis_basic.js")
  python3 - "$m" "$WORK/result.json" "$(k6_rate "$WORK/result.json")" <<'PY'
import json, sys
wall, cpu, scpu, scalls = map(float, sys.argv[1].split())
calls = json.load(open(sys.argv[2]))["scenarios"][0]["calls"]
if scalls != calls:
    sys.exit(f"k6: Redis counted {scalls:.0f} GETs, k6 recorded {calls}")
print(f"{sys.argv[3]} {scalls / wall:.0f} {cpu / calls * 1e6:.2f} {scpu / scalls * 1e6:.2f}")
PY
}

rbs=() k6s=() bef=()
for ((i = 1; i <= ROUNDS; i++)); do
  rbs+=("$(run_rb)")
  k6s+=("$(run_k6 "$K6")")
  line="round $i: redis-benchmark ${rbs[-1]} | k6 ${k6s[-1]}"
  if [[ -n $K6_BEFORE ]]; then
    bef+=("$(run_k6 "$K6_BEFORE")")
    line+=" | k6 before ${bef[-1]}"
  fi
  echo "$line   (calls/s, Redis-counted calls/s, CPU µs/call, redis-server µs/call)" >&2
done
python3 - "$CONNS" "$BATCH" "$ROUNDS" "$(printf '%s;' "${rbs[@]}")" "$(printf '%s;' "${k6s[@]}")" \
  "$(printf '%s;' "${bef[@]}")" "$K6_BEFORE" <<'PY'
import statistics, sys
conns, batch, rounds = sys.argv[1:4]
def rows(s): return [list(map(float, r.split())) for r in s.split(";") if r.strip()]
rb, k6, bef = rows(sys.argv[4]), rows(sys.argv[5]), rows(sys.argv[6])
med = lambda xs: statistics.median(xs)
def show(name, rs):
    print(f"{name:<27} {med([r[0] for r in rs]):>9,.0f} {med([r[1] for r in rs]):>13,.0f} "
          f"{med([r[2] for r in rs]):>12.2f} {med([r[3] for r in rs]):>16.2f}")
print(f"connections: {conns}; medians of {rounds} alternating rounds; k6 BATCH={batch} calls per iteration")
print(f"{'':<27} {'calls/s':>9} {'Redis-counted':>13} {'CPU µs/call':>12} {'server µs/call':>16}")
show("redis-benchmark -P 1", rb)
show("benchrun k6", k6)
if bef:
    show("benchrun k6 before", bef)
cpu = med([k[2] / r[2] for k, r in zip(k6, rb)])
print(f"ratio k6/redis-benchmark CPU per call: {cpu:.2f}  (goal <= 0.5: {'met' if cpu <= 0.5 else 'NOT met'})")
if bef:
    print(f"ratio k6-before/redis-benchmark CPU per call: {med([b[2] / r[2] for b, r in zip(bef, rb)]):.2f}"
          f"  (k6/k6-before: {med([k[2] / b[2] for k, b in zip(k6, bef)]):.2f})")
print(f"ratio k6/redis-benchmark calls/s: {med([k[0] / r[0] for k, r in zip(k6, rb)]):.2f}")
lim = med([1e6 / k[3] for k in k6])
print(f"k6 calls/s vs the server's own limit: {med([k[0] * k[3] / 1e6 for k in k6]):.2f}"
      f"  (limit: one redis-server core at its per-call CPU in the k6 runs, {lim:,.0f} calls/s;"
      f" redis-benchmark: {med([r[0] * r[3] / 1e6 for r in rb]):.2f} of {med([1e6 / r[3] for r in rb]):,.0f})")
PY
