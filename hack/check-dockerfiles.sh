#!/usr/bin/env bash
# Checks the release images' Dockerfiles without Docker or a registry (CI runs it from .ci/run):
#   - every Go build stage (`RUN ... go build ... -o /out/NAME PKG`) is run as a plain go build
#     for the host, with the same flags, so a moved package or a broken build fails here;
#   - every COPY source (outside --from=stage) exists in the build context;
#   - the final stage runs as USER 65532 (nonroot, what the chart's restricted pods run as);
#   - the Go images' final stage is distroless static (no shell, no package manager).
# Usage: hack/check-dockerfiles.sh [--no-build]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD=yes
[ "${1:-}" = --no-build ] && BUILD=no
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail=0
err() { echo "check-dockerfiles: $*" >&2; fail=1; }

# Dockerfile → build context
declare -A CONTEXT=(
  [images/manager/Dockerfile]=.
  [images/runner/Dockerfile]=.
  [images/kubectl/Dockerfile]=.
  [images/camellia-redis-proxy/Dockerfile]=.
  [examples/hetu-bench/Dockerfile]=examples/hetu-bench
)
for f in images/*/Dockerfile; do [ -n "${CONTEXT[$f]:-}" ] || err "$f: no build context known (add it to CONTEXT in $0)"; done

for f in "${!CONTEXT[@]}"; do
  ctx=${CONTEXT[$f]}
  [ -f "$f" ] || { err "$f missing"; continue; }
  # logical lines (continuations joined)
  lines=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$f" | grep -v '^[[:space:]]*#')
  last_from=$(grep -n '^FROM ' <<<"$lines" | tail -n1 | cut -d: -f1)
  final=$(tail -n +"$last_from" <<<"$lines")
  grep -qE '^USER 65532(:65532)?$' <<<"$final" || err "$f: the final stage must run as USER 65532:65532"
  if grep -q 'go build' <<<"$lines"; then
    grep -q '^FROM gcr.io/distroless/static' <<<"$final" || err "$f: a Go image's final stage must be distroless static (no shell)"
  fi
  # COPY sources from the build context
  while read -r _ args; do
    [[ $args == *--from=* ]] && continue
    read -r -a words <<<"$args"
    srcs=()
    for w in "${words[@]}"; do [[ $w == --* ]] || srcs+=("$w"); done
    unset 'srcs[${#srcs[@]}-1]'
    for s in "${srcs[@]}"; do
      compgen -G "$ctx/$s" >/dev/null || err "$f: COPY source $s not found in context $ctx"
    done
  done < <(grep -E '^COPY ' <<<"$lines")
  # the Go build stages, as plain go build for the host
  [ $BUILD = yes ] || continue
  while read -r cmd; do
    [ -n "$cmd" ] || continue
    cmd=${cmd#RUN }
    cmd=$(sed -E 's/--mount=[^ ]+ //g; s/GOOS=\$TARGETOS //; s/GOARCH=\$TARGETARCH //; s#/out/#'"$OUT"'/#g' <<<"$cmd")
    # build args used in the command, with their Dockerfile defaults
    envs=$(grep -E '^ARG [A-Z_0-9]+=' "$f" | sed -E 's/^ARG //' | tr '\n' ' ')
    echo "check-dockerfiles: $f: $cmd" >&2
    t0=$(date +%s)
    (cd "$ctx" && env $envs GOFLAGS=-buildvcs=false bash -ec "$cmd") || err "$f: go build stage failed: $cmd"
    echo "check-dockerfiles: built in $(( $(date +%s) - t0 ))s" >&2
  done < <(grep -E '^RUN .*go build' <<<"$lines" | sed -E 's/^RUN ([^ ]+ )*(cd |CGO_ENABLED)/RUN \2/')
done
[ $fail = 0 ] || exit 1
echo "check-dockerfiles: ok"
