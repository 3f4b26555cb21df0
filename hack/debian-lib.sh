# shellcheck shell=bash
# Shared by hack/images/build.sh and hack/install-valkey.sh (sourced, not run): the host's
# Debian mirror.

# host_mirror prints the host's Debian mirror (the first .../debian URI of its apt sources, deb822
# or one-line style), or deb.debian.org.
host_mirror() {
  local m
  m=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{for (i = 2; i <= NF; i++) print $i}' |
    grep -E '/debian/?$' | head -n1 || true)
  [ -n "$m" ] || m=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -E 's/\[[^]]*\]//' | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}
