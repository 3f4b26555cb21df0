//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// sidecarTokenProbe runs in a Redis server container (the user's image, its UID, no
// capabilities) of a pod that shares its process namespace: it finds the redis-role
// sidecar's processes by their command line (readable by any UID: program $1 with argument
// $2, benchrun-runner redis-role) and tries to read the
// sidecar's ServiceAccount token through /proc/<pid>/root, then its environment and its
// working directory. The token is mounted at /var/run/secrets/..., where /var/run is an
// absolute symlink to /run in Debian images: through /proc/<pid>/root it resolves in the
// reader's own root, so the path that reaches the holder's token is root/run/secrets/.... It prints one line per attempt: "SIDECAR <pid>", then "READ <what>" when
// a read succeeded or "DENIED <what>: <error>" when it failed, and the first bytes of anything
// read (a token starts with eyJ).
const sidecarTokenProbe = `found=0
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  first=$(tr '\0' '\n' < "$p/cmdline" 2>/dev/null | head -n 1)
  second=$(tr '\0' '\n' < "$p/cmdline" 2>/dev/null | sed -n 2p)
  if [ "${first##*/}" = "$1" ] && [ "$second" = "$2" ]; then
    found=1
    echo "SIDECAR $pid"
    for f in root/run/secrets/kubernetes.io/serviceaccount/token root/var/run/secrets/kubernetes.io/serviceaccount/token environ cwd/run/secrets/kubernetes.io/serviceaccount/token; do
      if out=$(head -c 16 "$p/$f" 2>&1); then echo "READ $f: $out"; else echo "DENIED $f: $out"; fi
    done
    if out=$(ls "$p/root/" 2>&1); then echo "READ root/: $(echo $out | head -c 60)"; else echo "DENIED root/: $out"; fi
  fi
done
[ "$found" = 1 ] || echo "NO-SIDECAR"
`

// TestSidecarToken: a run with a pause fault (so the builtin HA Redis pods share their process
// namespace) whose Redis container, as a hostile image would, tries to read the redis-role
// sidecar's token through /proc/<pid>/root (and /proc/<pid>/environ, /proc/<pid>/cwd): every
// attempt is refused, because the sidecar runs as its own UID and the kernel's ptrace access
// check guards those links. The sidecar itself reads it: it labels its pod with its role (the
// redis-role ValidatingAdmissionPolicy admits that), and the run succeeds.
func TestSidecarToken(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "sidecar-token")
	const name = "token"
	apply(t, ns, fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  target:
    redis:
      mode: ha
      replicas: 1
      sentinels: 1
      provider: builtin
  load:
    workers: 1
    tasksPerWorker: 2
    duration: 40s
    scenarios:
    - name: set
      type: redis.set
    runners:
      parallelism: 1
  faults:
  - {scenario: set, offset: 35s, action: pause, role: replica, duration: 1s}
  cleanup:
    policy: Never
`, name))
	waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseRunning)
	for _, pod := range []string{name + "-g1-redis-master-0", name + "-g1-redis-replica-0"} {
		if share := mustKubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.spec.shareProcessNamespace}"); share != "true" {
			t.Fatalf("pod %s does not share its process namespace (%q): the test would prove nothing", pod, share)
		}
		out := mustKubectl(t, "", "-n", ns, "exec", pod, "-c", "redis", "--", "sh", "-c", sidecarTokenProbe, "sh", "benchrun-runner", "redis-role")
		t.Logf("%s, from its redis container (uid %s):\n%s", pod,
			strings.TrimSpace(mustKubectl(t, "", "-n", ns, "exec", pod, "-c", "redis", "--", "id")), out)
		if strings.Contains(out, "NO-SIDECAR") || !strings.Contains(out, "SIDECAR ") {
			t.Errorf("%s: the redis container sees no redis-role sidecar process: the test proves nothing", pod)
		}
		if strings.Contains(out, "READ ") || strings.Contains(out, "eyJ") {
			t.Errorf("%s: the redis container read something of the sidecar's:\n%s", pod, out)
		}
		if denied := strings.Count(out, "Permission denied"); denied < 5 {
			t.Errorf("%s: %d reads refused with Permission denied, want 5", pod, denied)
		}
		logs := mustKubectl(t, "", "-n", ns, "logs", pod, "-c", "redis-role")
		if !strings.Contains(logs, "labelled "+pod) || strings.Contains(logs, "labelling pod") {
			t.Errorf("%s: the sidecar did not label its pod with its own token:\n%s", pod, logs)
		}
	}
	sameUIDControl(t, ns, mustKubectl(t, "", "-n", ns, "get", "pod", name+"-g1-redis-master-0", "-o", "jsonpath={.spec.containers[0].image}"))
	run := waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseSucceeded)
	for _, f := range run.Status.Faults {
		t.Logf("fault: %+v", f)
	}
	metric(t.Name(), "tokenReadsRefused=all calls=%d", run.Status.Results[0].Calls)
}

// sameUIDControl shows the probe is able to steal a token where the fix is missing: a pod
// laid out as the Redis pods were before it (shared process namespace, the token holder and
// the reader running as the same UID, fsGroup set, the token 0444 in the holder only) lets the
// reader print the holder's token through /proc/<pid>/root.
func sameUIDControl(t *testing.T, ns, image string) {
	t.Helper()
	const restricted = `{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}`
	mustKubectl(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"same-uid"},"spec":{
"shareProcessNamespace":true,"automountServiceAccountToken":false,"enableServiceLinks":false,
"securityContext":{"runAsNonRoot":true,"runAsUser":65532,"runAsGroup":65532,"fsGroup":65532,"seccompProfile":{"type":"RuntimeDefault"}},
"containers":[
 {"name":"reader","image":%[1]q,"command":["sleep","600"],"securityContext":%[2]s},
 {"name":"holder","image":%[1]q,"command":["sleep","601"],"securityContext":%[2]s,
  "volumeMounts":[{"name":"token","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}]}],
"volumes":[{"name":"token","projected":{"defaultMode":292,"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":3607}}]}}]}}`,
		image, restricted), "-n", ns, "apply", "-f", "-")
	mustKubectl(t, "", "-n", ns, "wait", "--for=condition=Ready", "pod/same-uid", "--timeout=120s")
	out := mustKubectl(t, "", "-n", ns, "exec", "same-uid", "-c", "reader", "--", "sh", "-c", sidecarTokenProbe, "sh", "sleep", "601")
	t.Logf("control (same UID, as before the fix):\n%s", out)
	if !strings.Contains(out, "READ root/run/secrets/kubernetes.io/serviceaccount/token: eyJ") {
		t.Errorf("control: the probe could not read a same-UID neighbour's token either, so it proves nothing:\n%s", out)
	}
	_, _ = kubectl("", "-n", ns, "delete", "pod", "same-uid", "--wait=false")
}
