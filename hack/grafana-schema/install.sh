#!/usr/bin/env bash
# Install Grafana's published dashboard schema (@grafana/schema) and the TypeScript compiler,
# pinned by package-lock.json beside this script, into $BENCHRUN_CACHE/grafana-schema/<lock hash>
# (default ~/.cache/benchrun) with `npm ci`, once; prints that directory (it holds
# node_modules). Used by internal/dashboards TestDashboardsMatchGrafanaSchema. Needs node and
# npm (Debian packages nodejs, npm) and the npm registry.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
key=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)
dir="$CACHE/grafana-schema/$key"
if [ ! -f "$dir/.installed" ]; then
  mkdir -p "$CACHE/grafana-schema"
  exec 9> "$CACHE/grafana-schema/.lock"
  flock 9
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    cp "$HERE/package.json" "$HERE/package-lock.json" "$dir/"
    t0=$(date +%s)
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    echo "[grafana-schema] npm ci in $(( $(date +%s) - t0 ))s: $(du -sh "$dir/node_modules" | cut -f1)" >&2
    touch "$dir/.installed"
  fi
fi
echo "$dir"
