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

# run_k6 URL: "calls/s cpu-µs/call" of one k6 GET run remote-writing to URL ("": none) every 1s.
run_k6() { BENCHRUN_REMOTE_WRITE_URL="$1" BENCHRUN_REMOTE_WRITE_INTERVAL=1s k6_get_cost; }

base=() refused=() hang=()
for ((i = 1; i <= ROUNDS; i++)); do
  base+=("$(run_k6 "")")
  refused+=("$(run_k6 "http://127.0.0.1:$REFUSED/api/v1/write")")
  hang+=("$(run_k6 "http://127.0.0.1:$HANG/api/v1/write")")
  echo "round $i (GET/s, CPU µs/call): none ${base[-1]}, refused ${refused[-1]}, hanging ${hang[-1]}" >&2
done
b=$(median $(col 1 "${base[@]}")) r=$(median $(col 1 "${refused[@]}")) h=$(median $(col 1 "${hang[@]}"))
bc=$(median $(col 2 "${base[@]}")) rc=$(median $(col 2 "${refused[@]}")) hc=$(median $(col 2 "${hang[@]}"))
echo "no remote write (baseline):       $b GET/s, $bc CPU µs/call (median of $ROUNDS, $CONNS VUs, ${SECS}s)"
echo "remote write, connection refused: $r GET/s, $rc CPU µs/call"
echo "remote write, endpoint hangs:     $h GET/s, $hc CPU µs/call"
python3 -c "print(f'ratio refused/baseline: {$r / $b:.3f} calls/s, {$rc / $bc:.3f} CPU/call;  hanging/baseline: {$h / $b:.3f} calls/s, {$hc / $bc:.3f} CPU/call')"
