package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// externalRun is a one-runner run on an external Redis target at addresses.
func (e *env) externalRun(name string, addresses ...string) *v1alpha1.BenchmarkRun {
	run := e.redisRun(name, 1)
	run.Spec.Target = v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: addresses}}
	return run
}

// untilHolds reconciles a run until it has left the queue (at most 20 times).
func (e *env) untilHolds(name string) {
	e.t.Helper()
	for range 20 {
		if e.reconcile(name); holdsPool(e.get(name).Status.Phase) {
			return
		}
	}
	e.t.Fatalf("run %s stuck in %s: %+v", name, e.get(name).Status.Phase, e.get(name).Status.Conditions)
}

// finishRun drives a run that left the queue to Succeeded.
func (e *env) finishRun(name string) {
	e.t.Helper()
	for range 20 {
		e.advance(name)
		if p := e.get(name).Status.Phase; finished(p) {
			if p != v1alpha1.PhaseSucceeded {
				e.t.Fatalf("%s ended %s: %+v", name, p, e.get(name).Status.Conditions)
			}
			return
		}
	}
	e.t.Fatalf("run %s did not finish: %s", name, e.get(name).Status.Phase)
}

// expectQueued checks a run is Queued with this condition reason and message.
func (e *env) expectQueued(name, reason, message string) {
	e.t.Helper()
	for i := 0; i < 5 && e.get(name).Status.Phase != v1alpha1.PhaseQueued; i++ {
		e.reconcile(name)
	}
	e.reconcile(name)
	c := e.queuedCondition(name)
	if p := e.get(name).Status.Phase; p != v1alpha1.PhaseQueued || c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || c.Message != message {
		e.t.Fatalf("%s: phase %s condition %+v, want %s %q", name, p, c, reason, message)
	}
	var pos, total int
	if _, err := fmt.Sscanf(message, "position %d of %d", &pos, &total); err != nil || e.get(name).Status.QueuePosition != fmt.Sprintf("%d/%d", pos, total) {
		e.t.Fatalf("%s: queuePosition %q, the message says %q", name, e.get(name).Status.QueuePosition, message)
	}
}

// TestExternalTargetQueue: two runs whose external targets name the same endpoint (spelled
// differently: the host's case) run one after another, oldest
// first, the second Queued with its position and what it waits for; a run on another
// endpoint and one that opts out (exclusive: false) run alongside the first.
func TestExternalTargetQueue(t *testing.T) {
	e := newEnv(t)
	e.create(e.externalRun("t-first", "Redis.Example:6379"))
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has second precision
	e.create(e.externalRun("t-second", "REDIS.Example:6379"))
	optOut := e.externalRun("t-optout", "redis.example:6379")
	optOut.Spec.Target.External.Exclusive = ptr.To(false)
	e.create(optOut)
	e.create(e.externalRun("t-other", "other.example:6379"))

	e.untilHolds("t-first")
	e.expectQueued("t-second", "WaitingForTarget", "position 1 of 1 waiting for external target redis.example:6379; run t-first holds it")
	if !e.eventWith("Queued waiting for external target redis.example:6379") {
		t.Errorf("no Queued Event naming the endpoint in %q", e.events)
	}
	e.untilHolds("t-optout")
	e.untilHolds("t-other")
	e.expectQueued("t-second", "WaitingForTarget", "position 1 of 1 waiting for external target redis.example:6379; run t-first holds it")
	var lock corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: queueKey{keyTarget, "redis.example:6379"}.lockName()}, &lock); err != nil ||
		lock.Data[lockKeyHolder] != e.ns+"/t-first" || lock.Data[lockKeyEndpoint] != "redis.example:6379" {
		t.Fatalf("lock %v %v", lock.Data, err)
	}

	e.finishRun("t-first")
	e.untilHolds("t-second")
	if c := e.queuedCondition("t-second"); c.Reason != "TargetAcquired" || c.Message != "holds external target redis.example:6379" {
		t.Errorf("t-second after the wait: %+v", c)
	}
	e.finishRun("t-second")
	e.finishRun("t-optout")
	e.finishRun("t-other")
	if !e.hasEvent("TargetAcquired") || !e.hasEvent("QueuedWaitingForTarget") {
		t.Errorf("no queue Events in %q", e.events)
	}
}

