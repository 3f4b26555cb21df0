package controllers

// queue.go: runs that name a load pool (spec.load.runners.pool) never overlap, nor do runs
// whose exclusive external targets share an endpoint (queuekeys.go). Such a run waits in
// phase Queued until it holds the pool and the endpoints (its queue keys), then provisions;
// it holds them until it finishes (Succeeded/Failed), is deleted, or its spec changes (a new
// generation queues again).
//
// Mutual exclusion does not rest on the (possibly stale) informer cache: the pool's holder is
// written into a lock ConfigMap (benchrun-pool-<pool>) with optimistic locking (create, or
// update at the resourceVersion read), read past the cache, and a run leaves Queued only in
// the step that took or already holds that lock. Two workers (--max-concurrent-reconciles > 1)
// or two managers racing for a free pool: one write wins, the other gets a conflict and waits.
// Order among waiting runs (spec.priority, then creationTimestamp, namespace, name) comes from
// the cached list: only the first waiting run tries to take a free pool.
//
// Scope: with PoolNamespace unset a pool is per namespace (the lock lives in the run's
// namespace; no permission beyond the run's namespace). With PoolNamespace set (the manager's
// --pool-namespace) pools are cluster-wide across the watched namespaces and every lock lives
// there: dedicated load nodes are a cluster-wide resource.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// DefaultQueueTimeout is how long a run waits for its load pool when timeouts.queued is unset.
const DefaultQueueTimeout = time.Hour

// Keys of a pool's lock ConfigMap.
const (
	lockKeyHolder     = "holder"     // namespace/name of the run holding the pool
	lockKeyUID        = "uid"        // its UID (a re-created run of the same name is another run)
	lockKeyGeneration = "generation" // its spec generation (a new generation queues again)
	lockKeyEndpoint   = "endpoint"   // an external target's endpoint (for people reading it)
)

// queueTimeout is timeouts.queued or DefaultQueueTimeout.
func queueTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	if d := run.Spec.Timeouts.Queued; d != nil {
		return d.Duration
	}
	return DefaultQueueTimeout
}

// poolTurn tells whether the run may provision: always for a run without queue keys
// (queuekeys.go: its load pool, its exclusive external target's endpoints) or one past the
// queue; for a Pending or Queued run only once it holds every key (it then leaves Queued in
// this step: its start time restarts, so the run's own timeouts do not count the wait).
// It takes its keys all in one step, when each is free and it is first in line for each,
// and holds none while it waits (a run never holds one key while waiting for another, so
// runs with overlapping keys cannot block each other in a cycle). Otherwise the run is (or
// stays) Queued with its position in the message, or fails with QueueTimeout when it waited
// too long.
func (r *BenchmarkRunReconciler) poolTurn(ctx context.Context, s *step) (bool, error) {
	run, phase := s.run, s.run.Status.Phase
	keys := queueKeys(run)
	if len(keys) == 0 || (phase != v1alpha1.PhasePending && phase != v1alpha1.PhaseQueued) {
		return true, nil
	}
	locks, holders := make([]*corev1.ConfigMap, len(keys)), make([]string, len(keys))
	mine, all := runKey(run), true
	for i, k := range keys {
		var err error
		if locks[i], holders[i], err = r.keyHolder(ctx, run, k); err != nil {
			return false, err
		}
		all = all && holders[i] == mine
	}
	if all { // held since an earlier step (its patch failed)
		if phase == v1alpha1.PhaseQueued {
			r.leaveQueue(s, keys)
		}
		return true, nil
	}
	if phase == v1alpha1.PhasePending {
		s.setPhase(v1alpha1.PhaseQueued, v1alpha1.ReasonQueued, "waiting for %s", describeKeys(keys))
	}
	for i, k := range keys {
		if holders[i] == mine {
			continue
		}
		waiting, err := r.keyQueue(ctx, run, k, holders[i])
		if err != nil {
			return false, err
		}
		if holders[i] != "" || len(waiting) == 0 || runKey(&waiting[0]) != mine {
			r.releaseKeys(ctx, run, locks, holders)
			r.stayQueued(s, k, waiting, holders[i])
			return false, nil
		}
	}
	return r.takeKeys(ctx, s, keys, locks, holders)
}

// takeKeys takes every key the run does not hold yet (each free, the run first in line) and
// leaves the queue; when another run wins a race for one, it releases what it took.
func (r *BenchmarkRunReconciler) takeKeys(ctx context.Context, s *step, keys []queueKey, locks []*corev1.ConfigMap, holders []string) (bool, error) {
	mine := runKey(s.run)
	for i, k := range keys {
		if holders[i] == mine {
			continue
		}
		ok, lock, err := r.takeKey(ctx, s.run, k, locks[i])
		if err != nil || !ok {
			r.releaseKeys(ctx, s.run, locks, holders)
			return false, err
		}
		locks[i], holders[i] = lock, mine
	}
	r.leaveQueue(s, keys)
	return true, nil
}

