package controllers

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// poolRun is a one-runner Redis run on load pool pool.
func (e *env) poolRun(name, pool string) *v1alpha1.BenchmarkRun {
	run := e.redisRun(name, 1)
	run.Spec.Load.Runners.Pool = pool
	return run
}

// holdsPool tells whether a phase holds a load pool (left Queued, not finished).
func holdsPool(p v1alpha1.Phase) bool {
	return p != "" && p != v1alpha1.PhasePending && p != v1alpha1.PhaseQueued && !finished(p)
}

// advance reconciles a run once and simulates what its phase waits for: a ready target,
// runners at the barrier, runners done.
func (e *env) advance(name string) {
	e.t.Helper()
	e.reconcile(name)
	run := e.get(name)
	switch run.Status.Phase {
	case v1alpha1.PhaseProvisioning:
		e.markTargetReady()
	case v1alpha1.PhaseStarting:
		e.readyRunners(run)
	case v1alpha1.PhaseRunning:
		e.finishRunner(run, 0, 10)
	}
}

// queuedCondition is the run's Queued condition.
func (e *env) queuedCondition(name string) *metav1.Condition {
	return meta.FindStatusCondition(e.get(name).Status.Conditions, v1alpha1.ConditionQueued)
}

// TestPoolRunsOneAfterAnother: three runs on one pool run strictly one after another, oldest
// first (created in the reverse order of their names), each waiting in Queued with its
// position and the holder; a run on another pool runs alongside; nothing of a queued run is
// provisioned.
func TestPoolRunsOneAfterAnother(t *testing.T) {
	e := newEnv(t)
	names := []string{"c-first", "b-second", "a-third"}
	for i, n := range names {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond) // creationTimestamp has second precision
		}
		e.create(e.poolRun(n, "load-a"))
	}
	e.create(e.poolRun("other", "load-b"))
	all := append([]string{"other"}, names...)

	var order []string
	active := map[string]bool{}
	otherWithFirst := false
	for round := 0; round < 200; round++ {
		done := 0
		for _, n := range all {
			e.advance(n)
		}
		holders := 0
		for _, n := range all {
			p := e.get(n).Status.Phase
			if finished(p) {
				if p != v1alpha1.PhaseSucceeded {
					t.Fatalf("%s ended %s: %+v", n, p, e.get(n).Status.Conditions)
				}
				done++
			}
			if n == "other" || !holdsPool(p) {
				continue
			}
			if q := e.get(n).Status.QueuePosition; q != "" {
				t.Fatalf("%s holds the pool (%s) with queuePosition %q", n, p, q)
			}
			holders++
			if !active[n] {
				active[n] = true
				order = append(order, n)
				otherWithFirst = otherWithFirst || (len(order) == 1 && holdsPool(e.get("other").Status.Phase))
			}
		}
		if holders > 1 {
			t.Fatalf("round %d: %d runs hold pool load-a at once (order so far %v)", round, holders, order)
		}
		if round == 1 {
			e.checkWaiting()
		}
		if done == len(all) {
			break
		}
	}
	if strings.Join(order, ",") != strings.Join(names, ",") {
		t.Fatalf("pool order %v, want %v (oldest first)", order, names)
	}
	if !otherWithFirst {
		t.Error("the run on pool load-b did not run alongside the first run of pool load-a")
	}
	if !e.hasEvent("PoolAcquired") || !e.hasEvent("Queued") || !e.hasEvent("QueuedWaitingForPool") {
		t.Errorf("no queue Events in %q", e.events)
	}
}

