#!/usr/bin/env bash
# make bench section 11: unary gRPC calls/s of our k6 (grpc Go hot path: request type by server
# reflection, encoded once, every call recorded) vs k6's stock k6/net/grpc module (reflect:
# true, client.invoke per call), same server (echo-server -grpc, benchrun.echo.v1.Echo/Echo),
# VUs (one connection each), 1 KiB payload and duration. Both counted by the server itself
# (grpcCalls of its /stats), median of ROUNDS.
# Usage: hack/bench-grpc.sh [VUS] [SECONDS]   (env ROUNDS, default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh" # free_port, k6_vs_stock
VUS=${1:-16} SECS=${2:-5} ROUNDS=${ROUNDS:-3}
K6="$ROOT/bin/k6"
GW=$(mktemp -d)
go build -o "$GW/echo-server" ./cmd/echo-server
GPORT=$(free_port) SPORT=$(free_port)
"$GW/echo-server" -listen 127.0.0.1:0 -grpc "127.0.0.1:$GPORT" -http "127.0.0.1:$SPORT" >/dev/null &
GPID=$!
trap 'kill $GPID 2>/dev/null || true; rm -rf "$GW"' EXIT
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$SPORT") 2>/dev/null && break; sleep 0.1; done
PAYLOAD=$(python3 -c 'import base64; print(base64.b64encode(b"x" * 1024).decode())')
cat > "$GW/stock.js" <<JS
import grpc from 'k6/net/grpc';
export const options = { vus: $VUS, duration: '${SECS}s' };
const client = new grpc.Client();
export default function () {
  if (__ITER === 0) client.connect('127.0.0.1:$GPORT', { plaintext: true, reflect: true });
  client.invoke('benchrun.echo.v1.Echo/Echo', { payload: '$PAYLOAD' });
}
JS
k6_vs_stock "$GW" "http://127.0.0.1:$SPORT/stats" grpcCalls "k6 stock k6/net/grpc|benchrun k6 grpc|calls/s" 0 \
  '{"scenarios":[{"name":"echo","type":"grpc","address":"grpc","startMs":0,"durationMs":'$((SECS * 1000))',"vus":'"$VUS"',"keySpace":1,"bodySize":1024,"grpc":{"method":"benchrun.echo.v1.Echo/Echo","bodyField":"payload"}}],"graceMs":1000}' \
  '{"grpc":{"addrs":["127.0.0.1:'"$GPORT"'"]}}'
