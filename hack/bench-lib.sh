# shellcheck shell=bash
# Shared by the hack/bench-*.sh scripts (sourced, not run): a private loopback redis-server,
# free ports, medians and the k6 result document's call rate.

# free_port prints a free 127.0.0.1 TCP port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_redis WORK PORT starts a redis-server on 127.0.0.1:PORT (no persistence; pid and log
# in WORK) and waits up to 5s for it to answer PING.
start_redis() {
  redis-server --bind 127.0.0.1 --port "$2" --save '' --appendonly no --daemonize yes \
    --pidfile "$1/redis.pid" --logfile "$1/redis.log"
  for _ in $(seq 50); do redis-cli -p "$2" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

# stop_redis WORK stops the redis-server started in WORK (waiting up to 5s for it to exit).
stop_redis() {
  if [[ -f "$1/redis.pid" ]]; then
    local pid
    pid=$(cat "$1/redis.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
}

# median prints the median of its numeric arguments (the upper one of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# col N WORD... prints field N of each of its (space-separated) arguments, one per line.
col() { local n=$1; shift; printf '%s\n' "$@" | awk -v n="$n" '{print $n}'; }

# k6_rate RESULT [CALLS] prints the first scenario's calls/s (calls over its first-start..last-end
# span) of a k6 result document; with CALLS it fails unless exactly CALLS calls were made
# without errors.
k6_rate() {
  python3 - "$@" <<'PY'
import json, re, sys
from datetime import datetime
def ts(v):  # RFC 3339 with nanoseconds -> datetime (microseconds)
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-].*)$", v)
    frac = (m.group(2) or ".0")[:7]
    return datetime.fromisoformat(m.group(1) + frac + ("+00:00" if m.group(3) == "Z" else m.group(3)))
s = json.load(open(sys.argv[1]))["scenarios"][0]
if len(sys.argv) > 2 and (s["calls"] != int(sys.argv[2]) or s["errors"]):
    sys.exit(f"k6 made {s['calls']} calls ({s['errors']} errors), want {sys.argv[2]}")
print(f"{s['calls'] / (ts(s['lastEnd']) - ts(s['firstStart'])).total_seconds():.0f}")
PY
}

# k6_get_cost prints "calls/s cpu-µs/call" of one run of our k6's Redis GET script against the
# private redis-server ($CONNS VUs, $SECS s, $BATCH calls per iteration; the caller's
# environment, e.g. remote-write or progress-file settings, reaches k6): calls/s as k6_rate
# gives them, and the k6 process's user+system CPU per call (less sensitive to other load).
k6_get_cost() {
  local cpu
  rm -f "$WORK/result.json"
  cpu=$(SCENARIOS=get DURATION="${SECS}s" GRACE=1s VUS="$CONNS" BATCH="$BATCH" KEYSPACE=100000 \
    REDIS_ADDR="127.0.0.1:$PORT" python3 - "$K6" "$WORK" "$ROOT/scripts/k6/redis_basic.js" <<'PY'
import json, resource, subprocess, sys
k6, work, script = sys.argv[1:]
with open(f"{work}/k6.log", "w") as log:
    if subprocess.run([k6, "run", "-q", "--summary-mode", "disabled", "--out", f"benchrun={work}/result.json", script],
                      stdout=log, stderr=log).returncode != 0:
        sys.exit(open(f"{work}/k6.log").read())
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
calls = json.load(open(f"{work}/result.json"))["scenarios"][0]["calls"]
print(f"{(ru.ru_utime + ru.ru_stime) / calls * 1e6:.2f}")
PY
  ) || return 1
  echo "$(k6_rate "$WORK/result.json") $cpu"
}

# need TOOL... fails unless $K6 is built and every TOOL is on PATH.
need() {
  [[ -x "$K6" ]] || { echo "build $K6 first: make k6" >&2; exit 1; }
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "needs $t (apt-get install -y redis-server)" >&2; exit 1; }
  done
}

# on_exit is run on exit before the redis-server is stopped; scripts override it.
on_exit() { :; }

# setup_redis sets WORK (a temporary directory) and PORT (a private redis-server answering on
# 127.0.0.1:PORT); on exit, on_exit runs, the server stops and WORK is removed.
setup_redis() {
  WORK=$(mktemp -d)
  PORT=$(free_port)
  trap 'on_exit; stop_redis "$WORK"; rm -rf "$WORK"' EXIT
  start_redis "$WORK" "$PORT"
}

