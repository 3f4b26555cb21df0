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

# run_k6 INTERVAL: "calls/s cpu-µs/call" of one k6 GET run with the progress file rewritten
# every INTERVAL ("": none); fails when a progress file was asked for and none was written.
run_k6() {
  local file="" out
  [[ -n $1 ]] && file="$WORK/progress.json"
  rm -f "$WORK/progress.json"
  out=$(BENCHRUN_PROGRESS_FILE="$file" BENCHRUN_PROGRESS_INTERVAL="$1" k6_get_cost) || return 1
  if [[ -n $file && ! -s $file ]]; then
    echo "no progress file written" >&2
    return 1
  fi
  echo "$out"
}

base=() slow=() fast=()
for ((i = 1; i <= ROUNDS; i++)); do
  base+=("$(run_k6 "")")
  slow+=("$(run_k6 2s)")
  fast+=("$(run_k6 250ms)")
  echo "round $i (GET/s, CPU µs/call): none ${base[-1]}, every 2s ${slow[-1]}, every 250ms ${fast[-1]}" >&2
done
b=$(median $(col 1 "${base[@]}")) s=$(median $(col 1 "${slow[@]}")) f=$(median $(col 1 "${fast[@]}"))
bc=$(median $(col 2 "${base[@]}")) sc=$(median $(col 2 "${slow[@]}")) fc=$(median $(col 2 "${fast[@]}"))
echo "no progress file (baseline): $b GET/s, $bc CPU µs/call (median of $ROUNDS, $CONNS VUs, ${SECS}s)"
echo "progress file every 2s:      $s GET/s, $sc CPU µs/call"
echo "progress file every 250ms:   $f GET/s, $fc CPU µs/call"
echo "progress document: $(wc -c <"$WORK/progress.json") bytes for 1 scenario"
python3 -c "print(f'ratio every-2s/baseline: {$s / $b:.3f} calls/s, {$sc / $bc:.3f} CPU/call;  every-250ms/baseline: {$f / $b:.3f} calls/s, {$fc / $bc:.3f} CPU/call')"
