#!/usr/bin/env bash
# HeTu hello_world: CPU per call of benchrun's k6 HeTu client (k6/x/hetu, Go) vs the Python
# asyncio client (examples/hetu-bench/client_asyncio.py, uvloop) on the same HeTu server, same
# connections and duration, all packet layers (msgpack + zlib + ChaCha20-Poly1305), same run.
#
#   hack/bench-hetu.sh [CONNS=16] [SECONDS=8]   env: K6=bin/k6 K6_BEFORE=(another k6 build) ROUNDS=3
#
# Needs root and the HeTu runtime (hack/hetu-runtime.sh); prints "skipped: ..." otherwise.
# Starts a HeTu server (hack/hetu-server.sh, 1 worker, layers full) on a free 127.0.0.1 port,
# then per round runs each client for SECONDS and for 1 s, alternating. Per client and round:
#   calls/s        the client's own count (Python: its "calls", every call counted with
#                  --warmup 0; k6: the result document) ÷ the client's measured span
#   CPU µs/call    user+system CPU of the load process (wait4; the Python client's process is
#                  the one hack/hetu-client.sh execs) ÷ its calls, startup included
#   marginal       (CPU of the SECONDS run − CPU of the 1 s run) ÷ (their difference in calls):
#                  the per-call cost with each client's fixed startup cost taken out
#   server µs/call the HeTu server's CPU (its whole process tree, /proc) ÷ the client's calls
# HeTu keeps no call counter (hello_world touches no Redis), so the counts are the clients'
# own. Prints medians, the ratio k6/Python of CPU per call (whole and marginal) and the runner
# cores each client needs for the seeds' 1.2 M hello_world calls/s at its marginal cost.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
CONNS=${1:-16}
SECS=${2:-8}
K6=${K6:-$ROOT/bin/k6}
K6_BEFORE=${K6_BEFORE:-}
ROUNDS=${ROUNDS:-3}
SEED_RATE=1200000 # the seeds' hello_world calls/s
[[ -x $K6 ]] || { echo "build $K6 first: make k6" >&2; exit 1; }
if [[ $(id -u) -ne 0 ]] || ! hack/hetu-runtime.sh >/dev/null 2>&1; then
  echo "skipped: needs root and the HeTu runtime (hack/hetu-runtime.sh)"
  exit 0
fi
WORK=$(mktemp -d)
PORT=
trap '[[ -z $PORT ]] || hack/hetu-server.sh stop --port "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
for attempt in 1 2 3; do # a free port's neighbour (the server's Redis) may be taken: retry
  PORT=$(free_port)
  hack/hetu-server.sh start --port "$PORT" --layers full --workers 1 >/dev/null 2>"$WORK/server.log" && break
  hack/hetu-server.sh stop --port "$PORT" >/dev/null 2>&1 || true
  ((attempt < 3)) || { cat "$WORK/server.log" >&2; exit 1; }
done
SPID=$(cat "${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/hetu-server/$PORT/hetu.pid")
URL="ws://127.0.0.1:$PORT/hetu/bench"