// stayQueued keeps the run Queued behind key k with its position, or fails it with
// QueueTimeout when it waited longer than timeouts.queued.
func (r *BenchmarkRunReconciler) stayQueued(s *step, k queueKey, waiting []v1alpha1.BenchmarkRun, holder string) {
	run := s.run
	if since := run.Status.StartTime; since != nil && s.now.Sub(since.Time) >= queueTimeout(run) {
		msg := fmt.Sprintf("waited %s for %s (timeouts.queued); nothing was provisioned", queueTimeout(run), k.long())
		quietCondition(s, metav1.ConditionFalse, v1alpha1.ReasonQueueTimeout, msg) // the phase Event reports it
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonQueueTimeout, msg)
		return
	}
	pos, total := queuePlace(run, waiting)
	run.Status.QueuePosition = fmt.Sprintf("%d/%d", pos, total)
	s.setCondition(v1alpha1.ConditionQueued, metav1.ConditionTrue, k.waitReason(), queueMessage(run, k, waiting, holder))
}

// leaveQueue marks a run that holds its keys as no longer queued: back to Pending, which
// provision moves to Provisioning in this same step, with its start time restarted.
func (r *BenchmarkRunReconciler) leaveQueue(s *step, keys []queueKey) {
	reason := v1alpha1.ReasonPoolAcquired
	if keys[0].kind != keyPool {
		reason = v1alpha1.ReasonTargetAcquired
	}
	quietCondition(s, metav1.ConditionFalse, reason, "holds "+describeKeys(keys))
	s.event(corev1.EventTypeNormal, reason, "holds %s; provisioning", describeKeys(keys))
	s.run.Status.StartTime = &s.now
	s.run.Status.Phase, s.run.Status.QueuePosition = v1alpha1.PhasePending, ""
}

// quietCondition sets the Queued condition without an Event of its own.
func quietCondition(s *step, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&s.run.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionQueued, Status: status,
		Reason: reason, Message: message, ObservedGeneration: s.run.Generation, LastTransitionTime: s.now})
}

// queueMessage is "position N of M waiting for pool P; run H holds it" (or "... waiting for
// external target host:port; ...") for the Queued condition (position 1: next in line).
func queueMessage(run *v1alpha1.BenchmarkRun, k queueKey, waiting []v1alpha1.BenchmarkRun, holder string) string {
	pos, total := queuePlace(run, waiting)
	msg := fmt.Sprintf("position %d of %d waiting for %s", pos, total, k)
	switch {
	case holder != "":
		msg += "; run " + shortKey(run, holder) + " holds it"
	case pos > 1:
		msg += "; run " + shortKey(run, runKey(&waiting[0])) + " is next"
	}
	return msg
}

// queuePlace is the run's position among the runs waiting (first in line first) and their
// number; a run not listed yet (a stale cache) is last.
func queuePlace(run *v1alpha1.BenchmarkRun, waiting []v1alpha1.BenchmarkRun) (pos, total int) {
	for i := range waiting {
		if runKey(&waiting[i]) == runKey(run) {
			return i + 1, len(waiting)
		}
	}
	return len(waiting) + 1, len(waiting) + 1
}

// shortKey drops the namespace of a run key in the run's own namespace.
func shortKey(run *v1alpha1.BenchmarkRun, key string) string {
	if p := run.Namespace + "/"; len(key) > len(p) && key[:len(p)] == p {
		return key[len(p):]
	}
	return key
}

// runKey is namespace/name.
func runKey(run *v1alpha1.BenchmarkRun) string { return run.Namespace + "/" + run.Name }

// keyQueue lists the runs waiting for key k (phase unset, Pending or Queued, not being
// deleted, not its holder) from the cache, first in line first.
func (r *BenchmarkRunReconciler) keyQueue(ctx context.Context, run *v1alpha1.BenchmarkRun, k queueKey, holder string) ([]v1alpha1.BenchmarkRun, error) {
	var list v1alpha1.BenchmarkRunList
	var opts []client.ListOption
	if r.PoolNamespace == "" {
		opts = append(opts, client.InNamespace(run.Namespace))
	}
	if err := r.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing runs waiting for %s: %w", k.long(), err)
	}
	var waiting []v1alpha1.BenchmarkRun
	for _, o := range list.Items {
		p := o.Status.Phase
		if o.DeletionTimestamp == nil && runKey(&o) != holder && (p == "" || p == v1alpha1.PhasePending || p == v1alpha1.PhaseQueued) &&
			hasKey(&o, k) {
			waiting = append(waiting, o)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return queueBefore(&waiting[i], &waiting[j]) })
	return waiting, nil
}

