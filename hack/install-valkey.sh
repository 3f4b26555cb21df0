#!/usr/bin/env bash
# Installs valkey-server (Valkey 8, Debian bookworm-backports) on this Debian bookworm host, the
# way CI does (.ci/run, hack/prereqs.sh): the local driver's engine: valkey runs valkey-server
# from PATH, and the cmd/benchrun suite tests run one. Idempotent; needs root.
#
# It adds `deb MIRROR bookworm-backports main` (MIRROR: the host's Debian mirror, as
# hack/images/build.sh finds it) unless a backports source is already configured, updates only
# that source's lists (all of them if the dependencies are not known yet), and installs
# valkey-server alone (no recommends): the host's redis-server / redis-tools stay (it refuses a
# plan that removes a package), and no service is started (policy-rc.d). Prints the version.
# Env: DEBIAN_MIRROR (default: the host's apt mirror).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=hack/debian-lib.sh
source "$ROOT/hack/debian-lib.sh" # host_mirror
log() { echo "[install-valkey] $*" >&2; }

if command -v valkey-server >/dev/null 2>&1; then
  valkey-server --version
  exit 0
fi
[ "$(id -u)" = 0 ] || { log "needs root (apt-get); run: sudo $0"; exit 1; }
command -v apt-get >/dev/null 2>&1 || { log "needs apt-get (Debian bookworm); or install Valkey 8 so that valkey-server is on PATH"; exit 1; }
grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release ||
  { log "not Debian bookworm: install Valkey 8 from your distribution so that valkey-server is on PATH"; exit 1; }

list=/etc/apt/sources.list.d/benchrun-bookworm-backports.list
if ! grep -hsqE '^(deb .*|Suites:.*)bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
  /etc/apt/sources.list.d/*.sources; then
  mirror="${DEBIAN_MIRROR:-$(host_mirror)}"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  opt=""; [ -f "$keyring" ] && opt="[signed-by=$keyring] "
  echo "deb ${opt}$mirror bookworm-backports main" > "$list"
  log "added $list (deb ${opt}$mirror bookworm-backports main)"
fi

# never start a service (the Debian package would start valkey on :6379): policy-rc.d says no
# to invoke-rc.d and deb-systemd-invoke; only ours is removed afterwards
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=300)
update_backports() {
  if [ -f "$list" ]; then
    log "apt-get update (bookworm-backports only)"
    apt-get update -qq "${apt_opts[@]}" -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
      -o APT::Get::List-Cleanup=0
  else
    log "apt-get update"; apt-get update -qq "${apt_opts[@]}"
  fi
}
# the plan installs valkey-server and its libraries, and removes nothing (redis-server stays)
plan_ok() {
  local plan
  plan=$(apt-get install -s -t bookworm-backports --no-install-recommends valkey-server 2>&1) || { echo "$plan" | tail -5 >&2; return 1; }
  if echo "$plan" | grep -q '^Remv '; then
    log "refusing: installing valkey-server would remove:"; echo "$plan" | grep '^Remv ' >&2; exit 1
  fi
}
install_valkey() {
  plan_ok && apt-get install -y -qq "${apt_opts[@]}" -t bookworm-backports --no-install-recommends valkey-server >/dev/null
}
update_backports
if ! install_valkey; then
  # the dependencies are not known yet, or their known versions are gone from the mirror
  log "apt-get update (all sources), then again"
  apt-get update -qq "${apt_opts[@]}"
  install_valkey || { log "valkey-server cannot be installed from bookworm-backports"; exit 1; }
fi
valkey-server --version
