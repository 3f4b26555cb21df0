#!/usr/bin/env bash
# make bench: benchrun's performance claims, each measured against a named baseline in the
# same run on loopback (numbers vary with machine load; the ratios are what we track).
#
#   1. Redis GET calls/s and CPU per call: our k6 (bin/k6, Go hot path) vs redis-benchmark -t get -P 1,
#      same connections; Redis' own count and CPU per call (hack/bench-redis.sh)
#   2. HeTu hello_world CPU per call and calls/s: our k6 Go client vs the Python asyncio client, same
#      server, connections and duration, all packet layers; runner cores for 1.2 M calls/s (hack/bench-hetu.sh)
#   3. Histogram record and merge throughput (Go benchmarks of internal/results); recording a call
#      in the latency timeline: compact vs the int64-band layout it replaced (same run)
#   4. Runner memory after 10^8 samples vs k6's Trend metric (every sample kept); a VU's latency
#      timeline after 240 s at 1,000 calls/s (narrow, wide latencies): compact vs the int64-band layout
#   5. Manager collection of 1,024 runner documents × 24 h: streaming merge vs all decoded first
#   6. TCP echo calls/s: our k6 (tcp.echo Go hot path, every message recorded) vs a plain Go
#      client loop (hack/echo-client), same echo server (cmd/echo-server), connections and size
#   7. HTTP GET requests/s: our k6 (http Go hot path) vs k6's stock k6/http module, same server
#      (echo-server -http), VUs and duration; both counted by the server itself
#   8. Fixed-count custom command (HSET, 1 KiB): our k6 redis.command vs redis-benchmark, counts checked by Redis
#   9. Live metrics: k6 GET calls/s with remote write to an unreachable endpoint vs without
#  10. Operator scale: SCALE_RUNS concurrent BenchmarkRuns reconciled by the manager binary on
#      envtest (simulated runner pods): time until all Succeeded, manager peak RSS vs idle, heap
#  11. Open model (hack/bench-open-model.sh): arrival rate achieved vs target (our CPS and Redis'
#      own count), and a 1 s SIGSTOP of redis-server: corrected p99 vs uncorrected service-time p99
#  12. Live progress (abortOnFail, status.live): k6 GET calls/s and CPU/call with the progress
#      file every 2s and every 250ms vs without
#  13. gRPC unary calls/s: our k6 (grpc Go hot path) vs k6's stock k6/net/grpc, same server
#      (echo-server -grpc), VUs, 1 KiB payload and duration; both counted by the server itself
#  14. Hostile result document: manager memory to decode + merge a ~16 KiB gzip expanding to
#      5.6 M empty scenarios (refused while read) vs an honest document of the same gzip size
#  15. Suite verdicts under noise (hack/suite-noise): NOISE_PAIRS same-vs-same suites (2 identical
#      variants × NOISE_REPEAT interleaved 1 s k6 runs each, separate k6 processes, local
#      redis-server) judged by internal/suite (`cps >= -5%` with significance: the paired t-test
#      on each repetition's log ratio): how many show no significant difference; and NOISE_SLOW
#      suites whose b runs against a server paused 1 ms of every 16 ms (CLIENT PAUSE, hz 500;
#      measured Δ printed): how many are flagged
#
# Env: CONNS (50), SECONDS (5), HETU_CONNS (16), HETU_SECONDS (8), ECHO_CONNS (16), HTTP_VUS (16), ROUNDS (3),
# SCALE_RUNS (1000), GRPC_VUS (16), NOISE_PAIRS (20), NOISE_SLOW (5), NOISE_REPEAT (4), KUBEBUILDER_ASSETS (default: the Makefile's envtest-assets directory).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh" # k6_rate, k6_vs_stock
CONNS=${CONNS:-50} SECS=${SECONDS_PER_RUN:-5} HETU_CONNS=${HETU_CONNS:-16} ROUNDS=${ROUNDS:-3}
K6="$ROOT/bin/k6"
hr() { printf '\n== %s\n' "$*"; }

hr "1. Redis GET: benchrun k6 vs redis-benchmark ($CONNS connections, ${SECS}s, median of $ROUNDS)"
ROUNDS=$ROUNDS hack/bench-redis.sh "$CONNS" "$SECS"

