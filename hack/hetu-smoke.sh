#!/usr/bin/env bash
# End-to-end smoke test of the HeTu benchmark setup, in one command:
#   hack/hetu-smoke.sh [--port 2466] [--load-seconds 5]
# Installs/checks the cached runtime, then for each layer configuration -- msgpack only,
# msgpack+zlib+crypto, and msgpack+zlib+crypto with an auth key -- starts a local server
# (hack/hetu-server.sh), calls the four benchmark RPCs and checks their return values
# (client_asyncio.py smoke --check), and with the auth key also checks that a client without
# the key is refused. Ends with a short hello_world load run per configuration.
# Exits non-zero on the first mismatch; the server is always stopped on exit.
set -euo pipefail

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PORT=2466 LOAD_SECONDS=5
while (($#)); do
  case "$1" in
    --port) PORT=$2; shift 2 ;;
    --load-seconds) LOAD_SECONDS=$2; shift 2 ;;
    *) echo "usage: $0 [--port N] [--load-seconds S]" >&2; exit 2 ;;
  esac
done
URL="ws://127.0.0.1:$PORT/hetu/bench"
SERVER="$ROOT_DIR/hack/hetu-server.sh"
CLIENT="$ROOT_DIR/hack/hetu-client.sh"
say() { printf '\n=== %s\n' "$*"; }

KEYFILE=$(mktemp)
chmod 600 "$KEYFILE"
head -c 24 /dev/urandom | base64 | tr -d '\n' >"$KEYFILE"
cleanup() { "$SERVER" stop --port "$PORT" >/dev/null 2>&1 || true; rm -f "$KEYFILE"; }
trap cleanup EXIT
unset HETU_AUTH_KEY

say "runtime"
"$ROOT_DIR/hack/hetu-runtime.sh"

run_config() {  # name layers use_key
  local name=$1 layers=$2 use_key=$3 keyargs=()
  [[ $use_key == yes ]] && keyargs=(--authkey-file "$KEYFILE")
  say "$name: start"
  "$SERVER" stop --port "$PORT" >/dev/null 2>&1 || true
  "$SERVER" start --port "$PORT" --layers "$layers" "${keyargs[@]}"
  say "$name: smoke"
  "$CLIENT" --url "$URL" --layers "$layers" "${keyargs[@]}" smoke --check --seed-rows 1000
  if [[ $use_key == yes ]]; then
    say "$name: a client without the auth key must be refused"
    if "$CLIENT" --url "$URL" --layers "$layers" smoke --check; then
      echo "FAIL: a client without the auth key was accepted" >&2; exit 1
    fi
    echo "ok: refused"
  fi
  if [[ "$LOAD_SECONDS" != 0 ]]; then
    say "$name: hello_world load, 16 connections, ${LOAD_SECONDS}s"
    "$CLIENT" --url "$URL" --layers "$layers" "${keyargs[@]}" \
      load --conns 16 --seconds "$LOAD_SECONDS" --rpc hello_world
  fi
  "$SERVER" stop --port "$PORT"
}

run_config "msgpack" msgpack no
run_config "msgpack+zlib+crypto" full no
run_config "msgpack+zlib+crypto+authkey" full yes
say "hetu-smoke: PASS"