# k6_vs_stock WORK STATS_URL COUNTER LABELS STOCK_OUT PLAN TARGET: $ROUNDS rounds of $SECS s,
# each k6's stock script WORK/stock.js (STOCK_OUT=1: also with --out benchrun, as our runs
# are) then our k6's scripts/k6/benchrun.js with BENCHRUN_PLAN=PLAN and BENCHRUN_TARGET=TARGET,
# against the same echo server, both counted by the server itself (COUNTER of its JSON /stats
# at STATS_URL). Prints both medians and the ratio; LABELS is "stock label|our label|unit",
# e.g. "k6 stock k6/http|benchrun k6 http|requests/s".
k6_vs_stock() {
  local work=$1 url=$2 counter=$3 labels=$4 stock_out=$5 plan=$6 target=$7 r a b c
  local stock_r=() ours_r=() out=()
  served() { python3 -c 'import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))[sys.argv[2]])' "$url" "$counter"; }
  for r in $(seq "$ROUNDS"); do
    out=()
    [[ $stock_out == 1 ]] && out=(--out "benchrun=$work/stock-$r.json")
    a=$(served)
    "$K6" run -q --summary-mode disabled "${out[@]}" "$work/stock.js" >/dev/null 2>&1
    b=$(served)
    BENCHRUN_PLAN=$plan BENCHRUN_TARGET=$target \
      "$K6" run -q --summary-mode disabled --out "benchrun=$work/ours-$r.json" scripts/k6/benchrun.js >/dev/null 2>&1
    c=$(served)
    stock_r+=("$(((b - a) / SECS))") ours_r+=("$(((c - b) / SECS))")
  done
  python3 - "${stock_r[*]}" "${ours_r[*]}" "$labels" <<'PY'
import statistics, sys
stock = [float(x) for x in sys.argv[1].split()]
ours = [float(x) for x in sys.argv[2].split()]
ls, lo, unit = sys.argv[3].split("|")
ms, mo = statistics.median(stock), statistics.median(ours)
w = max(len(ls), len(lo)) + 2
print(f"{ls + ':':<{w}}{ms:,.1f} {unit}  (runs: {stock}; counted by the server)")
print(f"{lo + ':':<{w}}{mo:,.1f} {unit}  (runs: {ours}; counted by the server)")
print(f"ratio benchrun/stock: {mo/ms:.2f}  (client, server and k6 share the machine's cores)")
PY
}

# cpu_run PID CMDSTAT OUT CMD... runs CMD (its stdout into OUT, stderr into OUT.err) and prints
# "wall_s client_cpu_s server_cpu_s server_calls": CMD's wall time, the user+system CPU of CMD
# (its process and waited-for children, wait4), the user+system CPU of the redis-server
# PID over the same time (/proc/PID/stat) and how many calls of command CMDSTAT (e.g. get) the
# redis-server on $PORT counted meanwhile (INFO commandstats). Fails when CMD fails.
cpu_run() {
  python3 - "$PORT" "$@" <<'PY'
import os, subprocess, sys, time
port, pid, cmdstat, out, *cmd = sys.argv[1:]
tick = os.sysconf("SC_CLK_TCK")
def server_cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick  # utime + stime
def server_calls():
    info = subprocess.run(["redis-cli", "-p", port, "info", "commandstats"], capture_output=True, text=True).stdout
    for line in info.splitlines():
        if line.startswith(f"cmdstat_{cmdstat}:"):
            return int(line.split("calls=")[1].split(",")[0])
    return 0
c0, s0, t0 = server_calls(), server_cpu(), time.monotonic()
with open(out, "w") as o, open(out + ".err", "w") as e:
    p = subprocess.Popen(cmd, stdout=o, stderr=e)
    _, status, ru = os.wait4(p.pid, 0)  # CMD's own rusage (not the redis-cli calls')
    p.returncode = os.waitstatus_to_exitcode(status)
t1, s1, c1 = time.monotonic(), server_cpu(), server_calls()
if p.returncode != 0:
    sys.exit(f"{cmd[0]} failed ({p.returncode}): " + open(out + ".err").read()[-2000:])
print(f"{t1 - t0:.3f} {ru.ru_utime + ru.ru_stime:.3f} {s1 - s0:.3f} {c1 - c0}")
PY
}
