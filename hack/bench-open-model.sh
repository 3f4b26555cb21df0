#!/usr/bin/env bash
# Open model (arrival rate, coordinated-omission corrected) against a private loopback
# redis-server, through benchrun.js and our k6's Go open loop (client.open):
#
#   (a) rate accuracy below saturation: for each rate of OPEN_RATES, a constant-arrival GET
#       scenario of OPEN_SECONDS; prints target, achieved (Redis' own GET count over the
#       scheduled time, the "within 1 %" check, and CPS: the actual sends, 10 % trimmed at
#       each end) and their ratios to the target.
#   (b) a 1 s SIGSTOP of redis-server in the middle of a PAUSE_RATE run: the corrected p99
#       (from each call's intended start) next to the uncorrected service-time p99 (from its
#       actual send), the baseline a closed-loop tool reports.
#
#   (c) k6's CPU per call: the open loop at CPU_RATE/s vs the closed loop (benchrun.js, 8 VUs,
#       100 calls per iteration) for the same time: CPU seconds (user + sys) over calls made.
#
#   hack/bench-open-model.sh     env: K6=bin/k6 OPEN_RATES="5000 20000" OPEN_SECONDS=8 PAUSE_RATE=2000 MAX_VUS=32
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
K6=${K6:-$ROOT/bin/k6}
OPEN_RATES=${OPEN_RATES:-5000 20000}
CPU_RATE=${CPU_RATE:-3000}
OPEN_SECONDS=${OPEN_SECONDS:-8}
PAUSE_RATE=${PAUSE_RATE:-2000}
MAX_VUS=${MAX_VUS:-32}
need redis-server redis-cli
setup_redis
go build -o "$WORK/benchrun" "$ROOT/cmd/benchrun"

# run_open NAME RATE SECONDS [closed]: one arrival-rate GET scenario (with "closed": 8 closed-loop
# VUs instead); the summary JSON goes to WORK/NAME.json, k6's CPU seconds to WORK/NAME.cpu.
run_open() {
  local ms=$(($3 * 1000))
  local plan
  plan=$(printf '{"scenarios":[{"name":"%s","type":"redis.get","address":"redis","startMs":0,"durationMs":%d,"vus":1,"keySpace":10000,"params":{"serverCounts":"false","prefill":"false"},"arrival":{"segments":[{"from":%s,"to":%s,"durationMs":%d}],"maxVUs":%d}}],"graceMs":2000}' \
    "$1" "$ms" "$2" "$2" "$ms" "$MAX_VUS")
  if [[ ${4:-} == closed ]]; then
    plan=$(printf '{"scenarios":[{"name":"%s","type":"redis.get","address":"redis","startMs":0,"durationMs":%d,"vus":8,"keySpace":10000,"params":{"serverCounts":"false","prefill":"false"}}],"graceMs":2000}' "$1" "$ms")
  fi
  redis-cli -p "$PORT" config resetstat >/dev/null
  BENCHRUN_PLAN=$plan BENCHRUN_TARGET="{\"redis\":{\"addrs\":[\"127.0.0.1:$PORT\"]}}" BENCHRUN_RUNNER=bench \
    python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f}", file=sys.stderr)
sys.exit(rc)' "$WORK/k6.log" "$K6" run -q --summary-mode disabled --out "benchrun=$WORK/$1.doc.json" "$ROOT/scripts/k6/benchrun.js" \
    2>"$WORK/$1.cpu" || { cat "$WORK/k6.log" >&2; exit 1; }
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
      f"{'calls within 1 % of target' if abs(gets/(rate*secs)-1) <= 0.01 else 'calls NOT within 1 % of target'}")
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

echo "(c) k6 CPU per call: open loop at $CPU_RATE/s (maxVUs $MAX_VUS) vs closed loop (8 VUs), ${OPEN_SECONDS}s each,"
echo "    k6's fixed cost (start, JS, exit) taken out: an open run at 10/s is the baseline of both"
run_open cpu_idle 10 "$OPEN_SECONDS"
run_open cpu_open "$CPU_RATE" "$OPEN_SECONDS"
run_open cpu_closed 0 "$OPEN_SECONDS" closed
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
def run(name):
    calls = json.load(open(f"{w}/{name}.json"))["scenarios"][0]["calls"]
    return calls, float(open(f"{w}/{name}.cpu").read().split()[-1])
ic, icpu = run("cpu_idle")
res = {}
for name in ("cpu_open", "cpu_closed"):
    calls, cpu = run(name)
    res[name] = (cpu - icpu) / (calls - ic) * 1e6
    print(f"  {name[4:]:6}: {calls:,} calls, {cpu:.2f} CPU s ({cpu - icpu:.2f} over the idle run's {icpu:.2f}) = {res[name]:.1f} us/call")
print(f"  ratio open/closed CPU per call: {res['cpu_open'] / res['cpu_closed']:.2f}")
PY