// checkWaiting checks, while c-first holds the pool, what the waiting runs show.
func (e *env) checkWaiting() {
	e.t.Helper()
	for i, n := range []string{"b-second", "a-third"} {
		run := e.get(n)
		c := e.queuedCondition(n)
		want := []string{"position 1 of 2 waiting for pool load-a; run c-first holds it", "position 2 of 2 waiting for pool load-a; run c-first holds it"}[i]
		if run.Status.Phase != v1alpha1.PhaseQueued || c == nil || c.Status != metav1.ConditionTrue || c.Reason != "WaitingForPool" || c.Message != want {
			e.t.Fatalf("%s: phase %s condition %+v, want %q", n, run.Status.Phase, c, want)
		}
		if q, want := run.Status.QueuePosition, []string{"1/2", "2/2"}[i]; q != want { // kubectl get's Queue column
			e.t.Fatalf("%s: queuePosition %q, want %q", n, q, want)
		}
		if e.exists(&appsv1.StatefulSet{}, targetName(run, "redis-master")) {
			e.t.Fatalf("%s: target provisioned while queued", n)
		}
	}
}

// TestPoolQueueTimeout: the wait does not count in the run's own timeouts; a run waiting
// longer than timeouts.queued fails with QueueTimeout, nothing provisioned.
func TestPoolQueueTimeout(t *testing.T) {
	e := newEnv(t)
	e.create(e.poolRun("holder", "load-a"))
	e.until("holder", v1alpha1.PhaseProvisioning)
	late := e.poolRun("late", "load-a")
	late.Spec.Timeouts.Queued = &metav1.Duration{Duration: 10 * time.Minute}
	e.create(late)
	patient := e.poolRun("patient", "load-a")
	patient.Spec.Timeouts.Queued = &metav1.Duration{Duration: 2 * time.Hour}
	e.create(patient)
	e.until("late", v1alpha1.PhaseQueued)
	e.until("patient", v1alpha1.PhaseQueued)

	e.clock.Step(11 * time.Minute)
	run := e.until("late", v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != "QueueTimeout" || !strings.Contains(c.Message, "10m0s for load pool load-a") || run.Status.QueuePosition != "" {
		t.Fatalf("condition %+v, queuePosition %q", c, run.Status.QueuePosition)
	}
	if e.exists(&appsv1.StatefulSet{}, targetName(run, "redis-master")) || run.Status.Target.Endpoints != nil {
		t.Fatal("a run that timed out in the queue provisioned its target")
	}

	// 91 minutes queued: past patient's run timeout (22m) but within its queue timeout.
	e.clock.Step(80 * time.Minute)
	e.reconcile("patient")
	if p := e.get("patient").Status.Phase; p != v1alpha1.PhaseQueued {
		t.Fatalf("patient: %s after 91m in the queue", p)
	}
	if err := k8sClient.Delete(e.ctx, e.get("holder")); err != nil { // a deleted holder releases the pool
		t.Fatal(err)
	}
	run = e.until("patient", v1alpha1.PhaseProvisioning)
	if run.Status.StartTime == nil || !run.Status.StartTime.Time.Equal(e.clock.Now().Truncate(time.Second)) {
		t.Fatalf("start time %v not reset when leaving the queue (now %v)", run.Status.StartTime, e.clock.Now())
	}
	e.targetReady("patient")
	if p := e.get("patient").Status.Phase; p != v1alpha1.PhaseStarting {
		t.Fatalf("patient after the wait: %s %+v", p, e.get("patient").Status.Conditions)
	}
}

// TestPoolScope: by default a pool is per namespace; with PoolNamespace set, runs of two
// namespaces share it.
func TestPoolScope(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	a.create(a.poolRun("x", "load-a"))
	b.create(b.poolRun("y", "load-a"))
	a.until("x", v1alpha1.PhaseProvisioning)
	b.until("y", v1alpha1.PhaseProvisioning) // another namespace: another pool

	lockNS := newEnv(t).ns
	a.r.PoolNamespace, b.r.PoolNamespace = lockNS, lockNS
	a.create(a.poolRun("x2", "load-c"))
	a.until("x2", v1alpha1.PhaseProvisioning)
	b.create(b.poolRun("y2", "load-c"))
	for range 3 {
		b.reconcile("y2")
	}
	c := b.queuedCondition("y2")
	if p := b.get("y2").Status.Phase; p != v1alpha1.PhaseQueued || c == nil || c.Message != "position 1 of 1 waiting for pool load-c; run "+a.ns+"/x2 holds it" {
		t.Fatalf("y2: %s %+v", p, c)
	}
	if !a.exists(&appsv1.StatefulSet{}, targetName(a.get("x2"), "redis-master")) {
		t.Fatal("x2 not provisioned")
	}
	if err := k8sClient.Delete(a.ctx, a.get("x2")); err != nil {
		t.Fatal(err)
	}
	b.until("y2", v1alpha1.PhaseProvisioning)
}

// staleList is a client whose BenchmarkRun list shows only one run, as a cache that has not
// seen the others yet: every run believes it is first in line.
type staleList struct {
	client.Client
	name string
}

// List implements client.Reader.
func (c staleList) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if runs, ok := list.(*v1alpha1.BenchmarkRunList); ok {
		var keep []v1alpha1.BenchmarkRun
		for _, r := range runs.Items {
			if r.Name == c.name {
				keep = append(keep, r)
			}
		}
		runs.Items = keep
	}
	return nil
}

