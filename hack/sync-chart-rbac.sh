#!/usr/bin/env bash
# Keep the Helm chart's ClusterRoles in step with config/rbac.
#
# controller-gen writes config/rbac/role.yaml from the +kubebuilder:rbac markers (`make
# manifests`); charts/benchrun/templates/rbac.yaml renders the rules of
# charts/benchrun/files/manager-role.yaml, a verbatim copy of it (Helm cannot read files outside
# the chart). Likewise files/redis-role.yaml is a copy of config/rbac/redis_role.yaml, the
# ClusterRole the operator binds to the redis-role sidecars. This script copies both; with
# --check it only fails when a copy is stale (CI).
#
# Usage: hack/sync-chart-rbac.sh [--check]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
pairs=(
  "$ROOT/config/rbac/role.yaml:$ROOT/charts/benchrun/files/manager-role.yaml"
  "$ROOT/config/rbac/redis_role.yaml:$ROOT/charts/benchrun/files/redis-role.yaml"
)
for pair in "${pairs[@]}"; do
  src="${pair%%:*}" dst="${pair#*:}"
  if [ "${1:-}" = --check ]; then
    cmp -s "$src" "$dst" || { echo "$dst is stale: run hack/sync-chart-rbac.sh (or make manifests)" >&2; exit 1; }
    continue
  fi
  mkdir -p "$(dirname "$dst")"
  cp "$src" "$dst"
done
