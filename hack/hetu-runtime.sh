#!/usr/bin/env bash
# Install a cached HeTu (PyPI "hetudb") runtime: a Debian sid rootfs with Python 3.14 and a venv
# at /opt/hetu holding the pinned wheels of examples/hetu-bench/requirements.txt.
#
#   hack/hetu-runtime.sh            # install or check (a second run is a fast no-op)
#   hack/hetu-runtime.sh --tarball  # also write a rootfs tarball (for container images)
#
# Cache: ${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/hetu-runtime/ (outside the repo).
# Needs root (apt-get, debootstrap, chroot). Python 3.14 is not packaged for bookworm,
# hence the sid rootfs. hack/hetu-server.sh runs the server from this rootfs.
set -euo pipefail

START=$(date +%s.%N)
ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REQS="$ROOT_DIR/examples/hetu-bench/requirements.txt"
CACHE="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/hetu-runtime"
ROOTFS="$CACHE/rootfs"
SUITE=sid
INCLUDE=python3.14,python3.14-venv,ca-certificates
PYTAGS=(--python-version 3.14 --implementation cp --abi cp314 --abi abi3 --abi none
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
        --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
TARBALL=no
[[ "${1:-}" == "--tarball" ]] && TARBALL=yes

log() { printf '[hetu-runtime] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
elapsed() { printf '%.1f' "$(echo "$(date +%s.%N) - $1" | bc)"; }

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap and chroot need it)"
[[ -f "$REQS" ]] || die "missing $REQS"
[[ $(uname -m) == x86_64 ]] || die "only x86_64 is supported (wheel tags are pinned to it)"

# The Debian mirror apt uses on this host (deb822 .sources first, then one-line sources.list).
debian_mirror() {
  local m
  m=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk '{for (i = 2; i <= NF; i++) print $i}' | grep -E '/debian/?$' | head -n1 || true)
  if [[ -z "$m" ]]; then
    m=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
          | sed -E 's/\[[^]]*\]//' | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  fi
  echo "${m:-http://deb.debian.org/debian}"
}

# Host tools: debootstrap to build the rootfs, redis-server for hack/hetu-server.sh, bc for timings.
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v redis-server >/dev/null || need+=(redis-server)
command -v bc >/dev/null || need+=(bc)
if ((${#need[@]})); then
  log "apt-get install ${need[*]}"
  apt-get install -y -q "${need[@]}" >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q "${need[@]}" >/dev/null; } \
    || die "apt-get install ${need[*]} failed"
fi

# One run at a time (other sessions may call this concurrently, e.g. from make targets).
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

# Stamps: the base rootfs is keyed on suite+packages, the venv on the requirements file.
BASE_KEY="$SUITE:$INCLUDE"
VENV_KEY="$(sha256sum "$REQS" | cut -c1-16)"
BASE_STAMP="$ROOTFS/.benchrun-base"
VENV_STAMP="$ROOTFS/.benchrun-venv"

if [[ -f "$BASE_STAMP" && "$(cat "$BASE_STAMP")" == "$BASE_KEY" \
   && -f "$VENV_STAMP" && "$(cat "$VENV_STAMP")" == "$VENV_KEY" && $TARBALL == no ]]; then
  log "up to date: $ROOTFS (requirements $VENV_KEY), $(elapsed "$START")s"
  exit 0
fi
mkdir -p "$CACHE"

# 1. Base rootfs (debootstrap into a temporary dir, renamed when complete).
if [[ ! -f "$BASE_STAMP" || "$(cat "$BASE_STAMP")" != "$BASE_KEY" ]]; then
  MIRROR=$(debian_mirror)
  log "debootstrap $SUITE ($INCLUDE) from $MIRROR ..."
  t=$(date +%s.%N)
  rm -rf "$ROOTFS.tmp" "$ROOTFS"
  if ! nice debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS.tmp" "$MIRROR" \
       >"$CACHE/debootstrap.log" 2>&1; then
    tail -n 20 "$CACHE/debootstrap.log" >&2
    die "debootstrap failed (full log: $CACHE/debootstrap.log)"
  fi
  rm -rf "$ROOTFS.tmp/var/cache/apt/archives/"*.deb
  mv "$ROOTFS.tmp" "$ROOTFS"
  echo "$BASE_KEY" >"$BASE_STAMP"
  log "debootstrap done in $(elapsed "$t")s"
fi

# 2. Wheels, downloaded on the host (pip in the chroot cannot verify the index's TLS chain here).
WHEELS="$CACHE/wheels-$VENV_KEY"
if [[ ! -f "$WHEELS/.complete" ]]; then
  log "pip download (pinned, cp314 manylinux wheels) ..."
  t=$(date +%s.%N)
  rm -rf "$WHEELS"
  mkdir -p "$WHEELS"
  PIP_FIND_LINKS= nice python3 -m pip download -q --no-deps --only-binary=:all: "${PYTAGS[@]}" \
    -d "$WHEELS" -r "$REQS" || die "pip download failed"
  touch "$WHEELS/.complete"
  log "pip download done in $(elapsed "$t")s"
fi

# 3. Venv inside the rootfs, installed offline from the wheels.
if [[ ! -f "$VENV_STAMP" || "$(cat "$VENV_STAMP")" != "$VENV_KEY" ]]; then
  log "pip install into $ROOTFS/opt/hetu ..."
  t=$(date +%s.%N)
  rm -rf "$ROOTFS/opt/hetu" "$ROOTFS/tmp/wheels"
  mkdir -p "$ROOTFS/tmp/wheels"
  cp "$WHEELS"/*.whl "$ROOTFS/tmp/wheels/"
  cp "$REQS" "$ROOTFS/tmp/wheels/requirements.txt"
  in_root() { chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
  in_root python3.14 -m venv /opt/hetu || die "venv creation failed"
  in_root /opt/hetu/bin/pip install -q --disable-pip-version-check --no-index \
    --find-links /tmp/wheels -r /tmp/wheels/requirements.txt || die "pip install failed"
  in_root /opt/hetu/bin/python -c 'import hetu, msgpack, websockets, cryptography' \
    || die "import check failed"
  rm -rf "$ROOTFS/tmp/wheels"
  echo "$VENV_KEY" >"$VENV_STAMP"
  log "pip install done in $(elapsed "$t")s"
fi

# 4. Optional tarball (deterministic order/owners, so layers cache well).
if [[ $TARBALL == yes ]]; then
  TB="$CACHE/hetu-rootfs-$VENV_KEY.tar.gz"
  if [[ ! -f "$TB" ]]; then
    log "writing $TB ..."
    t=$(date +%s.%N)
    # /srv holds the per-server app copies of hack/hetu-server.sh: never ship those.
    nice tar -C "$ROOTFS" --sort=name --numeric-owner --mtime=@0 --exclude='./proc/*' \
      --exclude='./dev/*' --exclude='./sys/*' --exclude='./srv/*' --exclude='./tmp/*' \
      --exclude='./var/cache/apt/*' --exclude='./var/lib/apt/lists/*' \
      -cf - . | nice gzip -n -1 >"$TB.tmp"
    mv "$TB.tmp" "$TB"
    log "tarball done in $(elapsed "$t")s"
  fi
  log "tarball: $TB"
fi

log "ready: $ROOTFS (python /opt/hetu/bin/python, hetu /opt/hetu/bin/hetu), total $(elapsed "$START")s"