// TestExternalTargetAndPool: a run needing a load pool and an endpoint holds neither while
// it waits for one of them (so it cannot block others in a cycle), and takes both at once.
// Order on the endpoint stays first come first served: a younger run on the endpoint alone
// waits behind it.
func TestExternalTargetAndPool(t *testing.T) {
	e := newEnv(t)
	e.create(e.poolRun("x-pool", "load-a"))
	e.untilHolds("x-pool")
	both := e.externalRun("a-both", "10.0.0.7:6379", "[::ffff:10.0.0.7]:6379")
	both.Spec.Load.Runners.Pool = "load-a"
	e.create(both)
	e.expectQueued("a-both", "WaitingForPool", "position 1 of 1 waiting for pool load-a; run x-pool holds it")
	if !e.eventWith("Queued waiting for load pool load-a and external target 10.0.0.7:6379") {
		t.Errorf("no Queued Event naming the pool and the endpoint in %q", e.events)
	}
	time.Sleep(1100 * time.Millisecond)
	e.create(e.externalRun("b-target", "10.0.0.7:6379"))
	e.expectQueued("b-target", "WaitingForTarget", "position 2 of 2 waiting for external target 10.0.0.7:6379; run a-both is next")
	var lock corev1.ConfigMap
	err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: queueKey{keyTarget, "10.0.0.7:6379"}.lockName()}, &lock)
	if err == nil && lock.Data[lockKeyHolder] != "" {
		t.Fatalf("the endpoint is held while its runs wait: %v", lock.Data)
	}

	e.finishRun("x-pool")
	e.untilHolds("a-both")
	if c := e.queuedCondition("a-both"); c.Reason != "PoolAcquired" || c.Message != "holds load pool load-a and external target 10.0.0.7:6379" {
		t.Errorf("a-both: %+v", c)
	}
	e.expectQueued("b-target", "WaitingForTarget", "position 1 of 1 waiting for external target 10.0.0.7:6379; run a-both holds it")
	e.finishRun("a-both")
	e.untilHolds("b-target")
	e.finishRun("b-target")
}

// TestQueueKeys: which keys a run has, how endpoints compare, and the lock names.
func TestQueueKeys(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{}
	run.Spec.Load.Runners.Pool = "load-a"
	run.Spec.Target.External = &v1alpha1.ExternalTarget{Addresses: []string{"R.example.:06379", "[2001:DB8::1]:6379"},
		ReadAddresses: []string{"r.example:6379", "[::ffff:10.0.0.1]:80"}}
	var got []string
	for _, k := range queueKeys(run) {
		got = append(got, k.String())
		if n := k.lockName(); len(n) > 63 || strings.ToLower(n) != n {
			t.Errorf("lock name %q", n)
		}
	}
	want := "pool load-a|external target 10.0.0.1:80|external target [2001:db8::1]:6379|external target r.example:6379"
	if keys := queueKeys(run); keys[0].kind != keyPool || len(keys) != 4 || !sameSet(got, strings.Split(want, "|")) {
		t.Errorf("keys %q, want %q", got, want)
	}
	run.Spec.Target.External.Exclusive = ptr.To(false)
	if keys := queueKeys(run); len(keys) != 1 || keys[0] != (queueKey{keyPool, "load-a"}) {
		t.Errorf("exclusive false: %v", keys)
	}
	if d := describeKeys([]queueKey{{keyPool, "p"}, {keyTarget, "a:1"}, {keyTarget, "b:2"}}); d != "load pool p and external target a:1, b:2" {
		t.Errorf("describeKeys %q", d)
	}
}

// eventWith tells whether a recorded Event contains text.
func (e *env) eventWith(text string) bool {
	e.drainEvents()
	for _, ev := range e.events {
		if strings.Contains(ev, text) {
			return true
		}
	}
	return false
}

// sameSet tells whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		if m[s]--; m[s] < 0 {
			return false
		}
	}
	return true
}