// TestPoolConcurrentReconciles: six queued runs, each reconciled at the same instant by its
// own worker that believes it is first in line (a stale cache): exactly one leaves Queued,
// round after round. Without the lock ConfigMap all six would.
func TestPoolConcurrentReconciles(t *testing.T) {
	e := newEnv(t)
	names := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	workers := map[string]*BenchmarkRunReconciler{}
	for _, n := range names {
		e.create(e.poolRun(n, "load-a"))
		workers[n] = e.reconciler(staleList{Client: k8sClient, name: n})
		e.reconcile(n) // accepted: Pending
	}
	for round := range 5 {
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, len(names))
		for _, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := workers[n].Reconcile(e.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: e.ns, Name: n}})
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		var holders []string
		for _, n := range names {
			if holdsPool(e.get(n).Status.Phase) {
				holders = append(holders, n)
			}
		}
		if len(holders) != 1 {
			t.Fatalf("round %d: runs holding pool load-a: %v (want exactly one)", round, holders)
		}
	}
}

// TestPoolWithManager: a real manager with four workers and its cache drives four runs on
// one pool; whenever the holder is deleted the next one starts, never two at once.
func TestPoolWithManager(t *testing.T) {
	e := newEnv(t)
	names := []string{"m0", "m1", "m2", "m3"}
	for _, n := range names {
		e.create(e.poolRun(n, "load-a"))
	}
	stop := startManager(t, e, nil, func(r *BenchmarkRunReconciler, mgr ctrl.Manager) { // four workers
		r.APIReader, r.MaxConcurrent = mgr.GetAPIReader(), 4
	})
	defer stop()
	for range names {
		var holder string
		deadline := time.Now().Add(10 * time.Second)
		for settled := 0; settled < 25; time.Sleep(20 * time.Millisecond) { // 0.5 s with one holder
			var holders []string
			for _, n := range names {
				var run v1alpha1.BenchmarkRun
				if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: n}, &run); err == nil && holdsPool(run.Status.Phase) {
					holders = append(holders, n)
				}
			}
			if len(holders) > 1 {
				t.Fatalf("two runs hold the pool: %v", holders)
			}
			if len(holders) == 1 {
				holder = holders[0]
				settled++
			}
			if time.Now().After(deadline) {
				t.Fatalf("no run took the free pool within 10s")
			}
		}
		if err := k8sClient.Delete(e.ctx, e.get(holder)); err != nil {
			t.Fatal(err)
		}
		names = remove(names, holder)
	}
}

// remove returns names without n.
func remove(names []string, n string) []string {
	var out []string
	for _, m := range names {
		if m != n {
			out = append(out, m)
		}
	}
	return out
}

