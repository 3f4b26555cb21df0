#!/usr/bin/env bash
# Builds one pinned Go tool from its module into bin/, offline-friendly.
#
# Usage: hack/install-tool.sh NAME MODULE@VERSION [PACKAGE-IN-MODULE]
# The Go module proxy refuses `@latest` (and sometimes `go install M@V`) for some modules,
# so we download the exact module version and build inside it with its own go.mod/go.sum.
# A stamp file bin/.NAME.version makes a second run a no-op.
set -euo pipefail
name="$1"; modver="$2"; pkg="${3:-.}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/bin"
mkdir -p "$bin"
if [ -x "$bin/$name" ] && [ "$(cat "$bin/.$name.version" 2>/dev/null)" = "$modver $pkg" ]; then
  exit 0
fi
echo "building $name from $modver ($pkg)" >&2
t0=$(date +%s)
dir=$(cd "${TMPDIR:-/tmp}" && GO111MODULE=on go mod download -json "$modver" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
[ -n "$dir" ] || { echo "could not download $modver" >&2; exit 1; }
(cd "$dir" && CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath -o "$bin/$name" "$pkg")
echo "$modver $pkg" > "$bin/.$name.version"
echo "built $name in $(( $(date +%s) - t0 ))s" >&2