// queueBefore orders waiting runs: higher spec.priority, then older, then namespace and name.
func queueBefore(a, b *v1alpha1.BenchmarkRun) bool {
	if a.Spec.Priority != b.Spec.Priority {
		return a.Spec.Priority > b.Spec.Priority
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return runKey(a) < runKey(b)
}

// lockKey is the lock ConfigMap of key k for run.
func (r *BenchmarkRunReconciler) lockKey(run *v1alpha1.BenchmarkRun, k queueKey) types.NamespacedName {
	ns := r.PoolNamespace
	if ns == "" {
		ns = run.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: k.lockName()}
}

// keyHolder reads key k's lock past the cache (nil when it does not exist yet) and the run
// holding the key: "" when nobody does (no lock, or its holder finished, was deleted, or
// moved to a new generation).
func (r *BenchmarkRunReconciler) keyHolder(ctx context.Context, run *v1alpha1.BenchmarkRun, k queueKey) (*corev1.ConfigMap, string, error) {
	var lock corev1.ConfigMap
	if err := r.uncached().Get(ctx, r.lockKey(run, k), &lock); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("reading the lock of %s: %w", k.long(), err)
	}
	key := lock.Data[lockKeyHolder]
	if key == "" {
		return &lock, "", nil
	}
	if key == runKey(run) && lock.Data[lockKeyUID] == string(run.UID) && lock.Data[lockKeyGeneration] == strconv.FormatInt(run.Generation, 10) {
		return &lock, key, nil
	}
	live, err := r.holderLive(ctx, &lock)
	if err != nil || !live {
		return &lock, "", err
	}
	return &lock, key, nil
}

// holderLive tells whether the lock's holder still holds the pool: the same run (UID) at the
// same generation, not finished and not being deleted. Read past the cache: a stale copy
// must never release a pool.
func (r *BenchmarkRunReconciler) holderLive(ctx context.Context, lock *corev1.ConfigMap) (bool, error) {
	var ns, name string
	key := lock.Data[lockKeyHolder]
	for i := range key {
		if key[i] == '/' {
			ns, name = key[:i], key[i+1:]
			break
		}
	}
	var h v1alpha1.BenchmarkRun
	if err := r.uncached().Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &h); err != nil {
		if kerrors.IsNotFound(err) || name == "" {
			return false, nil
		}
		return false, fmt.Errorf("reading the holder of a pool: %w", err)
	}
	gen := strconv.FormatInt(h.Generation, 10)
	return string(h.UID) == lock.Data[lockKeyUID] && gen == lock.Data[lockKeyGeneration] &&
		h.DeletionTimestamp == nil && !finished(h.Status.Phase), nil
}

// takeKey writes run as key k's holder: create the lock, or update it at the version read.
// false: another run won the race (a conflict); the run stays Queued. The lock returned is
// the one written (for releaseKeys).
func (r *BenchmarkRunReconciler) takeKey(ctx context.Context, run *v1alpha1.BenchmarkRun, k queueKey, lock *corev1.ConfigMap) (bool, *corev1.ConfigMap, error) {
	data := map[string]string{lockKeyHolder: runKey(run), lockKeyUID: string(run.UID),
		lockKeyGeneration: strconv.FormatInt(run.Generation, 10)}
	if k.kind == keyTarget {
		data[lockKeyEndpoint] = k.name
	}
	var err error
	if lock == nil {
		key := r.lockKey(run, k)
		lock = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{naming.LabelComponent: k.kind + "-lock"}}, Data: data}
		err = r.Create(ctx, lock)
	} else {
		lock.Data = data // Update sends the resourceVersion read: a concurrent writer conflicts
		err = r.Update(ctx, lock)
	}
	if kerrors.IsConflict(err) || kerrors.IsAlreadyExists(err) {
		logf.FromContext(ctx).V(1).Info("lost the race for a queue key", "key", k.long())
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("taking %s: %w", k.long(), err)
	}
	return true, lock, nil
}

// releaseKeys gives back the keys the run holds (holders[i] is the run) while it waits for
// another: the lock's holder is cleared at the version read. A conflict leaves the lock as
// another writer made it; an error is only logged (the next step tries again).
func (r *BenchmarkRunReconciler) releaseKeys(ctx context.Context, run *v1alpha1.BenchmarkRun, locks []*corev1.ConfigMap, holders []string) {
	for i, lock := range locks {
		if holders[i] != runKey(run) || lock == nil {
			continue
		}
		lock.Data = map[string]string{}
		if err := r.Update(ctx, lock); err != nil && !kerrors.IsConflict(err) {
			logf.FromContext(ctx).Info("releasing a queue key", "lock", lock.Name, "error", err.Error())
		}
		holders[i] = ""
	}
}

// poolPeers maps any change of a run with queue keys (it finished, was deleted, left the
// queue) to the first run waiting for each of its keys, so the next one starts without
// waiting for its poll.
func (r *BenchmarkRunReconciler) poolPeers(ctx context.Context, obj client.Object) []reconcile.Request {
	run, ok := obj.(*v1alpha1.BenchmarkRun)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, k := range queueKeys(run) {
		waiting, err := r.keyQueue(ctx, run, k, "")
		if err != nil || len(waiting) == 0 || runKey(&waiting[0]) == runKey(run) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: waiting[0].Namespace, Name: waiting[0].Name}})
	}
	return reqs
}