hr "2. HeTu hello_world: benchrun k6 Go client vs Python asyncio client, CPU per call and calls/s ($HETU_CONNS connections, all layers)"
ROUNDS=$ROUNDS hack/bench-hetu.sh "$HETU_CONNS" "${HETU_SECONDS:-8}"

hr "3. Histogram record + merge throughput"
go test -run '^$' -bench 'BenchmarkRecorderRecord|BenchmarkMerge|BenchmarkLatencyTimelineRecord' -benchtime 2s ./internal/results/ | grep -E '^Benchmark|ns/op'

hr "4. Runner memory after 10^8 samples; latency timeline per VU"
BENCHRUN_BENCH=1 go test -count=1 -run TestRunnerMemory1e8 -v ./internal/results/ | grep -E 'runner memory|FAIL|ok'
echo "latency timeline per VU, 240 s at 1,000 calls/s (bytes/recorder; ratio-vs-int64-band: compact / the previous layout, same run):"
go test -run '^$' -bench 'BenchmarkLatencyTimelineMemory' -benchtime 16x ./internal/results/ | grep -E '^Benchmark'

hr "5. Collection of 1,024 runner documents (2 scenarios × 24 h each): streaming merge vs all in memory"
col=()
for mode in stream all; do
  line=$(BENCHRUN_BENCH=1 BENCHRUN_COLLECT_MODE=$mode go test -count=1 -v -run '^TestCollectScale$' ./internal/runner/ | grep '^collect ')
  echo "$line"
  col+=("$(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' <<<"$line")")
done
echo "peak RSS ratio streaming/all-in-memory: $(python3 -c "print(f'{${col[0]}/${col[1]}:.3f}')")  (goal: streaming <= 128 MiB: $([[ ${col[0]} -le 128 ]] && echo met || echo NOT met))"

hr "6. TCP echo: benchrun k6 tcp.echo vs a plain Go client loop (${ECHO_CONNS:=16} connections, 1000 B, ${SECS}s, median of $ROUNDS)"
(
  EW=$(mktemp -d)
  go build -o "$EW/echo-server" ./cmd/echo-server && go build -o "$EW/echo-client" ./hack/echo-client
  EPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$EW/echo-server" -listen "127.0.0.1:$EPORT" >/dev/null &
  EPID=$!
  trap 'kill $EPID 2>/dev/null || true; rm -rf "$EW"' EXIT # the subshell's own trap
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$EPORT") 2>/dev/null && break; sleep 0.1; done
  go_r=() k6_r=()
  for r in $(seq "$ROUNDS"); do
    go_r+=("$("$EW/echo-client" -addr "127.0.0.1:$EPORT" -conns "$ECHO_CONNS" -size 1000 -seconds "$SECS" |
      python3 -c 'import json,sys; print(round(json.load(sys.stdin)["callsPerSec"], 1))')")
    BENCHRUN_PLAN='{"scenarios":[{"name":"echo","type":"tcp.echo","address":"tcp","startMs":0,"durationMs":'$((SECS * 1000))',"vus":'$ECHO_CONNS',"keySpace":1,"bodySize":1000}],"graceMs":1000}' \
      BENCHRUN_TARGET='{"tcp":{"addrs":["127.0.0.1:'$EPORT'"]}}' \
      "$K6" run -q --summary-mode disabled --out "benchrun=$EW/echo-$r.json" scripts/k6/benchrun.js >/dev/null
    k6_r+=("$(k6_rate "$EW/echo-$r.json")")
  done
  python3 - "${go_r[*]}" "${k6_r[*]}" <<'PY'
import statistics, sys
go = [float(x) for x in sys.argv[1].split()]
ours = [float(x) for x in sys.argv[2].split()]
mg, mo = statistics.median(go), statistics.median(ours)
print(f"plain Go client loop: {mg:,.1f} calls/s  (runs: {go})")
print(f"benchrun k6 tcp.echo: {mo:,.1f} calls/s  (runs: {ours})")
print(f"ratio benchrun/Go loop: {mo/mg:.2f}  (client, echo server and k6 share the machine's cores)")
PY
)

