#!/usr/bin/env bash
# Smoke test of the chart on a running cluster (the local one unless KUBECONFIG is set):
# server-side dry-run of the rendered chart, helm upgrade --install, manager Ready, CRD served,
# then (unless --no-run) a short quick-start BenchmarkRun in a namespace that enforces the
# restricted Pod Security Standard, waited for until it ends; prints its status and events.
#
# Usage: hack/local-cluster/smoke.sh [--no-run] [--keep]
# Env:   HELM (default bin/helm), KUBECONFIG, NAMESPACE (benchrun-system), RUN_NS (benchrun-smoke),
#        RUN_TIMEOUT (seconds, 300)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
export KUBECONFIG="${KUBECONFIG:-$CACHE/cluster/kubeconfig/admin.kubeconfig}"
KUBECTL="$CACHE/k8s-v1.34.4/bin/kubectl"
HELM="${HELM:-$ROOT/bin/helm}"
NS="${NAMESPACE:-benchrun-system}"
RUN_NS="${RUN_NS:-benchrun-smoke}"
RUN_TIMEOUT="${RUN_TIMEOUT:-300}"
RUN=yes KEEP=no
for a in "$@"; do case $a in --no-run) RUN=no ;; --keep) KEEP=yes ;; *) echo "unknown $a" >&2; exit 2 ;; esac; done
k() { "$KUBECTL" "$@"; }
T0=$(date +%s.%N)
log() { printf '[smoke +%.1fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*" >&2; }

log "server-side dry-run of the rendered chart"
k create namespace "$NS" --dry-run=client -o yaml | k apply --server-side -f - >/dev/null
"$HELM" template benchrun "$ROOT/charts/benchrun" -n "$NS" --include-crds -f "$ROOT/hack/local-cluster/values-local.yaml" |
  k apply --server-side --dry-run=server -n "$NS" -f - >/dev/null
log "dry-run ok; applying the CRD server-side (so it upgrades), helm upgrade --install"
k apply --server-side --force-conflicts --field-manager=benchrun-chart -f "$ROOT/charts/benchrun/crds/" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
t=$(date +%s.%N)
"$HELM" upgrade --install benchrun "$ROOT/charts/benchrun" -n "$NS" -f "$ROOT/hack/local-cluster/values-local.yaml" --wait --timeout 5m >/dev/null
log "helm install -> manager Ready: $(printf '%.1f' "$(echo "$(date +%s.%N) - $t" | bc)")s"
k -n "$NS" get deploy,pods -o wide
k get crd benchmarkruns.bench.benchrun.io -o jsonpath='{.spec.names.shortNames}{" served="}{.spec.versions[*].served}{"\n"}'
k get br -A
[ $RUN = yes ] || exit 0

log "quick-start run (10s per scenario) in $RUN_NS"
k create namespace "$RUN_NS" --dry-run=client -o yaml | k apply --server-side -f - >/dev/null
k label namespace "$RUN_NS" pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
sed 's/duration: 20s/duration: 10s/' "$ROOT/config/samples/quickstart.yaml" | k -n "$RUN_NS" apply -f -
t=$(date +%s.%N) phase="" last=""
for ((i = 0; i < RUN_TIMEOUT; i += 2)); do
  phase=$(k -n "$RUN_NS" get br quickstart -o jsonpath='{.status.phase}' 2>/dev/null || true)
  [ "$phase" != "$last" ] && { log "phase: ${phase:-<none>}"; last=$phase; }
  case $phase in Succeeded | Failed) break ;; esac
  sleep 2
done
log "apply -> $phase: $(printf '%.1f' "$(echo "$(date +%s.%N) - $t" | bc)")s"
k -n "$RUN_NS" get br quickstart -o wide || true
k -n "$RUN_NS" get pods -o wide || true
k -n "$RUN_NS" get br quickstart -o yaml | sed -n '/^status:/,$p' || true
k -n "$RUN_NS" get events --sort-by=.lastTimestamp | tail -30 || true
k -n "$NS" logs deploy/benchrun-manager --tail=40 || true
[ $KEEP = yes ] || k delete namespace "$RUN_NS" --wait=false >/dev/null
[ "$phase" = Succeeded ]
