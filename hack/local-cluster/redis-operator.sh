#!/usr/bin/env bash
# Install (or remove) the OT-CONTAINER-KIT redis-operator v0.23.0 on a cluster, without a registry:
# CRDs and RBAC rules from the Go module (GONOSUMDB, the checksum database has no entry), the
# image benchrun.local/redis-operator:v0.23.0 built by `hack/images/build.sh redis-operator`.
# Found when it was first installed here: with plain Debian Redis images it needs the
# GenerateConfigInInitContainer feature gate and INIT_CONTAINER_IMAGE = the operator image
# (`/operator agent bootstrap` writes redis.conf / sentinel.conf); no webhooks (no cert-manager).
#
# Usage: hack/local-cluster/redis-operator.sh install|uninstall
# Env:   KUBECONFIG (default: the local cluster), OPERATOR_NAMESPACE (ot-operators)
set -euo pipefail
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
export KUBECONFIG="${KUBECONFIG:-$CACHE/cluster/kubeconfig/admin.kubeconfig}"
KUBECTL="$CACHE/k8s-v1.34.4/bin/kubectl"
VERSION=v0.23.0
IMAGE="benchrun.local/redis-operator:$VERSION"
NS="${OPERATOR_NAMESPACE:-ot-operators}"
MOD=github.com/OT-CONTAINER-KIT/redis-operator
k() { "$KUBECTL" "$@"; }
dir=$(cd /tmp && GONOSUMDB=$MOD GOFLAGS=-mod=mod GOTOOLCHAIN=local go mod download -json "$MOD@$VERSION" |
  sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
[ -n "$dir" ] || { echo "cannot download $MOD@$VERSION" >&2; exit 1; }

manifests() {
  cat <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: redis-operator, namespace: $NS}
---
EOF
  # the operator's own generated ClusterRole (config/rbac/role.yaml), under a unique name
  sed 's/^  name: manager-role$/  name: redis-operator-manager-role/' "$dir/config/rbac/role.yaml"
  cat <<EOF
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: redis-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: redis-operator-manager-role}
subjects: [{kind: ServiceAccount, name: redis-operator, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: redis-operator-leader-election, namespace: $NS}
rules:
- apiGroups: ["", coordination.k8s.io]
  resources: [configmaps, leases]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: redis-operator-leader-election, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: redis-operator-leader-election}
subjects: [{kind: ServiceAccount, name: redis-operator, namespace: $NS}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis-operator
  namespace: $NS
  labels: {control-plane: redis-operator}
spec:
  replicas: 1
  selector: {matchLabels: {control-plane: redis-operator}}
  template:
    metadata: {labels: {control-plane: redis-operator}}
    spec:
      serviceAccountName: redis-operator
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile: {type: RuntimeDefault}
      terminationGracePeriodSeconds: 10
      containers:
      - name: manager
        image: $IMAGE
        imagePullPolicy: IfNotPresent
        command: [/operator, manager]
        args: [--leader-elect, --enable-webhooks=false]
        env:
        - {name: ENABLE_WEBHOOKS, value: "false"}
        - {name: FEATURE_GATES, value: "GenerateConfigInInitContainer=true"}
        - {name: INIT_CONTAINER_IMAGE, value: "$IMAGE"}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        livenessProbe:
          httpGet: {path: /healthz, port: 8081}
          initialDelaySeconds: 15
          periodSeconds: 20
        readinessProbe:
          httpGet: {path: /readyz, port: 8081}
          initialDelaySeconds: 5
          periodSeconds: 5
        resources:
          requests: {cpu: 50m, memory: 64Mi}
          limits: {memory: 256Mi}
EOF
}

case "${1:-}" in
install)
  k apply --server-side --force-conflicts -f "$dir/config/crd/bases/" >/dev/null
  manifests | k apply --server-side --force-conflicts -f - >/dev/null
  k -n "$NS" rollout status deploy/redis-operator --timeout=180s
  ;;
uninstall)
  manifests | k delete --ignore-not-found --wait=false -f - >/dev/null
  k delete --ignore-not-found -f "$dir/config/crd/bases/" >/dev/null
  ;;
*) echo "usage: $0 install|uninstall" >&2; exit 2 ;;
esac
