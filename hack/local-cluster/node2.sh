#!/usr/bin/env bash
# A second Kubernetes node on this machine for the local cluster (cluster.sh up first): its own
# network namespace joined to the host by a veth pair, its own containerd (root, state, socket,
# runc root, pod netns under its state dir), kubelet (root dir, node name, cgroupRoot
# /benchrun-node2, node IP = its veth address), kube-proxy (iptables inside the namespace) and
# CNI bridge with the pod CIDR the controller-manager allocated to it. It imports only the
# images runners need (pause and the runner image) and registers tainted
# benchrun.io/load=true:NoSchedule: a dedicated load node, nothing else is scheduled there.
#
# Usage: hack/local-cluster/node2.sh up|down|status   (also: cluster.sh node2 up|down|status)
#   up     idempotent; waits for the node to be Ready; prints the node name on stdout
#   down   deletes its pods, stops its processes (by recorded PID), deletes the Node object,
#          the namespace, veth, host route, mounts and cgroups (cluster.sh down calls it first)
# Env: NODE2_NAME (default: node 1's name + "-node2"), NODE2_HOST_IP / NODE2_IP (default
#      10.250.0.1 / 10.250.0.2, a /30 between the host and the namespace).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cluster.sh
. "$HERE/cluster.sh" # helpers and node 1's settings (PKI, BIN, NODE_IP); runs nothing when sourced
NODE1_DATA="$DATA"
NETNS=benchrun-node2
NSPATH="/run/netns/$NETNS"
VETH_HOST=benchrun-n2
HOST_IP="${NODE2_HOST_IP:-10.250.0.1}"
NODE2_IP="${NODE2_IP:-10.250.0.2}"
CGROUP_ROOT=/benchrun-node2
# node 2's own directories: the shared helpers (start, stop, running, ctrk, import_images) read these
DATA="$NODE1_DATA/node2"
RUN=/run/benchrun-node2
SOCK="$RUN/containerd.sock"
LOGS="$DATA/logs"
PIDS="$DATA/pids"
N2_COMPONENTS=(containerd kubelet kube-proxy)
T0=$(date +%s)
log() { echo "[node2 $(date +%T) +$(($(date +%s) - T0))s] $*" >&2; }
innet() { nsenter --net="$NSPATH" -- "$@"; }

node1_env() {
  [ -f "$NODE1_DATA/node.env" ] || die "no local cluster (cluster.sh up first)"
  # shellcheck source=/dev/null
  . "$NODE1_DATA/node.env" # NODE_NAME, NODE_IP of node 1 (the API server's address)
  NODE2_NAME="${NODE2_NAME:-$NODE_NAME-node2}"
}

network() {
  [ -e "$NSPATH" ] || { ip netns add "$NETNS"; log "created netns $NETNS"; }
  if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link add "$VETH_HOST" type veth peer name eth0 netns "$NETNS"
    ip addr add "$HOST_IP/30" dev "$VETH_HOST"
    ip link set "$VETH_HOST" up
    innet ip addr add "$NODE2_IP/30" dev eth0
    innet ip link set eth0 up
    innet ip link set lo up
    innet ip route add default via "$HOST_IP"
    log "veth $VETH_HOST ($HOST_IP) <-> $NETNS eth0 ($NODE2_IP)"
  fi
  forward_rules -I
  # inside the namespace (these sysctls die with it): routing and bridged traffic through iptables
  innet sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
}

