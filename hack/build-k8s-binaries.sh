#!/usr/bin/env bash
# Builds Kubernetes binaries from Go modules (no downloads from GitHub or a registry).
#
# Usage: hack/build-k8s-binaries.sh [envtest|all]
#   envtest: etcd, kube-apiserver, kubectl (what controller-runtime's envtest needs)
#   all:     also kube-controller-manager, kube-scheduler, kubelet, kube-proxy, coredns
# Output:   $BENCHRUN_CACHE/k8s-$K8S_VERSION/bin (default ~/.cache/benchrun), printed on the last line.
# The pinned module hack/tools/k8s (go.mod + go.sum, every staging module replaced by its
# published tag) is what makes k8s.io/kubernetes buildable outside its own repository.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
TARGETS="${1:-envtest}"
K8S_VERSION="v1.34.4"
COREDNS_VERSION="v1.12.4"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
OUT="$CACHE/k8s-$K8S_VERSION/bin"
mkdir -p "$OUT"
# one build at a time (.ci/run builds the node binaries in the background beside make test)
exec 8> "$OUT/.lock"
flock 8
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
log() { echo "[$(date +%T)] $*" >&2; }

minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
LDFLAGS="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  LDFLAGS+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

build() {
  local t0; t0=$(date +%s)
  log "go build $*"
  (cd "$HERE/tools/k8s" && go build -trimpath -ldflags "$LDFLAGS" -o "$OUT/" "$@")
  log "built in $(( $(date +%s) - t0 ))s"
}

if [ ! -x "$OUT/etcd" ] || [ ! -x "$OUT/kube-apiserver" ] || [ ! -x "$OUT/kubectl" ]; then
  build go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  # the etcd server module's main package is its root; go build names it after the last path element
  for n in server v3; do if [ -x "$OUT/$n" ]; then mv "$OUT/$n" "$OUT/etcd"; fi; done
fi
if [ "$TARGETS" = all ]; then
  for b in kube-controller-manager kube-scheduler kubelet kube-proxy; do
    if [ ! -x "$OUT/$b" ]; then
      build k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
            k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
      break
    fi
  done
  if [ ! -x "$OUT/coredns" ]; then
    log "go install github.com/coredns/coredns@$COREDNS_VERSION"
    GOBIN="$OUT" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
  fi
fi
echo "$OUT"
