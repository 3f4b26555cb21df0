#!/usr/bin/env bash
# Build benchrun's container images without a registry or Docker: docker-archive tarballs
# written by hack/images/mkimage.py into $BENCHRUN_CACHE/images (default ~/.cache/benchrun),
# then imported into the local cluster's containerd when it runs (hack/local-cluster/cluster.sh load).
#
# Usage: hack/images/build.sh [--no-import] [IMAGE...]      (default: core)
#   core            pause coredns manager runner redis valkey kubectl
#   extra           redis-operator proxy hetu echo prometheus
#   all             core + extra
#   pause           benchrun.local/pause:3.10           sandbox image (hack/images/pause)
#   coredns         benchrun.local/coredns:v1.12.4      coredns built by hack/build-k8s-binaries.sh all
#   kubectl         benchrun.local/kubectl:v1.34.4      kubectl (the chart's CRD upgrade hook), uid 65532
#   manager         benchrun.local/manager:dev          cmd/manager, uid 65532
#   runner          benchrun.local/k6:dev               cmd/k6 + cmd/benchrun-runner + scripts/k6
#                                                        (/opt/benchrun/scripts/k6), busybox sh, uid 65532
#   redis           benchrun.local/redis:dev            debootstrap minbase bookworm + redis-server,
#                                                        redis-sentinel, redis-tools
#   valkey          benchrun.local/valkey:dev           same + valkey 8 from bookworm-backports,
#                                                        redis-* names linked to the valkey binaries
#   redis-operator  benchrun.local/redis-operator:v0.23.0  OT-CONTAINER-KIT redis-operator from the Go proxy
#   proxy           benchrun.local/camellia-redis-proxy:dev  camellia-redis-proxy 1.1.1 (Maven Central) on
#                                                        OpenJDK 17, main class io.benchrun.proxy.Main
#   hetu            benchrun.local/hetu-bench:dev       hack/hetu-runtime.sh rootfs (Python 3.14, hetudb)
#                                                        + examples/hetu-bench
#   echo            benchrun.local/echo:dev             cmd/echo-server (/usr/local/bin/echo-server), uid 65532
#   prometheus      benchrun.local/prometheus:2.42      the host's Debian /usr/bin/prometheus (package
#                                                        prometheus) + the libc it links, uid 65532
# Go images are rebuilt every time (the Go build cache makes that cheap; identical binaries give
# identical images, which are then not imported again). Debian-based images are rebuilt only when
# their package list or inputs change (key in IMAGE.tar.key). Build times go to
# $BENCHRUN_CACHE/images/build-times.log. Needs root for debootstrap/chroot.
# Env: DEBIAN_MIRROR (default: the host's apt mirror), GO (default: go on PATH).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}"
IMG="$CACHE/images"
K8S_BIN="$CACHE/k8s-v1.34.4/bin"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
REDIS_OPERATOR_VERSION=v0.23.0
CAMELLIA_VERSION=1.1.1
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
IMPORT=yes
[ "${1:-}" = --no-import ] && { IMPORT=no; shift; }
WANT=()
for w in "${@:-core}"; do case $w in
  core) WANT+=(pause coredns manager runner redis valkey kubectl) ;;
  extra) WANT+=(redis-operator proxy hetu echo prometheus) ;;
  all) WANT+=(pause coredns manager runner redis valkey kubectl redis-operator proxy hetu echo prometheus) ;;
  *) WANT+=("$w") ;;
