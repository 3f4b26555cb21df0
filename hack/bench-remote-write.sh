#!/usr/bin/env bash
# Remote-write overhead: benchrun's k6 GET calls/s against one loopback redis-server without
# live metrics (the baseline), with remote write every second to a closed port (connection
# refused), and to a port that accepts connections but never answers (every push times out).
# Same run, rounds alternating so machine load hurts all three alike; prints medians and ratios.
#
#   hack/bench-remote-write.sh [CONNS=50] [SECONDS=5]   env: K6=bin/k6 BATCH=100 ROUNDS=3
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
REFUSED=$(free_port)
# A listener that never accepts: connections sit in the backlog, every push times out.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
time.sleep(3600)' >"$WORK/hang.port" &
HANG_PID=$!
on_exit() { kill "$HANG_PID" 2>/dev/null || true; }
for _ in $(seq 50); do [[ -s "$WORK/hang.port" ]] && break; sleep 0.1; done
HANG=$(cat "$WORK/hang.port")

# run_k6 URL: "calls/s cpu-µs/call" of one k6 run: GET calls over the first-start..last-end
# span, and the k6 process's user+system CPU per call (less sensitive to other load).
run_k6() {
  BENCHRUN_REMOTE_WRITE_URL="$1" BENCHRUN_REMOTE_WRITE_INTERVAL=1s \
    SCENARIOS=get DURATION="${SECS}s" GRACE=1s VUS="$CONNS" BATCH="$BATCH" KEYSPACE=100000 \
    REDIS_ADDR="127.0.0.1:$PORT" python3 - "$K6" "$WORK" "$ROOT/scripts/k6/redis_basic.js" <<'PY'
import json, re, resource, subprocess, sys
from datetime import datetime
k6, work, script = sys.argv[1:]
with open(f"{work}/k6.log", "w") as log:
    if subprocess.run([k6, "run", "-q", "--summary-mode", "disabled", "--out", f"benchrun={work}/result.json", script],
                      stdout=log, stderr=log).returncode != 0:
        sys.exit(open(f"{work}/k6.log").read())
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
def ts(v):
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-].*)$", v)
    return datetime.fromisoformat(m.group(1) + (m.group(2) or ".0")[:7] + ("+00:00" if m.group(3) == "Z" else m.group(3)))
s = json.load(open(f"{work}/result.json"))["scenarios"][0]
print(f"{s['calls'] / (ts(s['lastEnd']) - ts(s['firstStart'])).total_seconds():.0f} {(ru.ru_utime + ru.ru_stime) / s['calls'] * 1e6:.2f}")
PY
}

base=() refused=() hang=()
for ((i = 1; i <= ROUNDS; i++)); do
  base+=("$(run_k6 "")")
  refused+=("$(run_k6 "http://127.0.0.1:$REFUSED/api/v1/write")")
  hang+=("$(run_k6 "http://127.0.0.1:$HANG/api/v1/write")")
  echo "round $i (GET/s, CPU µs/call): none ${base[-1]}, refused ${refused[-1]}, hanging ${hang[-1]}" >&2
done
col() { local n=$1; shift; printf '%s\n' "$@" | awk -v n="$n" '{print $n}'; }
b=$(median $(col 1 "${base[@]}")) r=$(median $(col 1 "${refused[@]}")) h=$(median $(col 1 "${hang[@]}"))
bc=$(median $(col 2 "${base[@]}")) rc=$(median $(col 2 "${refused[@]}")) hc=$(median $(col 2 "${hang[@]}"))
echo "no remote write (baseline):       $b GET/s, $bc CPU µs/call (median of $ROUNDS, $CONNS VUs, ${SECS}s)"
echo "remote write, connection refused: $r GET/s, $rc CPU µs/call"
echo "remote write, endpoint hangs:     $h GET/s, $hc CPU µs/call"
python3 -c "print(f'ratio refused/baseline: {$r / $b:.3f} calls/s, {$rc / $bc:.3f} CPU/call;  hanging/baseline: {$h / $b:.3f} calls/s, {$hc / $bc:.3f} CPU/call')"
