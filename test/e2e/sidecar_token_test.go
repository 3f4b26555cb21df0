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
// sidecar's processes by their command line (readable by any UID) and tries to read the
// sidecar's ServiceAccount token through /proc/<pid>/root, then its environment and its
// working directory. It prints one line per attempt: "SIDECAR <pid>", then "READ <what>" when
// a read succeeded or "DENIED <what>: <error>" when it failed, and the first bytes of anything
// read (a token starts with eyJ).
const sidecarTokenProbe = `found=0
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q 'benchrun-runner redis-role'; then
    found=1
    echo "SIDECAR $pid"
    for f in root/var/run/secrets/kubernetes.io/serviceaccount/token root/var/run/secrets/kubernetes.io/serviceaccount/..data/token environ cwd/var/run/secrets/kubernetes.io/serviceaccount/token; do
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
		out := mustKubectl(t, "", "-n", ns, "exec", pod, "-c", "redis", "--", "sh", "-c", sidecarTokenProbe)
		t.Logf("%s, from its redis container (uid %s):\n%s", pod,
			strings.TrimSpace(mustKubectl(t, "", "-n", ns, "exec", pod, "-c", "redis", "--", "id")), out)
		if strings.Contains(out, "NO-SIDECAR") || !strings.Contains(out, "SIDECAR ") {
			t.Errorf("%s: the redis container sees no redis-role sidecar process: the test proves nothing", pod)
		}
		if strings.Contains(out, "READ ") || strings.Contains(out, "eyJ") {
			t.Errorf("%s: the redis container read something of the sidecar's:\n%s", pod, out)
		}
		if denied := strings.Count(out, "DENIED "); denied < 5 {
			t.Errorf("%s: %d refused reads, want 5", pod, denied)
		}
		logs := mustKubectl(t, "", "-n", ns, "logs", pod, "-c", "redis-role")
		if !strings.Contains(logs, "labelled "+pod) || strings.Contains(logs, "labelling pod") {
			t.Errorf("%s: the sidecar did not label its pod with its own token:\n%s", pod, logs)
		}
	}
	run := waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseSucceeded)
	for _, f := range run.Status.Faults {
		t.Logf("fault: %+v", f)
	}
	metric(t.Name(), "tokenReadsRefused=all calls=%d", run.Status.Results[0].Calls)
}