hr "7. HTTP GET: benchrun k6 http vs k6's stock k6/http (${HTTP_VUS:=16} VUs, keep-alive, ${SECS}s, median of $ROUNDS)"
(
  HW=$(mktemp -d)
  go build -o "$HW/echo-server" ./cmd/echo-server
  HPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$HW/echo-server" -listen 127.0.0.1:0 -http "127.0.0.1:$HPORT" >/dev/null &
  HPID=$!
  trap 'kill $HPID 2>/dev/null || true; rm -rf "$HW"' EXIT # the subshell's own trap
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$HPORT") 2>/dev/null && break; sleep 0.1; done
  cat > "$HW/stock.js" <<JS
import http from 'k6/http';
export const options = { vus: $HTTP_VUS, duration: '${SECS}s' };
export default function () { http.get('http://127.0.0.1:$HPORT/'); }
JS
  k6_vs_stock "$HW" "http://127.0.0.1:$HPORT/stats" httpRequests "k6 stock k6/http|benchrun k6 http|requests/s" 1 \
    '{"scenarios":[{"name":"get","type":"http","address":"http","startMs":0,"durationMs":'$((SECS * 1000))',"vus":'"$HTTP_VUS"',"keySpace":1,"http":{"method":"GET","path":"/","keepAlive":true,"protocol":"http1.1"}}],"graceMs":1000}' \
    '{"http":{"addrs":["127.0.0.1:'"$HPORT"'"]}}'
)

hr "8. Fixed-count HSET of 1 KiB: benchrun k6 redis.command vs redis-benchmark ($CONNS connections, 100000 requests, median of $ROUNDS)"
ROUNDS=$ROUNDS hack/bench-redis-command.sh "$CONNS" 100000

hr "9. Remote write to an unreachable endpoint vs none: benchrun k6 GET calls/s ($CONNS connections, ${SECS}s, median of $ROUNDS)"
ROUNDS=$ROUNDS hack/bench-remote-write.sh "$CONNS" "$SECS"
echo "per push interval: a VU's snapshot (BenchmarkLivePublish), the pusher's merge + encode for 64 VUs (BenchmarkLivePush)"
go test -run '^$' -bench 'BenchmarkLive' -benchtime 2s ./k6ext/bench/ | grep -E '^Benchmark'

hr "10. Operator scale: ${SCALE_RUNS:-1000} concurrent BenchmarkRuns on envtest (manager binary, simulated runner pods)"
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

hr "11. Open model: arrival rate vs target, and a 1 s redis-server SIGSTOP (corrected vs service-time p99)"
hack/bench-open-model.sh

hr "12. Live progress file (abortOnFail, status.live) vs none: benchrun k6 GET calls/s ($CONNS connections, ${SECS}s, median of $ROUNDS)"
ROUNDS=$ROUNDS hack/bench-progress.sh "$CONNS" "$SECS"

hr "13. gRPC unary calls: benchrun k6 grpc vs k6's stock k6/net/grpc (${GRPC_VUS:-16} VUs, 1 KiB, ${SECS}s, median of $ROUNDS)"
ROUNDS=$ROUNDS hack/bench-grpc.sh "${GRPC_VUS:-16}" "$SECS"

hr "14. Hostile result document: manager memory to decode + merge it vs an honest document of the same gzip size"
hostile=$(go test -count=1 -run '^TestHostileManyScenarios$' -v ./internal/runner/ | grep -E 'bench:|^--- FAIL' | sed 's/.*bench: //')
echo "$hostile"
alloc=$(sed -n 's/.*-> decode+merge allocated \([0-9.]*\) MiB.*/\1/p' <<<"$hostile")
[[ -n $alloc ]] && echo "goal: hostile document refused under 64 MiB allocated: $(python3 -c "print('met' if $alloc < 64 else 'NOT met')") (before the structure check: >12 GiB, heap 9.4 GiB)"

hr "15. Suite verdicts under noise: ${NOISE_PAIRS:-20} same-vs-same suites and one slowed server (repeat ${NOISE_REPEAT:-4}, 1 s k6 runs, local redis-server)"
(
  need redis-server redis-cli
  setup_redis
  go build -o "$WORK/suite-noise" ./hack/suite-noise
  redis-cli -p "$PORT" config set hz 500 >/dev/null # CLIENT PAUSE ends in the cron: within 2 ms
  "$WORK/suite-noise" -k6 "$K6" -script "$ROOT/scripts/k6/benchrun.js" -redis "127.0.0.1:$PORT" \
    -pairs "${NOISE_PAIRS:-20}" -slow "${NOISE_SLOW:-5}" -repeat "${NOISE_REPEAT:-4}" -pause-ms 1 -pause-every 16 -work "$WORK" | grep -E '^(same-vs-same:|slowdown|run-to-run)'
)
