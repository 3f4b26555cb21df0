#!/usr/bin/env bash
# make bench: benchrun's performance claims, each measured against a named baseline in the
# same run on loopback (numbers vary with machine load; the ratios are what we track).
#
#   1. Redis GET calls/s: our k6 (bin/k6, Go hot path) vs redis-benchmark -t get -P 1, same connections
#   2. HeTu hello_world calls/s: our k6 Go client vs the Python asyncio client, same server and connections
#   3. Histogram record and merge throughput (Go benchmarks of internal/results)
#   4. Runner memory after 10^8 samples vs k6's Trend metric (every sample kept)
#   5. Operator scale: SCALE_RUNS concurrent BenchmarkRuns reconciled by the manager binary on
#      envtest (simulated runner pods): time until all Succeeded, manager peak RSS and heap
#
# Env: CONNS (50), SECONDS (5), HETU_CONNS (16), ROUNDS (3), SCALE_RUNS (1000),
# KUBEBUILDER_ASSETS (default: the Makefile's envtest-assets directory).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CONNS=${CONNS:-50} SECS=${SECONDS_PER_RUN:-5} HETU_CONNS=${HETU_CONNS:-16} ROUNDS=${ROUNDS:-3}
K6="$ROOT/bin/k6"
hr() { printf '\n== %s\n' "$*"; }

hr "1. Redis GET: benchrun k6 vs redis-benchmark ($CONNS connections, ${SECS}s, median of $ROUNDS)"
ROUNDS=$ROUNDS hack/bench-redis.sh "$CONNS" "$SECS"

hr "2. HeTu hello_world: benchrun k6 Go client vs Python asyncio client ($HETU_CONNS connections)"
if [[ $(id -u) -ne 0 ]] || ! hack/hetu-runtime.sh >/dev/null 2>&1; then
  echo "skipped: needs root and the HeTu runtime (hack/hetu-runtime.sh)"
else
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  WORK=$(mktemp -d)
  trap 'hack/hetu-server.sh stop --port "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
  hack/hetu-server.sh start --port "$PORT" --layers full --workers 1 >/dev/null
  URL="ws://127.0.0.1:$PORT/hetu/bench"
  py=() ours=()
  for r in $(seq "$ROUNDS"); do
    py+=("$(hack/hetu-client.sh --url "$URL" --layers full load --conns "$HETU_CONNS" --seconds "$SECS" --rpc hello_world |
      python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["calls_per_s"])')")
    HETU_URL=$URL HETU_INSTANCE=bench HETU_LAYERS=full SCENARIOS=hello_world VUS=$HETU_CONNS DURATION=${SECS}s GRACE=1s \
      "$K6" run -q --summary-mode disabled --out "benchrun=$WORK/hetu-$r.json" scripts/k6/hetu_rpc.js >/dev/null
    ours+=("$(python3 - "$WORK/hetu-$r.json" <<'PY'
import json, sys
from datetime import datetime
s = json.load(open(sys.argv[1]))["scenarios"][0]
t = lambda x: datetime.fromisoformat(x.replace("Z", "+00:00"))
print(round(s["calls"] / (t(s["lastEnd"]) - t(s["firstStart"])).total_seconds(), 1))
PY
)")
  done
  python3 - "${py[*]}" "${ours[*]}" <<'PY'
import statistics, sys
py = [float(x) for x in sys.argv[1].split()]
ours = [float(x) for x in sys.argv[2].split()]
mp, mo = statistics.median(py), statistics.median(ours)
print(f"python asyncio client: {mp:,.1f} calls/s  (runs: {py})")
print(f"benchrun k6 client:    {mo:,.1f} calls/s  (runs: {ours})")
print(f"ratio benchrun/python: {mo/mp:.2f}  (both share 2 cores with the Python server, which saturates first)")
PY
fi

hr "3. Histogram record + merge throughput"
go test -run '^$' -bench 'BenchmarkRecorderRecord|BenchmarkMerge' -benchtime 2s ./internal/results/ | grep -E '^Benchmark|ns/op'

hr "4. Runner memory after 10^8 samples"
BENCHRUN_BENCH=1 go test -count=1 -run TestRunnerMemory1e8 -v ./internal/results/ | grep -E 'runner memory|FAIL|ok'

hr "5. Operator scale: ${SCALE_RUNS:-1000} concurrent BenchmarkRuns on envtest (manager binary, simulated runner pods)"
ASSETS=${KUBEBUILDER_ASSETS:-${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/k8s-v1.34.4/bin}
if [[ ! -x $ASSETS/kube-apiserver || ! -x $ASSETS/etcd ]]; then
  echo "skipped: no envtest binaries in $ASSETS (set KUBEBUILDER_ASSETS or run make envtest-assets)"
else
  MGR_DIR=$(mktemp -d)
  go build -o "$MGR_DIR/manager" ./cmd/manager
  KUBEBUILDER_ASSETS=$ASSETS BENCHRUN_MANAGER_BIN=$MGR_DIR/manager BENCHRUN_BENCH_RUNS=${SCALE_RUNS:-1000} \
    go test -count=1 -timeout 15m -run '^TestScaleManyRuns$' -v ./controllers/ 2>/dev/null | grep -E '^runs:|^--- FAIL|^FAIL' || true
  rm -rf "$MGR_DIR"
fi
