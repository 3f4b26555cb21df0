#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, without kind, Docker or a registry:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy built
# from Go modules (hack/build-k8s-binaries.sh all), containerd + runc + CNI plugins from
# Debian, images built locally (hack/images/build.sh) and imported into containerd.
#
# Usage: hack/local-cluster/cluster.sh up|down|status|cached|kubeconfig
#   up          idempotent: builds/reuses binaries, certs and base images, starts what is
#               not running, waits for the node (and CoreDNS) to be Ready, prints KUBECONFIG
#   down        deletes workloads, stops every process it started (by recorded PID), removes
#               iptables chains, cni0, mounts, kubelet cgroups and restores the sysctls it set;
#               keeps the cached binaries, images, certs and containerd's image store
#               (down --purge: also certs and containerd's store; binaries and image tarballs stay)
#   status      processes, node and pods; exit 0 only when every component runs
#   kubeconfig  prints the admin kubeconfig path
#   node2 up|down|status  a second node in its own network namespace (hack/local-cluster/node2.sh)
#   load [TAR]  imports image tarballs (default: all in $BENCHRUN_CACHE/images) that changed
#   cached      exit 0 when the slow parts of a cold start are cached (Kubernetes binaries, the
#               Debian/JRE/Python image tarballs, helm): `up` + `make test-e2e` then take minutes,
#               not the ~20 of a cold machine; prints what is missing otherwise (.ci/run reports it)
# Env: BENCHRUN_CACHE (default ~/.cache/benchrun); cluster data in $BENCHRUN_CACHE/cluster.
#      NODE_IP (default: source address of the default route), NODE_NAME (default: hostname).
# Needs root, Debian bookworm (installs containerd runc containernetworking-plugins iptables
# conntrack socat debootstrap when missing). See hack/local-cluster/README.md for the gotchas.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
K8S_VERSION=v1.34.4
BIN="$CACHE/k8s-$K8S_VERSION/bin"
DATA="$CACHE/cluster"
IMAGES="$CACHE/images"
RUN=/run/benchrun-containerd
SOCK="$RUN/containerd.sock"
POD_CIDR="${POD_CIDR:-10.244.0.0/16}"
NODE_POD_CIDR="${NODE_POD_CIDR:-10.244.0.0/24}"
SERVICE_CIDR="${SERVICE_CIDR:-10.96.0.0/16}"
SERVICE_IP=10.96.0.1
DNS_IP=10.96.0.10
PAUSE_IMAGE=benchrun.local/pause:3.10
COREDNS_IMAGE=benchrun.local/coredns:v1.12.4
PKI="$DATA/pki"; KC="$DATA/kubeconfig"; LOGS="$DATA/logs"; PIDS="$DATA/pids"
ADMIN_KC="$KC/admin.kubeconfig"
# kernel settings we change (or kubelet changes); recorded before the first start, restored on down
SYSCTLS=(net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# every component, in start order (down stops them in reverse)
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)
export PATH="$BIN:/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin:/usr/local/go/bin"
T0=$(date +%s)
log() { echo "[local-cluster $(date +%T) +$(($(date +%s) - T0))s] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
kubectl() { "$BIN/kubectl" --kubeconfig "$ADMIN_KC" "$@"; }
ctrk() { ctr --address "$SOCK" -n k8s.io "$@"; }
# has_image NAME: containerd holds the image. (Not `ctrk images ls | grep -q`: grep exits at the
# first match, ctr dies of SIGPIPE and pipefail turns the match into a failure, intermittently.)
has_image() { local all; all=$(ctrk images ls -q 2>/dev/null) && grep -qxF "$1" <<< "$all"; }
pid_of() { cat "$PIDS/$1.pid" 2>/dev/null; }
running() { local p; p=$(pid_of "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
# write stdin to FILE only when the content differs (kube-proxy exits when its config file changes)
write_if_changed() { local t; t=$(mktemp); cat > "$t"; if cmp -s "$t" "$1"; then rm -f "$t"; else mv "$t" "$1"; fi; }
wait_for() { # DESC SECONDS CMD...
  local desc=$1 t=$2 i; shift 2
  for ((i = 0; i < t; i++)); do "$@" >/dev/null 2>&1 && { log "$desc: ok"; return 0; }; sleep 1; done
  log "timed out after ${t}s waiting for $desc"; return 1
}
start() { # NAME CMD...   (own session, output to LOGS/NAME.log, pid recorded for down)
  local name=$1; shift
  if running "$name"; then return 0; fi
  setsid "$@" >> "$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name.pid"
  log "started $name (pid $!)"
}

# ---------------------------------------------------------------------------------- up
packages() {
  local p missing=()
  for p in containerd runc containernetworking-plugins iptables conntrack socat debootstrap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  log "apt-get install ${missing[*]}"
  apt-get update -qq
  # Debian's containerd unit is never used: containerd runs with our config and socket.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 \
    --no-install-recommends "${missing[@]}" >/dev/null
}

# cert NAME CN O SANS USAGE: one key + certificate signed by the cluster CA (kept if present)
cert() {
  local name=$1 cn=$2 o=$3 sans=$4 usage=$5 subj
  [ -f "$PKI/$name.crt" ] && return 0
  subj="/CN=$cn"; [ -n "$o" ] && subj="/O=$o/CN=$cn"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } > "$PKI/$name.ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "$subj" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}
kubeconfig() { # NAME CERT
  local f="$KC/$1.kubeconfig"
  [ -f "$f" ] && return 0
  cat > "$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: benchrun-local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: $(base64 -w0 < "$PKI/ca.crt")
users:
- name: $1
  user:
    client-certificate-data: $(base64 -w0 < "$PKI/$2.crt")
    client-key-data: $(base64 -w0 < "$PKI/$2.key")
contexts:
- name: benchrun-local
  context: {cluster: benchrun-local, user: $1}
current-context: benchrun-local
EOF
  chmod 600 "$f"
}
certs() {
  mkdir -p "$PKI" "$KC"; chmod 700 "$PKI"
  if [ -f "$DATA/node.env" ]; then
    # certificates carry the node name and IP: a changed address means new serving certs
    # shellcheck source=/dev/null
    . "$DATA/node.env"
    if [ "$NODE_IP" != "$WANT_NODE_IP" ] || [ "$NODE_NAME" != "$WANT_NODE_NAME" ]; then
      log "node address changed ($NODE_NAME/$NODE_IP -> $WANT_NODE_NAME/$WANT_NODE_IP): new serving certs"
      rm -f "$PKI"/apiserver.* "$PKI"/kubelet.* "$PKI"/kubelet-serving.* "$KC/kubelet.kubeconfig"
    fi
  fi
  NODE_IP=$WANT_NODE_IP NODE_NAME=$WANT_NODE_NAME
  printf 'NODE_NAME=%s\nNODE_IP=%s\n' "$NODE_NAME" "$NODE_IP" > "$DATA/node.env"
  if [ ! -f "$PKI/ca.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 3650 \
      -subj "/CN=benchrun-local-ca" 2>/dev/null
  fi
  if [ ! -f "$PKI/sa.key" ]; then
    openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  cert apiserver kube-apiserver "" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:$NODE_NAME,IP:127.0.0.1,IP:$NODE_IP,IP:$SERVICE_IP" serverAuth
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" clientAuth
  cert admin kubernetes-admin system:masters "" clientAuth
  cert controller-manager system:kube-controller-manager "" "" clientAuth
  cert scheduler system:kube-scheduler "" "" clientAuth
  cert kube-proxy system:kube-proxy "" "" clientAuth
  cert kubelet "system:node:$NODE_NAME" system:nodes "" clientAuth
  cert kubelet-serving "$NODE_NAME" "" "DNS:$NODE_NAME,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP" serverAuth
  local k; for k in admin controller-manager scheduler kube-proxy kubelet; do kubeconfig "$k" "$k"; done
}

record_sysctls() {
  [ -f "$DATA/sysctl.orig" ] && return 0
  local k
  for k in "${SYSCTLS[@]}"; do
    [ -e "/proc/sys/${k//.//}" ] && echo "$k=$(sysctl -n "$k")"
  done > "$DATA/sysctl.orig.tmp"
  mv "$DATA/sysctl.orig.tmp" "$DATA/sysctl.orig"
}

controlplane() {
  start etcd "$BIN/etcd" --name benchrun --data-dir "$DATA/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster benchrun=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn
  wait_for "etcd health" 60 curl -fs http://127.0.0.1:2379/health
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$NODE_IP" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true --profiling=false --v=1
  wait_for "kube-apiserver /readyz" 180 kubectl get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$KC/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$KC/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$KC/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --allocate-node-cidrs=true --cluster-cidr="$POD_CIDR" --node-cidr-mask-size=24 \
    --service-cluster-ip-range="$SERVICE_CIDR" --v=1
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$KC/scheduler.kubeconfig" \
    --authentication-kubeconfig="$KC/scheduler.kubeconfig" \
    --authorization-kubeconfig="$KC/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --v=1
}

# The configuration files of a node (node 1 here, node 2 in node2.sh), printed for
# write_if_changed; each node's own lines are passed in.

# cni_conflist NAME SUBNET: the bridge network of a node's pods (cni0 in its network namespace)
cni_conflist() {
  cat <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$1",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$2"}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$DATA/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# containerd_config [TOP] [CRI] [RUNC]: containerd for DATA, RUN and SOCK; TOP, CRI and RUNC are
# extra lines (each ending in a newline) at the top level, in the CRI plugin and in runc's options
containerd_config() {
  cat <<EOF
version = 2
root = "$DATA/containerd/root"
state = "$RUN/state"
[grpc]
  address = "$SOCK"
${1:-}[plugins."io.containerd.grpc.v1.cri"]
  # our own pause image: nothing can be pulled
  sandbox_image = "$PAUSE_IMAGE"
  # root here lacks CAP_SYS_RESOURCE, so runc cannot set the sandbox's oom_score_adj=-998
  # ("can't get final child's PID from pipe: EOF"): clamp to containerd's own value
  restrict_oom_score_adj = true
${2:-}  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # cgroup v1 without systemd: cgroupfs, like the kubelet
        SystemdCgroup = false
${3:-}  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DATA/cni/net.d"
EOF
}

# kubelet_config SERVING [CGROUPS] [NODE]: the kubelet of SOCK with the serving certificate
# PKI/SERVING.crt; CGROUPS and NODE are extra lines (each ending in a newline) after the cgroup
# settings and before the image settings
kubelet_config() {
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$SOCK
# cgroup v1, no systemd (1.35 would need failCgroupV1: false to start at all)
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
${2:-}authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$PKI/$1.crt"
tlsPrivateKeyFile: "$PKI/$1.key"
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: /etc/resolv.conf
podLogsDirectory: "$DATA/pod-logs"
${3:-}# images are imported locally and cannot be pulled again: never garbage-collect them
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
serializeImagePulls: false
EOF
}

# kube_proxy_config KUBECONFIG NODE: kube-proxy (iptables mode) of node NODE
kube_proxy_config() {
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$1"}
mode: iptables
clusterCIDR: "$POD_CIDR"
hostnameOverride: "$2"
conntrack: {maxPerCore: 0}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
EOF
}

host_network() {
  record_sysctls
  # pod -> ClusterIP -> pod on the same bridge is routed and DNATed: needs forwarding and
  # bridged traffic through iptables (br_netfilter is built into this kernel)
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
  mkdir -p "$DATA/cni/net.d"
  cni_conflist benchrun "$NODE_POD_CIDR" | write_if_changed "$DATA/cni/net.d/10-benchrun.conflist"
}

runtime() {
  mkdir -p "$DATA/containerd" "$RUN"
  containerd_config "" "" "" | write_if_changed "$DATA/containerd/config.toml"
  start containerd containerd --config "$DATA/containerd/config.toml"
  wait_for "containerd" 60 ctr --address "$SOCK" version
}

# import cached image tarballs (all of them, or the given ones) whose content containerd does
# not have yet: hack/images/build.sh writes IMG.tar.id ("NAME CONFIG-DIGEST") next to each
import_images() {
  local t name id stamps="$DATA/containerd/imported"
  mkdir -p "$stamps"
  running containerd || { log "containerd not running: images are imported on up"; return 0; }
  if (($# == 0)); then set -- "$IMAGES"/*.tar; fi
  for t in "$@"; do
    [ -f "$t" ] && [ -f "$t.id" ] || continue
    read -r name id < "$t.id"
    if cmp -s "$t.id" "$stamps/${name//[\/:]/_}" && has_image "$name"; then continue; fi
    ctrk images import "$t" >/dev/null
    cp "$t.id" "$stamps/${name//[\/:]/_}"
    log "imported $name"
  done
}

node() {
  mkdir -p "$DATA/kubelet" "$DATA/pod-logs"
  # up builds and imports CoreDNS before this: a cluster without DNS (service and per-pod
  # names unresolvable) must not come up looking healthy
  has_image "$COREDNS_IMAGE" || die "containerd lacks $COREDNS_IMAGE (hack/images/build.sh coredns; cluster.sh load)"
  kubelet_config kubelet-serving "" "podCIDR: \"$NODE_POD_CIDR\"
" | write_if_changed "$DATA/kubelet-config.yaml"
  start kubelet "$BIN/kubelet" --config="$DATA/kubelet-config.yaml" \
    --kubeconfig="$KC/kubelet.kubeconfig" --root-dir="$DATA/kubelet" \
    --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1
  kube_proxy_config "$KC/kube-proxy.kubeconfig" "$NODE_NAME" | write_if_changed "$DATA/kube-proxy-config.yaml"
  start kube-proxy "$BIN/kube-proxy" --config="$DATA/kube-proxy-config.yaml" --v=1
  wait_for "node $NODE_NAME Ready" 180 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  sed "s|@IMAGE@|$COREDNS_IMAGE|; s|@DNS_IP@|$DNS_IP|" "$HERE/coredns.yaml" | kubectl apply -f - >/dev/null
  kubectl -n kube-system rollout status deploy/coredns --timeout=180s >/dev/null || die "CoreDNS did not become ready"
  log "CoreDNS ready"
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root"
  packages
  local t
  t=$(date +%s)
  [ -x "$BIN/kubelet" ] && [ -x "$BIN/coredns" ] || log "building the Kubernetes binaries (slow once, cached in $BIN)"
  "$ROOT/hack/build-k8s-binaries.sh" all > /dev/null
  log "binaries ready ($(($(date +%s) - t))s)"
  mkdir -p "$DATA" "$LOGS" "$PIDS"
  WANT_NODE_IP="${NODE_IP:-$(ip -4 route get 1.1.1.1 | sed -n 's/.* src \([0-9.]*\).*/\1/p')}"
  WANT_NODE_NAME="${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}"
  [ -n "$WANT_NODE_IP" ] || die "no default route: set NODE_IP"
  certs
  # the sandbox (pause) and CoreDNS images; the others come from `hack/images/build.sh`
  local need=()
  for t in pause coredns; do [ -f "$IMAGES/$t.tar.id" ] || need+=("$t"); done
  ((${#need[@]} == 0)) || "$ROOT/hack/images/build.sh" --no-import "${need[@]}" >&2
  controlplane
  host_network
  runtime
  import_images
  node
  log "cluster up; export KUBECONFIG=$ADMIN_KC"
  echo "$ADMIN_KC"
}

# ---------------------------------------------------------------------------------- down
stop() {
  local n=$1 pid i
  pid=$(pid_of "$n") || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for i in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; sleep 0.5; fi
    log "stopped $n ($pid)"
  fi
  rm -f "$PIDS/$n.pid"
}

down() {
  [ "$(id -u)" = 0 ] || die "needs root"
  [ -d "$DATA" ] || { log "no cluster in $DATA"; return 0; }
  # best effort from here on: one failed step must not leave the rest behind
  set +e +o pipefail
  local ns i n t c p
  # 0. the second node, if one was brought up (node2.sh)
  [ -d "$DATA/node2/pids" ] && "$HERE/node2.sh" down
  # 1. let the kubelet tear pods down through CRI (CNI DEL, volume unmounts)
  if running kubelet && running kube-apiserver; then
    log "deleting workloads"
    for ns in $(kubectl get ns -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
      case $ns in kube-system | kube-public | kube-node-lease | default) ;;
      *) kubectl delete ns "$ns" --wait=false --request-timeout=10s >/dev/null 2>&1 || true ;; esac
    done
    kubectl delete deploy,rs,sts,ds,job,pod --all -A --grace-period=1 --wait=false --request-timeout=10s >/dev/null 2>&1 || true
    for i in $(seq 60); do
      n=$(crictl_pods)
      [ "$n" = 0 ] && break
      sleep 1
    done
  fi
  stop kube-proxy
  stop kubelet
  # 2. whatever is left in containerd: kill and delete tasks, containers
  if running containerd; then
    for t in $(ctrk tasks ls -q 2>/dev/null); do ctrk tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    sleep 1
    for t in $(ctrk tasks ls -q 2>/dev/null); do ctrk tasks delete -f "$t" >/dev/null 2>&1 || true; done
    for c in $(ctrk containers ls -q 2>/dev/null); do ctrk containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  # shims of *our* containerd (they carry our private socket path on their command line)
  for p in $(pgrep -f -- "-address $SOCK" 2>/dev/null); do
    log "killing leftover shim $p"; kill -KILL "$p" 2>/dev/null || true
  done
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  # 3. network: kube-proxy's and the CNI plugins' chains, the bridge
  [ -x "$BIN/kube-proxy" ] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  local tbl r ch
  for tbl in nat filter mangle; do
    iptables -t $tbl -S 2>/dev/null | grep -E '^-A .*(CNI-|KUBE-)' | sed 's/^-A/-D/' |
      while read -r r; do eval iptables -t $tbl "$r" 2>/dev/null || true; done
    for ch in $(iptables -t $tbl -S 2>/dev/null | awk '/^-N (CNI-|KUBE-)/{print $2}'); do
      iptables -t $tbl -F "$ch" 2>/dev/null || true
    done
    for ch in $(iptables -t $tbl -S 2>/dev/null | awk '/^-N (CNI-|KUBE-)/{print $2}'); do
      iptables -t $tbl -X "$ch" 2>/dev/null || true
    done
  done
  ip link del cni0 2>/dev/null && log "deleted cni0"
  # 4. mounts under the data dir, our containerd state and CNI network namespaces
  grep -oE " ($DATA|$RUN|/run/netns/cni-)[^ ]*" /proc/self/mountinfo | sort -r | uniq |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  for n in /run/netns/cni-*; do [ -e "$n" ] && rm -f "$n"; done
  # 5. the kubelet's cgroups (cgroupfs driver: kubepods* in every v1 hierarchy), deepest first
  find /sys/fs/cgroup -depth -type d -path '*/kubepods*' -exec rmdir {} \; 2>/dev/null || true
  # 6. sysctls
  if [ -f "$DATA/sysctl.orig" ]; then
    local kv
    while IFS= read -r kv; do sysctl -qw "$kv" 2>/dev/null || log "could not restore $kv"; done < "$DATA/sysctl.orig"
    rm -f "$DATA/sysctl.orig"; log "restored sysctls"
  fi
  # 7. cluster state (certs, logs of this run and containerd's image store are kept)
  rm -rf "$DATA/etcd" "$DATA/kubelet" "$DATA/pod-logs" "$DATA/cni" "$DATA/pids" "$RUN"
  [ -d "$LOGS" ] && { rm -rf "$DATA/logs.prev"; mv "$LOGS" "$DATA/logs.prev"; }
  if [ "${1:-}" = --purge ]; then
    # also certificates and containerd's image store (~2.4 GB with every image imported)
    rm -rf "$DATA"; log "down, $DATA purged (binaries and image tarballs kept)"; return 0
  fi
  log "down (logs of this run in $DATA/logs.prev)"
}
crictl_pods() { ctrk tasks ls -q 2>/dev/null | wc -l; }

# ---------------------------------------------------------------------------------- status
status() {
  local n ok=0
  for n in "${COMPONENTS[@]}"; do
    if running "$n"; then printf '%-24s running (pid %s)\n' "$n" "$(pid_of "$n")"
    else printf '%-24s stopped\n' "$n"; ok=1; fi
  done
  echo "KUBECONFIG=$ADMIN_KC"
  if running kube-apiserver; then
    kubectl get nodes -o wide --request-timeout=5s || ok=1
    kubectl get pods -A -o wide --request-timeout=5s || true
  fi
  return $ok
}

# cached: the Kubernetes node binaries, the image tarballs that take minutes to build (the Go
# images manager and runner are rebuilt by every e2e run anyway) and helm.
cached() {
  local missing=() b t
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns; do
    [ -x "$BIN/$b" ] || missing+=("$BIN/$b")
  done
  for t in pause coredns kubectl redis valkey redis-operator proxy hetu; do
    [ -f "$IMAGES/$t.tar" ] || missing+=("$IMAGES/$t.tar")
  done
  [ -x "$CACHE/tools/helm-${HELM_VERSION:-v3.22.0}/helm" ] || missing+=("$CACHE/tools/helm-${HELM_VERSION:-v3.22.0}/helm")
  if ((${#missing[@]})); then
    printf 'not cached: %s\n' "${missing[@]}"
    return 1
  fi
  echo "cached: Kubernetes $K8S_VERSION binaries, image tarballs and helm in $CACHE"
}

# sourced (node2.sh uses the helpers and settings): define only
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0
case "${1:-}" in
up) up ;;
node2) shift; exec "$HERE/node2.sh" "$@" ;;
cached) cached ;;
down) down "${2:-}" ;;
status) status ;;
kubeconfig) echo "$ADMIN_KC" ;;
load) shift; import_images "$@" ;;
*) echo "usage: $0 up|down [--purge]|status|cached|kubeconfig|load [IMAGE.tar...]|node2 up|down|status" >&2; exit 2 ;;
esac