# measure OUT CMD... runs CMD (stdout into OUT) and prints "client_cpu_s server_cpu_s": CMD's
# user+system CPU (wait4) and that of the HeTu server's process tree over the same time.
measure() {
  python3 - "$SPID" "$@" <<'PY'
import os, subprocess, sys
root, out, *cmd = sys.argv[1:]
tick = os.sysconf("SC_CLK_TCK")
def tree_cpu():
    kids, cpu = {}, {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kids.setdefault(f[1], []).append(p)
            cpu[p] = (int(f[11]) + int(f[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        p = todo.pop()
        total += cpu.get(p, 0.0)
        todo += kids.get(p, [])
    return total
s0 = tree_cpu()
with open(out, "w") as o, open(out + ".err", "w") as e:
    p = subprocess.Popen(cmd, stdout=o, stderr=e)
    _, status, ru = os.wait4(p.pid, 0)
s1 = tree_cpu()
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"{cmd[0]} failed: " + open(out + ".err").read()[-2000:])
print(f"{ru.ru_utime + ru.ru_stime:.3f} {s1 - s0:.3f}")
PY
}

# Each run_* SECONDS prints "calls calls/s client_cpu_s server_cpu_s".
run_py() {
  local m
  m=$(measure "$WORK/py.json" hack/hetu-client.sh --url "$URL" --layers full load --conns "$CONNS" \
    --seconds "$1" --warmup 0 --rpc hello_world)
  python3 - "$WORK/py.json" "$m" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if r["errors"]:
    sys.exit(f"python client: {r['errors']} errors")
print(r["calls"], r["calls_per_s"], sys.argv[2])
PY
}
run_k6() { # SECONDS K6
  local m
  m=$(HETU_URL=$URL HETU_INSTANCE=bench HETU_LAYERS=full SCENARIOS=hello_world VUS=$CONNS \
    DURATION=${1}s GRACE=1s measure "$WORK/k6.log" "$2" run -q --summary-mode disabled \
    --out "benchrun=$WORK/k6.json" scripts/k6/hetu_rpc.js)
  python3 - "$WORK/k6.json" "$m" "$(k6_rate "$WORK/k6.json")" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
if s["errors"]:
    sys.exit(f"k6 client: {s['errors']} errors")
print(s["calls"], sys.argv[3], sys.argv[2])
PY
}

rows=()
for ((i = 1; i <= ROUNDS; i++)); do
  line="$(run_py "$SECS");$(run_py 1);$(run_k6 "$SECS" "$K6");$(run_k6 1 "$K6")"
  if [[ -n $K6_BEFORE ]]; then line+=";$(run_k6 "$SECS" "$K6_BEFORE");$(run_k6 1 "$K6_BEFORE")"; fi
  rows+=("$line")
  echo "round $i: $line   (per run: calls, calls/s, client CPU s, server CPU s; python ${SECS}s;1s, k6 ${SECS}s;1s[, k6 before])" >&2
done
python3 - "$CONNS" "$SECS" "$ROUNDS" "$SEED_RATE" "${rows[@]}" <<'PY'
import statistics, sys
conns, secs, rounds, seed = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
rounds_ = [[list(map(float, run.split())) for run in r.split(";")] for r in sys.argv[5:]]
def med(xs):
    xs = [x for x in xs if x == x]  # without NaN
    return statistics.median(xs) if xs else float("nan")
def client(k):  # runs k (long) and k+1 (1 s) of each round
    longs = [r[k] for r in rounds_]
    # a round whose long run made no more calls than its 1 s run (a stalled machine) has no marginal
    marg = [(r[k][2] - r[k + 1][2]) / (r[k][0] - r[k + 1][0]) * 1e6 if r[k][0] > r[k + 1][0] else float("nan")
            for r in rounds_]
    return dict(rate=med([x[1] for x in longs]), cpu=med([x[2] / x[0] * 1e6 for x in longs]),
                marg=med(marg), server=med([x[3] / x[0] * 1e6 for x in longs]),
                whole=[x[2] / x[0] * 1e6 for x in longs], margs=marg)
names = ["python asyncio client", "benchrun k6 client", "benchrun k6 before"]
cs = [client(k) for k in range(0, len(rounds_[0]), 2)]
print(f"hello_world, layers msgpack+zlib+crypto, {conns} connections, {secs} s (and 1 s) runs, "
      f"medians of {rounds} alternating rounds")
print(f"{'':<24} {'calls/s':>9} {'CPU µs/call':>12} {'marginal':>9} {'server µs/call':>15} {'cores for 1.2M/s':>17}")
for n, c in zip(names, cs):
    print(f"{n:<24} {c['rate']:>9,.0f} {c['cpu']:>12.1f} {c['marg']:>9.1f} {c['server']:>15.1f} "
          f"{seed * c['marg'] / 1e6:>17.1f}")
py, k6 = cs[0], cs[1]
print(f"ratio k6/python CPU per call: {med([a / b for a, b in zip(k6['whole'], py['whole'])]):.2f} whole process, "
      f"{med([a / b for a, b in zip(k6['margs'], py['margs'])]):.2f} marginal (below 1: k6 spends less)")
if len(cs) > 2:
    print(f"ratio k6/k6-before CPU per call: {med([a / b for a, b in zip(k6['whole'], cs[2]['whole'])]):.2f} whole, "
          f"{med([a / b for a, b in zip(k6['margs'], cs[2]['margs'])]):.2f} marginal")
print(f"ratio k6/python calls/s: {k6['rate'] / py['rate']:.2f}  (the 1-worker Python server, sharing the "
      f"2 cores, limits both)")
print(f"runner cores for the seeds' 1.2 M hello_world calls/s at the marginal cost: k6 {seed * k6['marg'] / 1e6:.1f}, "
      f"python {seed * py['marg'] / 1e6:.1f} (measured at ~{k6['rate']:,.0f} calls/s over {conns} connections; "
      f"a faster server means fewer idle wake-ups per call)")
PY
