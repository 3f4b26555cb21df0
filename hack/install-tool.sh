#!/usr/bin/env bash
# Builds one pinned Go tool from its module, offline-friendly, and links it into bin/.
#
# Usage: hack/install-tool.sh NAME MODULE@VERSION [PACKAGE-IN-MODULE]
# The Go module proxy refuses `@latest` (and sometimes `go install M@V`) for some modules,
# so we download the exact module version and build inside it with its own go.mod/go.sum.
# Binaries are cached per version in $BENCHRUN_CACHE/tools (default ~/.cache/benchrun), so a
# fresh clone (CI) reuses them; bin/NAME is a symlink to the cached binary.
set -euo pipefail
name="$1"; modver="$2"; pkg="${3:-.}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${BENCHRUN_CACHE:-$HOME/.cache/benchrun}/tools/$name-${modver##*@}"
mkdir -p "$root/bin"
if [ ! -x "$cache/$name" ]; then
  echo "building $name from $modver ($pkg)" >&2
  t0=$(date +%s)
  dir=$(cd "${TMPDIR:-/tmp}" && GO111MODULE=on GOFLAGS=-mod=mod go mod download -json "$modver" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -n "$dir" ] || { echo "could not download $modver" >&2; exit 1; }
  mkdir -p "$cache"
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath -o "$cache/$name.tmp" "$pkg")
  mv "$cache/$name.tmp" "$cache/$name"
  echo "built $name in $(( $(date +%s) - t0 ))s" >&2
fi
ln -sfn "$cache/$name" "$root/bin/$name"
