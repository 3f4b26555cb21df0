#!/usr/bin/env bash
# Keep the Helm chart's ClusterRole in step with the controller's RBAC markers.
#
# controller-gen writes config/rbac/role.yaml from the +kubebuilder:rbac markers (`make
# manifests`); charts/benchrun/templates/rbac.yaml renders the rules of
# charts/benchrun/files/manager-role.yaml, a verbatim copy of it (Helm cannot read files outside
# the chart). This script copies it; with --check it only fails when the copy is stale (CI).
#
# Usage: hack/sync-chart-rbac.sh [--check]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
src="$ROOT/config/rbac/role.yaml" dst="$ROOT/charts/benchrun/files/manager-role.yaml"
if [ "${1:-}" = --check ]; then
  cmp -s "$src" "$dst" || { echo "$dst is stale: run hack/sync-chart-rbac.sh (or make manifests)" >&2; exit 1; }
  exit 0
fi
mkdir -p "$(dirname "$dst")"
cp "$src" "$dst"
