#!/usr/bin/env bash
# Makes sure the host tools a make target needs are installed: with apt-get when running as
# root on Debian/Ubuntu, otherwise it names what to install and fails, before anything else
# runs (so `make test-e2e` never stops half-way at "debootstrap: command not found").
#
# Usage: hack/prereqs.sh e2e     the local cluster + image builds (root; Debian packages)
#        hack/prereqs.sh hetu    hack/hetu-runtime.sh (HeTu tests)
set -euo pipefail
what=${1:?usage: hack/prereqs.sh e2e|hetu}
case $what in
  # command:package
  e2e) need=(debootstrap:debootstrap unshare:util-linux chroot:coreutils python3:python3 flock:util-linux
         iptables:iptables conntrack:conntrack socat:socat containerd:containerd runc:runc
         busybox:busybox-static git:git make:make ip:iproute2 nsenter:util-linux) ;;
  hetu) need=(debootstrap:debootstrap unshare:util-linux redis-server:redis-server bc:bc) ;;
  *) echo "prereqs: unknown set $what" >&2; exit 2 ;;
esac
missing=()
for n in "${need[@]}"; do
  cmd=${n%%:*} pkg=${n#*:}
  # busybox comes from busybox-static (/bin/busybox)
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/sbin/$cmd" ] || missing+=("$pkg")
done
if [ "$what" = e2e ] && [ "$(id -u)" != 0 ]; then
  echo "make test-e2e with the local cluster needs root (containerd, iptables, debootstrap, chroot);" >&2
  echo "run it as root, or point KUBECONFIG at a cluster that has the benchrun.local images." >&2
  [ -n "${KUBECONFIG:-}" ] || exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "prereqs ($what): installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "prereqs ($what): missing ${missing[*]}. Install them, then run make again:" >&2
echo "  Debian/Ubuntu: sudo apt-get install ${missing[*]}" >&2
echo "  (the local cluster and the image builds are Debian-only: debootstrap, chroot, containerd)" >&2
exit 1