esac; done
mkdir -p "$IMG"
exec 9> "$IMG/.lock"
flock 9
log() { echo "[images $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
BUILT=()

# shellcheck source=hack/debian-lib.sh
source "$ROOT/hack/debian-lib.sh" # host_mirror
MIRROR="${DEBIAN_MIRROR:-$(host_mirror)}"

# a fresh staging rootfs with /tmp, passwd/group (root + nonroot 65532)
stage() {
  local d; d=$(mktemp -d "$IMG/.stage-$1.XXXX")
  mkdir -p "$d/tmp" "$d/etc"; chmod 1777 "$d/tmp"; chmod 755 "$d"
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$d/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$d/etc/group"
  echo "$d"
}
# add the nonroot user (65532, what every benchrun pod runs as) to a Debian rootfs
debian_nonroot() {
  grep -q '^nonroot:' "$1/etc/passwd" || chroot "$1" sh -c \
    'groupadd -g 65532 nonroot && useradd -u 65532 -g 65532 -d /home/nonroot -m -s /usr/sbin/nologin nonroot'
}
gobuild() { # OUT PKG... (from the repository; static, stripped, reproducible)
  local out=$1; shift
  (cd "$ROOT" && nice -n 10 "$GO" build -trimpath -ldflags "-s -w" -o "$out" "$@")
}
# files' mtimes to the epoch, so identical binaries give identical layers
flatten_mtimes() { find "$1" -exec touch -h -d @0 {} +; }
mk() { # NAME IMAGE ROOTFS mkimage-args...
  local name=$1 image=$2 root=$3; shift 3
  python3 "$HERE/mkimage.py" --name "$image" --rootfs "$root" --out "$IMG/$name.tar" \
    --label "org.opencontainers.image.source=benchrun" "$@" >&2
}
# key of a Debian-based image: its recipe (the calling build_* function and the helpers it
# uses, mkimage.py) + extra inputs; editing another image's recipe does not invalidate it
key_of() {
  { declare -f "${FUNCNAME[1]}" stage debian_nonroot debootstrap_into debian_cleanup mk
    sha256sum "$HERE/mkimage.py"; echo "$*"; } | sha256sum | cut -c1-16
}
fresh() { [ -f "$IMG/$1.tar" ] && [ -f "$IMG/$1.tar.id" ] && [ "$(cat "$IMG/$1.tar.key" 2>/dev/null)" = "$2" ]; }
# debootstrap minbase bookworm with PACKAGES into DIR (the .deb downloads are cached)
debootstrap_into() { # DIR PACKAGES(comma-separated)
  mkdir -p "$CACHE/debs"
  log "debootstrap minbase bookworm +$2 (from $MIRROR)"
  debootstrap --variant=minbase --include="$2" --cache-dir="$CACHE/debs" bookworm "$1" "$MIRROR" \
    > "$IMG/debootstrap-$(basename "$1").log" 2>&1 || { tail -20 "$IMG/debootstrap-$(basename "$1").log" >&2; return 1; }
  # never start services inside the chroot
  printf '#!/bin/sh\nexit 101\n' > "$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"
}
debian_cleanup() {
  chroot "$1" apt-get clean
  rm -rf "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/info/* \
    "$1/usr/sbin/policy-rc.d" "$1"/var/log/*.log
  mkdir -p "$1/data"; chmod 1777 "$1/data"
}

build_pause() {
  local r; r=$(stage pause)
  gobuild "$r/pause" ./hack/images/pause
  flatten_mtimes "$r"
  mk pause benchrun.local/pause:3.10 "$r" --entrypoint '["/pause"]' --user 65532:65532
  rm -rf "$r"
}
build_coredns() {
  # a cold cache: build the Kubernetes binaries (coredns included) first; cached afterwards
  [ -x "$K8S_BIN/coredns" ] || "$ROOT/hack/build-k8s-binaries.sh" all >&2 || die "hack/build-k8s-binaries.sh all failed"
  [ -x "$K8S_BIN/coredns" ] || die "no $K8S_BIN/coredns after hack/build-k8s-binaries.sh all"
  local r; r=$(stage coredns)
  cp "$K8S_BIN/coredns" "$r/coredns"
  flatten_mtimes "$r"
  mk coredns benchrun.local/coredns:v1.12.4 "$r" --entrypoint '["/coredns"]' --port 53/udp --port 53/tcp
  rm -rf "$r"
}
build_kubectl() {
  [ -x "$K8S_BIN/kubectl" ] || "$ROOT/hack/build-k8s-binaries.sh" >&2 || die "hack/build-k8s-binaries.sh failed"
  [ -x "$K8S_BIN/kubectl" ] || die "no $K8S_BIN/kubectl after hack/build-k8s-binaries.sh"
  local r; r=$(stage kubectl)
  mkdir -p "$r/usr/local/bin"; cp "$K8S_BIN/kubectl" "$r/usr/local/bin/kubectl"
  flatten_mtimes "$r"
  mk kubectl benchrun.local/kubectl:v1.34.4 "$r" --entrypoint '["/usr/local/bin/kubectl"]' --user 65532:65532 \
    --env HOME=/tmp
  rm -rf "$r"
}
build_manager() {
  local r; r=$(stage manager)
  gobuild "$r/manager" ./cmd/manager
  flatten_mtimes "$r"
  mk manager benchrun.local/manager:dev "$r" --entrypoint '["/manager"]' --user 65532:65532
  rm -rf "$r"
}
build_echo() {
  local r; r=$(stage echo)
  mkdir -p "$r/usr/local/bin"
  gobuild "$r/usr/local/bin/echo-server" ./cmd/echo-server
  flatten_mtimes "$r"
  mk echo benchrun.local/echo:dev "$r" --entrypoint '["/usr/local/bin/echo-server"]' --user 65532:65532 \
    --env PATH=/usr/local/bin --port 7007/tcp
  rm -rf "$r"
}
build_runner() {
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends busybox-static >/dev/null
  local r a; r=$(stage runner)
  mkdir -p "$r/usr/local/bin" "$r/bin" "$r/opt/benchrun/scripts" "$r/home/nonroot"
  chown 65532:65532 "$r/home/nonroot"
  gobuild "$r/usr/local/bin/k6" ./cmd/k6
  gobuild "$r/usr/local/bin/benchrun-runner" ./cmd/benchrun-runner
  cp -r "$ROOT/scripts/k6" "$r/opt/benchrun/scripts/k6"
  # a shell and coreutils for kubectl exec / debugging
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
  flatten_mtimes "$r"
  mk runner benchrun.local/k6:dev "$r" --entrypoint '["/usr/local/bin/benchrun-runner"]' --user 65532:65532 \
    --workdir /tmp --env HOME=/home/nonroot
  rm -rf "$r"
}
build_redis() {
  local pk=redis-server,redis-sentinel,redis-tools,hostname,procps k
  k=$(key_of "$pk"); fresh redis "$k" && { log "redis: up to date"; return 0; }
  local r="$IMG/.rootfs-redis"; rm -rf "$r"
  debootstrap_into "$r" "$pk"
  debian_nonroot "$r"
  debian_cleanup "$r"
  mk redis benchrun.local/redis:dev "$r" --entrypoint '["redis-server"]' --workdir /data --port 6379/tcp \
    --user 65532:65532
  echo "$k" > "$IMG/redis.tar.key"; rm -rf "$r"
}
build_valkey() {
  local pk=hostname,procps,ca-certificates k b
  k=$(key_of "$pk valkey-server valkey-sentinel valkey-tools bookworm-backports"); fresh valkey "$k" && { log "valkey: up to date"; return 0; }
  local r="$IMG/.rootfs-valkey"; rm -rf "$r"
  debootstrap_into "$r" "$pk"
  echo "deb $MIRROR bookworm-backports main" > "$r/etc/apt/sources.list.d/backports.list"
  chroot "$r" apt-get update -q >/dev/null
  chroot "$r" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -t bookworm-backports valkey-server valkey-sentinel valkey-tools >/dev/null
  rm -f "$r/etc/apt/sources.list.d/backports.list"
  # the operator and the builtin provider run redis-server / redis-sentinel / redis-cli
  for b in server sentinel cli benchmark check-aof check-rdb; do
    [ -e "$r/usr/bin/redis-$b" ] || [ ! -e "$r/usr/bin/valkey-$b" ] || ln -s "valkey-$b" "$r/usr/bin/redis-$b"
  done
  chroot "$r" redis-server --version | grep -qi valkey || die "valkey image: redis-server is not valkey"
  debian_nonroot "$r"
  debian_cleanup "$r"
  mk valkey benchrun.local/valkey:dev "$r" --entrypoint '["valkey-server"]' --workdir /data --port 6379/tcp \
    --user 65532:65532
  echo "$k" > "$IMG/valkey.tar.key"; rm -rf "$r"
}
build_redis-operator() {
  local dir r
  dir=$(cd /tmp && GONOSUMDB=github.com/OT-CONTAINER-KIT/redis-operator GOFLAGS=-mod=mod \
    "$GO" mod download -json "github.com/OT-CONTAINER-KIT/redis-operator@$REDIS_OPERATOR_VERSION" |
    sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -n "$dir" ] || die "could not download the redis-operator module"
  mkdir -p "$CACHE/tools/redis-operator-$REDIS_OPERATOR_VERSION"
  local bin="$CACHE/tools/redis-operator-$REDIS_OPERATOR_VERSION/operator"
  if [ ! -x "$bin" ]; then
    log "building redis-operator $REDIS_OPERATOR_VERSION"
    (cd "$dir" && GONOSUMDB=github.com/OT-CONTAINER-KIT/redis-operator GOFLAGS="-mod=mod -buildvcs=false" \
      nice -n 10 "$GO" build -trimpath -ldflags "-s -w" -o "$bin.tmp" ./cmd/main.go) && mv "$bin.tmp" "$bin"
  fi
  # CRDs next to the image, for the e2e to apply server-side
  mkdir -p "$IMG/redis-operator-crds"; cp "$dir"/config/crd/bases/*.yaml "$IMG/redis-operator-crds/"
  chmod -R u+w "$IMG/redis-operator-crds"
  r=$(stage redis-operator)
  cp "$bin" "$r/operator"
  flatten_mtimes "$r"
  mk redis-operator "benchrun.local/redis-operator:$REDIS_OPERATOR_VERSION" "$r" \
    --entrypoint '["/operator"]' --cmd '["manager"]' --user 65532:65532
  rm -rf "$r"
}
build_proxy() {
  local k; k=$(key_of "openjdk-17-jre-headless camellia $CAMELLIA_VERSION $(cat "$HERE"/camellia/pom.xml "$HERE"/camellia/Main.java | sha256sum)")
  fresh proxy "$k" && { log "proxy: up to date"; return 0; }
  local r="$IMG/.rootfs-proxy" w="$IMG/.camellia-build"; rm -rf "$r" "$w"
  debootstrap_into "$r" procps,hostname,ca-certificates
  # jars from Maven Central with maven inside the chroot, main class compiled there too
  mkdir -p "$r/opt/camellia/lib" "$r/build" "$CACHE/m2"
  cp "$HERE/camellia/pom.xml" "$r/build/"; mkdir -p "$r/build/src/io/benchrun/proxy"
  cp "$HERE/camellia/Main.java" "$r/build/src/io/benchrun/proxy/"
  mkdir -p "$r/build/ca"; cp /usr/local/share/ca-certificates/*.crt "$r/build/ca/" 2>/dev/null || true
  mkdir -p "$r/root/.m2" && mount --bind "$CACHE/m2" "$r/root/.m2"
  mount -t proc proc "$r/proc"
  local rc=0
  chroot "$r" sh -ec '
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends openjdk-17-jdk-headless maven >/dev/null
    cd /build
    # TLS to Maven Central may be intercepted by a CA only the host trusts: a build-only
    # truststore (Java default + the host local CAs), never written into the image
    cp /etc/ssl/certs/java/cacerts /build/trust.jks
    for c in /build/ca/*.crt; do
      [ -f "$c" ] && keytool -importcert -noprompt -keystore /build/trust.jks -storepass changeit -alias "$(basename "$c")" -file "$c" >/dev/null
    done
    export MAVEN_OPTS="-Djavax.net.ssl.trustStore=/build/trust.jks -Djavax.net.ssl.trustStorePassword=changeit"
    mvn -B -q dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=/opt/camellia/lib
    javac -proc:none -cp "/opt/camellia/lib/*" -d /build/classes src/io/benchrun/proxy/Main.java
    cd classes && jar cf /opt/camellia/lib/benchrun-proxy.jar io
    apt-mark manual openjdk-17-jre-headless >/dev/null
    apt-get purge -y -q maven openjdk-17-jdk-headless >/dev/null
    apt-get autoremove --purge -y -q >/dev/null
    java -version' || rc=$?
  umount "$r/proc" "$r/root/.m2"
  [ $rc = 0 ] || die "camellia build failed"
  rm -rf "$r/build"
  debian_nonroot "$r"
  debian_cleanup "$r"
  mk proxy benchrun.local/camellia-redis-proxy:dev "$r" --workdir /tmp --port 6380/tcp --user 65532:65532
  echo "$k" > "$IMG/proxy.tar.key"; rm -rf "$r"
}
build_hetu() {
  local tb k r
  "$ROOT/hack/hetu-runtime.sh" --tarball >&2
  tb=$(ls -t "$CACHE"/hetu-runtime/hetu-rootfs-*.tar.gz | head -n1)
  k=$(key_of "$tb $(cat "$ROOT"/examples/hetu-bench/{app.py,config.yml} | sha256sum)")
  fresh hetu "$k" && { log "hetu: up to date"; return 0; }
  r="$IMG/.rootfs-hetu"; rm -rf "$r"; mkdir -p "$r"
  tar -C "$r" -xzf "$tb"
  chmod 1777 "$r/tmp"
  mkdir -p "$r/srv/hetu-bench/logs"
  cp "$ROOT"/examples/hetu-bench/{app.py,config.yml} "$r/srv/hetu-bench/"
  debian_nonroot "$r"
  chown 65532:65532 "$r/srv/hetu-bench/logs"
  mk hetu benchrun.local/hetu-bench:dev "$r" --workdir /srv/hetu-bench --user 65532:65532 \
    --env PATH=/opt/hetu/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env PYTHONUNBUFFERED=1 --env HETU_LISTEN=0.0.0.0:2466 --port 2466/tcp \
    --cmd '["hetu","start","--config=/srv/hetu-bench/config.yml"]'
  echo "$k" > "$IMG/hetu.tar.key"; rm -rf "$r"
}
build_prometheus() {
  # the Debian package's binary (what the loopback tests run too) and the shared objects it
  # links (ldd), nothing else: no shell, no package manager
  command -v prometheus >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends prometheus >/dev/null
  local bin k r l; bin=$(readlink -f "$(command -v prometheus)")
  k=$(key_of "$(sha256sum "$bin" | cut -c1-64) $(ldd "$bin" | grep -o '/[^ ]*' | xargs -r readlink -f | xargs -r sha256sum)")
  fresh prometheus "$k" && { log "prometheus: up to date"; return 0; }
  r=$(stage prometheus)
  mkdir -p "$r/bin" "$r/prometheus"; chown 65532:65532 "$r/prometheus"
  cp "$bin" "$r/bin/prometheus"
  for l in $(ldd "$bin" | grep -o '/[^ ]*'); do mkdir -p "$r$(dirname "$l")"; cp -L "$l" "$r$l"; done
  flatten_mtimes "$r"
  mk prometheus benchrun.local/prometheus:2.42 "$r" --entrypoint '["/bin/prometheus"]' --workdir /prometheus \
    --user 65532:65532 --port 9090/tcp
  echo "$k" > "$IMG/prometheus.tar.key"; rm -rf "$r"
}

for w in "${WANT[@]}"; do
  declare -F "build_$w" >/dev/null || die "unknown image $w"
  t0=$(date +%s)
  "build_$w"
  dt=$(($(date +%s) - t0))
  read -r name _ < "$IMG/$w.tar.id"
  size=$(du -m "$IMG/$w.tar" | cut -f1)
  echo "$(date -u +%FT%TZ) $w $name ${dt}s ${size}MiB" >> "$IMG/build-times.log"
  log "$w: $name ${size} MiB in ${dt}s"
  BUILT+=("$IMG/$w.tar")
done
if [ $IMPORT = yes ] && [ -S /run/benchrun-containerd/containerd.sock ]; then
  "$ROOT/hack/local-cluster/cluster.sh" load "${BUILT[@]}"
fi
