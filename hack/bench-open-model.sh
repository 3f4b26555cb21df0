#!/usr/bin/env bash
# Open model (arrival rate, coordinated-omission corrected) against a private loopback
# redis-server, through benchrun.js and our k6's Go open loop (client.open):
#
#   (a) rate accuracy below saturation: for each rate of OPEN_RATES, a constant-arrival GET
#       scenario of OPEN_SECONDS; prints target, achieved (CPS from the actual sends, and Redis'
#       own GET count over the scheduled time) and their ratios to the target.
#   (b) a 1 s SIGSTOP of redis-server in the middle of a PAUSE_RATE run: the corrected p99
#       (from each call's intended start) next to the uncorrected service-time p99 (from its
#       actual send), the baseline a closed-loop tool reports.
#
#   hack/bench-open-model.sh     env: K6=bin/k6 OPEN_RATES="5000 20000" OPEN_SECONDS=8 PAUSE_RATE=2000 MAX_VUS=32
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
K6=${K6:-$ROOT/bin/k6}
OPEN_RATES=${OPEN_RATES:-5000 20000}
OPEN_SECONDS=${OPEN_SECONDS:-8}
PAUSE_RATE=${PAUSE_RATE:-2000}
MAX_VUS=${MAX_VUS:-32}
need redis-server redis-cli
setup_redis
go build -o "$WORK/benchrun" "$ROOT/cmd/benchrun"

# run_open NAME RATE SECONDS: one arrival-rate GET scenario; the summary JSON goes to WORK/NAME.json.
run_open() {
  local ms=$(($3 * 1000))
  local plan
  plan=$(printf '{"scenarios":[{"name":"%s","type":"redis.get","startMs":0,"durationMs":%d,"vus":1,"keySpace":10000,"params":{"serverCounts":"false","prefill":"false"},"arrival":{"segments":[{"from":%s,"to":%s,"durationMs":%d}],"maxVUs":%d}}],"graceMs":2000}' \
    "$1" "$ms" "$2" "$2" "$ms" "$MAX_VUS")
  redis-cli -p "$PORT" config resetstat >/dev/null
  BENCHRUN_PLAN=$plan BENCHRUN_TARGET="{\"redis\":{\"addrs\":[\"127.0.0.1:$PORT\"]}}" BENCHRUN_RUNNER=bench \
    "$K6" run -q --summary-mode disabled --out "benchrun=$WORK/$1.doc.json" "$ROOT/scripts/k6/benchrun.js" \
    >"$WORK/k6.log" 2>&1 || { cat "$WORK/k6.log" >&2; exit 1; }
  "$WORK/benchrun" report --output json "$WORK/$1.doc.json" >"$WORK/$1.json"
  redis-cli -p "$PORT" info commandstats | awk -F'[=:,]' '/^cmdstat_get:/ {print $3}' >"$WORK/$1.gets"
}

echo "(a) rate accuracy, ${OPEN_SECONDS}s per rate, maxVUs $MAX_VUS"
for rate in $OPEN_RATES; do
  run_open "rate_$rate" "$rate" "$OPEN_SECONDS"
  python3 - "$WORK/rate_$rate.json" "$(cat "$WORK/rate_$rate.gets")" "$rate" "$OPEN_SECONDS" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
gets, rate, secs = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
o = s["open"]
print(f"  target {rate:>8,.0f}/s  achieved CPS {s['cps']:>10,.2f} (ratio {s['cps']/rate:.4f})  "
      f"Redis counted {gets:,} GETs = {gets/secs:,.1f}/s (ratio {gets/(rate*secs):.4f})  dropped {o['dropped']}  "
      f"p99 corrected {s['latencyMs']['p99']} ms, service {o['serviceTimeMs']['p99']} ms  "
      f"{'within 1 %' if abs(s['cps']/rate-1) <= 0.01 and abs(gets/(rate*secs)-1) <= 0.01 else 'NOT within 1 %'}")
PY
done

echo "(b) redis-server stopped (SIGSTOP) for 1 s at 3 s of a 10 s run at $PAUSE_RATE/s, maxVUs $MAX_VUS"
PID=$(cat "$WORK/redis.pid")
(sleep 3 && kill -STOP "$PID" && sleep 1 && kill -CONT "$PID") &
run_open pause "$PAUSE_RATE" 10
wait
python3 - "$WORK/pause.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
l, v = s["latencyMs"], s["open"]["serviceTimeMs"]
print(f"  {'':28} {'p50':>8} {'p90':>8} {'p99':>8} {'p99.9':>8} {'max':>8}  (ms)")
print(f"  {'corrected (intended start)':28} {l['p50']:>8} {l['p90']:>8} {l['p99']:>8} {l['p999']:>8} {l['max']:>8}")
print(f"  {'service time (uncorrected)':28} {v['p50']:>8} {v['p90']:>8} {v['p99']:>8} {v['p999']:>8} {v['max']:>8}")
ratio = l['p99'] / v['p99'] if v['p99'] else float('inf')
print(f"  p99 corrected / uncorrected: {ratio:,.1f}x  ({s['calls']:,} calls, {s['open']['dropped']} dropped, CPS {s['cps']:,.2f})")
PY