// TestQueueOrder: higher priority first, then older, then namespace/name.
func TestQueueOrder(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	mk := func(name string, prio int32, age time.Duration) v1alpha1.BenchmarkRun {
		r := v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))}}
		r.Spec.Priority = prio
		return r
	}
	old, young, urgent, twin := mk("old", 0, time.Hour), mk("young", 0, time.Minute), mk("urgent", 5, 0), mk("a-twin", 0, time.Minute)
	for _, c := range []struct {
		a, b *v1alpha1.BenchmarkRun
	}{{&urgent, &old}, {&old, &young}, {&twin, &young}} {
		if !queueBefore(c.a, c.b) || queueBefore(c.b, c.a) {
			t.Errorf("%s should come before %s", c.a.Name, c.b.Name)
		}
	}
	if m := queueMessage(&young, queueKey{keyPool, ""}, []v1alpha1.BenchmarkRun{urgent, old, young}, ""); m != "position 3 of 3 waiting for pool ; run urgent is next" {
		t.Errorf("message %q", m)
	}
}

// TestPoolPriority: a later run of higher priority starts before older waiting runs, and
// never preempts the holder.
func TestPoolPriority(t *testing.T) {
	e := newEnv(t)
	e.create(e.poolRun("holder", "load-a"))
	e.until("holder", v1alpha1.PhaseProvisioning)
	e.create(e.poolRun("old", "load-a"))
	e.until("old", v1alpha1.PhaseQueued)
	urgent := e.poolRun("urgent", "load-a")
	urgent.Spec.Priority = 5
	e.create(urgent)
	e.until("urgent", v1alpha1.PhaseQueued)
	e.reconcile("old")
	if c := e.queuedCondition("old"); c.Message != "position 2 of 2 waiting for pool load-a; run holder holds it" {
		t.Fatalf("old: %+v", c)
	}
	if p := e.get("holder").Status.Phase; p != v1alpha1.PhaseProvisioning {
		t.Fatalf("holder preempted: %s", p)
	}
	if err := k8sClient.Delete(e.ctx, e.get("holder")); err != nil {
		t.Fatal(err)
	}
	e.reconcile("old")
	e.until("urgent", v1alpha1.PhaseProvisioning)
	e.reconcile("old")
	if c := e.queuedCondition("old"); e.get("old").Status.Phase != v1alpha1.PhaseQueued || c.Message != "position 1 of 1 waiting for pool load-a; run urgent holds it" {
		t.Fatalf("old: %s %+v", e.get("old").Status.Phase, c)
	}
}

// TestBaselineWaitHoldsNoPool: a run waiting for its baseline does not hold its load pool
// meanwhile, so a baseline on the same pool, created after it, takes the pool and runs (it
// used to queue behind the run that waited for it: both waited for ever).
func TestBaselineWaitHoldsNoPool(t *testing.T) {
	e := newEnv(t)
	base := e.create(e.poolRun("base", "p"))
	cand := e.poolRun("cand", "p")
	cand.Spec.Baseline = &v1alpha1.BaselineSpec{Name: base.Name}
	e.create(cand)
	e.reconcile(cand.Name) // accepts the generation
	e.reconcile(cand.Name) // the baseline has not finished: waits
	if c := meta.FindStatusCondition(e.get(cand.Name).Status.Conditions, v1alpha1.ConditionBaselineResolved); c == nil || c.Reason != reasonWaiting {
		t.Fatalf("candidate not waiting for its baseline: %+v", c)
	}
	for range 12 {
		e.advance(base.Name)
		e.reconcile(cand.Name)
	}
	if p := e.get(base.Name).Status.Phase; p != v1alpha1.PhaseSucceeded {
		t.Fatalf("the baseline queued behind the run waiting for it: phase %s", p)
	}
	for range 12 {
		e.advance(cand.Name)
	}
	if run := e.get(cand.Name); run.Status.Phase != v1alpha1.PhaseSucceeded || run.Status.Baseline == nil || run.Status.Baseline.Name != "base" {
		t.Fatalf("candidate: phase %s baseline %+v", run.Status.Phase, run.Status.Baseline)
	}
}
