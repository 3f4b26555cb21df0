#!/usr/bin/env bash
# Run examples/hetu-bench/client_asyncio.py with the Python 3.14 venv of the cached HeTu runtime
# (websockets, msgpack, cryptography, uvloop are there). Arguments go to the client, e.g.
#   hack/hetu-client.sh --url ws://127.0.0.1:2466/hetu/bench --layers msgpack smoke --check
#   hack/hetu-client.sh --authkey-file key.txt load --conns 32 --seconds 10 --rpc hello_world
# --authkey-file is read here (host path) and handed over in $HETU_AUTH_KEY, never on argv.
# --script protocol_probe.py runs another script of examples/hetu-bench instead.
set -euo pipefail

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOTFS="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/hetu-runtime/rootfs"
die() { printf '[hetu-client] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "must run as root (chroot)"
[[ -f "$ROOTFS/.benchrun-venv" && -L "$ROOTFS/opt/hetu/bin/python" ]] || die "HeTu runtime missing: run hack/hetu-runtime.sh first"

args=()
SCRIPT=client_asyncio.py
while (($#)); do
  if [[ "$1" == --script ]]; then
    SCRIPT=$(basename "${2:-}"); shift 2
  elif [[ "$1" == --authkey-file ]]; then
    [[ -r "${2:-}" ]] || die "cannot read --authkey-file ${2:-}"
    HETU_AUTH_KEY=$(tr -d '\r\n' <"$2"); export HETU_AUTH_KEY
    shift 2
  else
    args+=("$1"); shift
  fi
done

mkdir -p "$ROOTFS/srv/hetu-client"
cp "$ROOT_DIR"/examples/hetu-bench/*.py "$ROOTFS/srv/hetu-client/"
[[ -f "$ROOTFS/srv/hetu-client/$SCRIPT" ]] || die "no such script: examples/hetu-bench/$SCRIPT"
exec env -u PYTHONPATH -u PYTHONHOME PATH=/opt/hetu/bin:/usr/bin:/bin LANG=C.UTF-8 \
  "$(command -v chroot)" "$ROOTFS" /opt/hetu/bin/python "/srv/hetu-client/$SCRIPT" "${args[@]}"