# cgroupRoot's directory in every v1 hierarchy (this machine), or in the unified v2 one
cgroup_dirs() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo "/sys/fs/cgroup$CGROUP_ROOT"; return 0; fi
  local h
  for h in /sys/fs/cgroup/*/; do [ -f "${h}cgroup.procs" ] && echo "${h%/}$CGROUP_ROOT"; done
  return 0
}

# cgroupRoot must exist before the kubelet starts (it refuses otherwise)
cgroups() {
  local d h
  for d in $(cgroup_dirs); do mkdir -p "$d"; done
  [ -d /sys/fs/cgroup/cpuset ] && for h in cpus mems; do
    cat "/sys/fs/cgroup/cpuset/cpuset.$h" > "/sys/fs/cgroup/cpuset${CGROUP_ROOT}/cpuset.$h"
  done
  return 0
}

# forwarding between the veth and the host (node 1's pods, the API server): explicit ACCEPT
# rules, for hosts whose FORWARD policy is DROP (Docker sets it); removed by down
forward_rules() { # -I|-D
  local dir
  for dir in -i -o; do
    if [ "$1" = -I ]; then
      iptables -C FORWARD "$dir" "$VETH_HOST" -m comment --comment benchrun-node2 -j ACCEPT 2>/dev/null ||
        iptables -I FORWARD "$dir" "$VETH_HOST" -m comment --comment benchrun-node2 -j ACCEPT
    else
      while iptables -D FORWARD "$dir" "$VETH_HOST" -m comment --comment benchrun-node2 -j ACCEPT 2>/dev/null; do :; done
    fi
  done
}

n2_certs() {
  cert node2-kubelet "system:node:$NODE2_NAME" system:nodes "" clientAuth
  cert node2-kubelet-serving "$NODE2_NAME" "" "DNS:$NODE2_NAME,IP:$NODE2_IP" serverAuth
  kubeconfig node2-kubelet node2-kubelet
  # the API server as seen from the namespace: node 1's address (in its serving certificate)
  local k
  for k in node2-kubelet kube-proxy; do
    sed "s|https://127.0.0.1:6443|https://$NODE_IP:6443|" "$KC/$k.kubeconfig" | write_if_changed "$DATA/$k.kubeconfig"
    chmod 600 "$DATA/$k.kubeconfig"
  done
}

n2_runtime() {
  mkdir -p "$DATA/containerd" "$RUN" "$DATA/cni/net.d"
  # pod network namespaces under our state dir, not /run/netns (node 1's); our own runc root
  containerd_config "[plugins.\"io.containerd.internal.v1.opt\"]
  path = \"$DATA/containerd/opt\"
" "  netns_mounts_under_state_dir = true
" "        Root = \"$RUN/runc\"
" | write_if_changed "$DATA/containerd/config.toml"
  start containerd nsenter --net="$NSPATH" -- containerd --config "$DATA/containerd/config.toml"
  wait_for "containerd (node2)" 60 ctr --address "$SOCK" version
  import_images "$IMAGES/pause.tar" "$IMAGES/runner.tar"
  has_image "$PAUSE_IMAGE" || die "containerd (node2) lacks $PAUSE_IMAGE (hack/images/build.sh pause)"
}

n2_kubelet() {
  mkdir -p "$DATA/kubelet" "$DATA/pod-logs"
  # node 1's kubelet owns /kubepods; this one never touches it (nor node 1 this one's)
  kubelet_config node2-kubelet-serving "cgroupRoot: \"$CGROUP_ROOT\"
" "registerWithTaints:
- {key: benchrun.io/load, value: \"true\", effect: NoSchedule}
" | write_if_changed "$DATA/kubelet-config.yaml"
  start kubelet nsenter --net="$NSPATH" -- "$BIN/kubelet" --config="$DATA/kubelet-config.yaml" \
    --kubeconfig="$DATA/node2-kubelet.kubeconfig" --root-dir="$DATA/kubelet" \
    --hostname-override="$NODE2_NAME" --node-ip="$NODE2_IP" --v=1
  kube_proxy_config "$DATA/kube-proxy.kubeconfig" "$NODE2_NAME" | write_if_changed "$DATA/kube-proxy-config.yaml"
  start kube-proxy nsenter --net="$NSPATH" -- "$BIN/kube-proxy" --config="$DATA/kube-proxy-config.yaml" --v=1
}

# the pod CIDR the controller-manager allocated: the CNI bridge in the namespace and the host
# route follow it (node 1 keeps its own, 10.244.0.0/24)
n2_pod_network() {
  local cidr=""
  wait_for "node $NODE2_NAME registered with a pod CIDR" 60 kubectl get node "$NODE2_NAME" -o 'jsonpath={.spec.podCIDR}' --request-timeout=2s
  for _ in $(seq 30); do
    cidr=$(kubectl get node "$NODE2_NAME" -o 'jsonpath={.spec.podCIDR}' 2>/dev/null || true)
    [ -n "$cidr" ] && break
    sleep 1
  done
  [ -n "$cidr" ] || die "node $NODE2_NAME got no spec.podCIDR (controller-manager --allocate-node-cidrs)"
  [ "$cidr" != "$NODE_POD_CIDR" ] || die "node $NODE2_NAME got node 1's pod CIDR $cidr"
  # written in place, not renamed into the directory: containerd 1.6 reloads its CNI config on
  # a Write event and ignores Create (a rename), and it started before the CIDR was known
  local conf="$DATA/cni/net.d/10-benchrun.conflist" c
  c=$(cni_conflist benchrun-node2 "$cidr")
  [ "$c" = "$(cat "$conf" 2>/dev/null)" ] || printf '%s\n' "$c" > "$conf"
  ip route replace "$cidr" via "$NODE2_IP" dev "$VETH_HOST"
  echo "$cidr" > "$DATA/pod-cidr"
  log "pod CIDR $cidr routed via $NODE2_IP"
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root"
  node1_env
  PIDS="$NODE1_DATA/pids" running kube-apiserver ||
    die "the local cluster is not up (cluster.sh up first)"
  mkdir -p "$DATA" "$LOGS" "$PIDS"
  [ -f "$IMAGES/runner.tar" ] || log "no $IMAGES/runner.tar: runners cannot start on $NODE2_NAME (hack/images/build.sh runner)"
  network
  cgroups
  n2_certs
  n2_runtime
  n2_kubelet
  n2_pod_network
  wait_for "node $NODE2_NAME Ready" 120 kubectl wait --for=condition=Ready "node/$NODE2_NAME" --timeout=2s
  echo "$NODE2_NAME"
}

down() {
  [ "$(id -u)" = 0 ] || die "needs root"
  node1_env
  [ -d "$DATA" ] || return 0
  set +e +o pipefail
  local t c p m cidr api=0
  PIDS="$NODE1_DATA/pids" running kube-apiserver && api=1
  # 1. its pods through the kubelet (CNI DEL, volume unmounts)
  if ((api)) && running kubelet; then
    kubectl delete pod -A --field-selector "spec.nodeName=$NODE2_NAME" --grace-period=1 --wait=false \
      --request-timeout=10s >/dev/null 2>&1
    for _ in $(seq 30); do
      [ "$(ctrk tasks ls -q 2>/dev/null | wc -l)" = 0 ] && break
      sleep 1
    done
  fi
  stop kube-proxy
  stop kubelet
  if running containerd; then
    for t in $(ctrk tasks ls -q 2>/dev/null); do ctrk tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
    sleep 1
    for t in $(ctrk tasks ls -q 2>/dev/null); do ctrk tasks delete -f "$t" >/dev/null 2>&1; done
    for c in $(ctrk containers ls -q 2>/dev/null); do ctrk containers delete "$c" >/dev/null 2>&1; done
  fi
  stop containerd
  for p in $(pgrep -f -- "-address $SOCK" 2>/dev/null); do
    log "killing leftover shim $p"; kill -KILL "$p" 2>/dev/null
  done
  # 2. the Node object (the next tests see one node again)
  ((api)) && kubectl delete node "$NODE2_NAME" --request-timeout=10s >/dev/null 2>&1 && log "deleted node $NODE2_NAME"
  # 3. mounts (pod volumes, pod netns under our state dir, overlay rootfs)
  grep -oE " ($DATA|$RUN)/[^ ]*" /proc/self/mountinfo | sort -r | uniq |
    while read -r m; do umount -l "$m" 2>/dev/null; done
  # 4. network: host route, FORWARD rules, veth, namespace (its iptables, bridge and sysctls go with it)
  cidr=$(cat "$DATA/pod-cidr" 2>/dev/null)
  [ -n "$cidr" ] && ip route del "$cidr" via "$NODE2_IP" 2>/dev/null
  ip link del "$VETH_HOST" 2>/dev/null && log "deleted veth $VETH_HOST"
  [ -e "$NSPATH" ] && ip netns del "$NETNS" && log "deleted netns $NETNS"
  forward_rules -D
  # 5. cgroups under cgroupRoot, deepest first
  for m in $(cgroup_dirs); do [ -d "$m" ] && find "$m" -depth -type d -exec rmdir {} \; 2>/dev/null; done
  # 6. state (containerd's image store and certificates kept, like node 1's)
  rm -rf "$DATA/kubelet" "$DATA/pod-logs" "$DATA/cni" "$DATA/pids" "$DATA/pod-cidr" "$RUN"
  [ -d "$LOGS" ] && { rm -rf "$DATA/logs.prev"; mv "$LOGS" "$DATA/logs.prev"; }
  log "down (logs in $DATA/logs.prev)"
  return 0
}

status() {
  local n ok=0
  node1_env
  for n in "${N2_COMPONENTS[@]}"; do
    if running "$n"; then printf 'node2 %-18s running (pid %s)\n' "$n" "$(pid_of "$n")"
    else printf 'node2 %-18s stopped\n' "$n"; ok=1; fi
  done
  [ -e "$NSPATH" ] && echo "netns $NETNS: $(innet ip -br -4 addr show eth0 2>/dev/null)"
  return $ok
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
*) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
