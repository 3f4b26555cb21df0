#!/usr/bin/env bash
# Live progress overhead (abortOnFail, status.live): benchrun's k6 GET calls/s against one
# loopback redis-server without a progress file (the baseline), with the progress file
# rewritten every 2s (the runners' default) and every 250ms (stress). Same run, rounds
# alternating so machine load hurts all three alike; prints medians and ratios.
#
#   hack/bench-progress.sh [CONNS=50] [SECONDS=5]   env: K6=bin/k6 BATCH=100 ROUNDS=3
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
CONNS=${1:-50}
SECS=${2:-5}
K6=${K6:-$ROOT/bin/k6}
BATCH=${BATCH:-100}
ROUNDS=${ROUNDS:-3}
need redis-server redis-cli
setup_redis

# run_k6 INTERVAL: "calls/s cpu-µs/call" of one k6 run with the progress file every INTERVAL
# ("": none): GET calls over the first-start..last-end span, and the k6 process's user+system
# CPU per call (less sensitive to other load on the machine).
run_k6() {
  local file=""
  [[ -n $1 ]] && file="$WORK/progress.json"
  rm -f "$WORK/result.json" "$WORK/progress.json"
  BENCHRUN_PROGRESS_FILE="$file" BENCHRUN_PROGRESS_INTERVAL="$1" \
    SCENARIOS=get DURATION="${SECS}s" GRACE=1s VUS="$CONNS" BATCH="$BATCH" KEYSPACE=100000 \
    REDIS_ADDR="127.0.0.1:$PORT" python3 - "$K6" "$WORK" "$ROOT/scripts/k6/redis_basic.js" <<'PY'
import json, os, re, resource, subprocess, sys
from datetime import datetime
k6, work, script = sys.argv[1:]
with open(f"{work}/k6.log", "w") as log:
    if subprocess.run([k6, "run", "-q", "--summary-mode", "disabled", "--out", f"benchrun={work}/result.json", script],
                      stdout=log, stderr=log).returncode != 0:
        sys.exit(open(f"{work}/k6.log").read())
if os.environ["BENCHRUN_PROGRESS_FILE"] and not os.path.getsize(f"{work}/progress.json"):
    sys.exit("no progress file written")
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
def ts(v):
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-].*)$", v)
    return datetime.fromisoformat(m.group(1) + (m.group(2) or ".0")[:7] + ("+00:00" if m.group(3) == "Z" else m.group(3)))
s = json.load(open(f"{work}/result.json"))["scenarios"][0]
print(f"{s['calls'] / (ts(s['lastEnd']) - ts(s['firstStart'])).total_seconds():.0f} {(ru.ru_utime + ru.ru_stime) / s['calls'] * 1e6:.2f}")
PY
}

base=() slow=() fast=()
for ((i = 1; i <= ROUNDS; i++)); do
  base+=("$(run_k6 "")")
  slow+=("$(run_k6 2s)")
  fast+=("$(run_k6 250ms)")
  echo "round $i (GET/s, CPU µs/call): none ${base[-1]}, every 2s ${slow[-1]}, every 250ms ${fast[-1]}" >&2
done
col() { local n=$1; shift; printf '%s\n' "$@" | awk -v n="$n" '{print $n}'; }
b=$(median $(col 1 "${base[@]}")) s=$(median $(col 1 "${slow[@]}")) f=$(median $(col 1 "${fast[@]}"))
bc=$(median $(col 2 "${base[@]}")) sc=$(median $(col 2 "${slow[@]}")) fc=$(median $(col 2 "${fast[@]}"))
echo "no progress file (baseline): $b GET/s, $bc CPU µs/call (median of $ROUNDS, $CONNS VUs, ${SECS}s)"
echo "progress file every 2s:      $s GET/s, $sc CPU µs/call"
echo "progress file every 250ms:   $f GET/s, $fc CPU µs/call"
echo "progress document: $(wc -c <"$WORK/progress.json") bytes for 1 scenario"
python3 -c "print(f'ratio every-2s/baseline: {$s / $b:.3f} calls/s, {$sc / $bc:.3f} CPU/call;  every-250ms/baseline: {$f / $b:.3f} calls/s, {$fc / $bc:.3f} CPU/call')"
