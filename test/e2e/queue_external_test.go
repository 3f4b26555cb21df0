//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// externalQueueRun is a one-runner 6 s GET run on the external Redis at address.
func externalQueueRun(name, address, extra string) string {
	return runManifest(name, fmt.Sprintf(`    external:
      kind: redis
      addresses: [%q]%s
      passwordSecretRef:
        name: ext-redis
        key: password`, address, extra), `
    scenarios:
    - name: get
      type: redis.get`, 1, "OnSuccess")
}

// (k) runs whose external targets name one endpoint (spelled differently) run one after
// another: the second waits in Queued, its condition naming the endpoint and the holder,
// and starts its load after the first completed; a run that opts out (exclusive: false)
// overlaps the first.
func TestExternalTargetQueue(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "ext-queue")
	extRedis(t, ns)
	addr := fmt.Sprintf("ext-redis.%s.svc.cluster.local:6379", ns)
	apply(t, ns, externalQueueRun("q-first", addr, "")+"---\n"+
		externalQueueRun("q-second", strings.ToUpper(addr[:9])+addr[9:], "")+"---\n"+
		externalQueueRun("q-optout", addr, "\n      exclusive: false"))
	second := waitPhase(t, ns, "q-second", runTimeout, v1alpha1.PhaseQueued)
	// The three are applied at once, so q-second may first queue behind a q-first that has
	// not taken the endpoint yet ("position 2 of 2 …; run q-first is next"); once q-first
	// holds it, q-second is first in line and its condition names the holder.
	want := "position 1 of 1 waiting for external target " + addr + "; run q-first holds it"
	var c *metav1.Condition
	for i := 0; i < 20; i++ {
		c = meta.FindStatusCondition(second.Status.Conditions, v1alpha1.ConditionQueued)
		if c != nil && c.Status == "True" && c.Message == want {
			break
		}
		time.Sleep(time.Second)
		second = getRun(t, ns, "q-second")
	}
	if c == nil || c.Reason != "WaitingForTarget" || c.Message != want {
		t.Errorf("q-second Queued condition %+v, want WaitingForTarget %q", c, want)
	}
	// kubectl get's Queue column (status.queuePosition) while it waits, as a person sees it.
	got := mustKubectl(t, "", "-n", ns, "get", "benchmarkrun", "q-second")
	t.Logf("kubectl get benchmarkrun q-second:\n%s", got)
	if header := strings.Fields(strings.SplitN(got, "\n", 2)[0]); len(header) < 3 || header[2] != "QUEUE" {
		t.Errorf("no QUEUE column after PHASE: %q", got)
	} else if fields := strings.Fields(strings.SplitN(got+"\n", "\n", 3)[1]); len(fields) > 2 && fields[1] == "Queued" && fields[2] != "1/1" {
		t.Errorf("q-second Queued, first in line, shows queue %q, want 1/1", fields[2])
	}
	runs := map[string]*v1alpha1.BenchmarkRun{}
	for _, n := range []string{"q-first", "q-second", "q-optout"} {
		runs[n] = waitPhase(t, ns, n, runTimeout, v1alpha1.PhaseSucceeded)
		recordTimings(t, runs[n])
	}
	first, next, optOut := runs["q-first"].Status, runs["q-second"].Status, runs["q-optout"].Status
	for _, st := range []v1alpha1.BenchmarkRunStatus{first, next, optOut} {
		if st.LoadStartTime == nil || st.CompletionTime == nil || st.QueuePosition != "" {
			t.Fatalf("a Succeeded run without loadStartTime or completionTime, or with a queue position: %+v", st)
		}
	}
	if next.LoadStartTime.Before(first.CompletionTime) {
		t.Errorf("q-second's load started at %v, before q-first completed at %v", next.LoadStartTime, first.CompletionTime)
	}
	if !optOut.LoadStartTime.Before(first.CompletionTime) || !first.LoadStartTime.Before(optOut.CompletionTime) {
		t.Errorf("q-optout (load %v-%v) did not overlap q-first (load %v-%v)", optOut.LoadStartTime, optOut.CompletionTime, first.LoadStartTime, first.CompletionTime)
	}
	metric(t.Name(), "q-first load %s..%s, q-second load from %s (%s after q-first completed), q-optout load %s..%s",
		first.LoadStartTime.Format(time.TimeOnly), first.CompletionTime.Format(time.TimeOnly), next.LoadStartTime.Format(time.TimeOnly),
		next.LoadStartTime.Sub(first.CompletionTime.Time), optOut.LoadStartTime.Format(time.TimeOnly), optOut.CompletionTime.Format(time.TimeOnly))
}
