package controllers

// queue.go: runs that name a load pool (spec.load.runners.pool) never overlap. Such a run
// waits in phase Queued until it holds the pool, then provisions; it holds the pool until it
// finishes (Succeeded/Failed), is deleted, or its spec changes (a new generation queues again).
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
	lockPrefix        = "benchrun-pool-"
)

// queueTimeout is timeouts.queued or DefaultQueueTimeout.
func queueTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	if d := run.Spec.Timeouts.Queued; d != nil {
		return d.Duration
	}
	return DefaultQueueTimeout
}

// poolTurn tells whether the run may provision: always for a run without a pool or one past
// the queue; for a Pending or Queued run on a pool only once it holds the pool (it then
// leaves Queued in this step: its start time restarts, so the run's own timeouts do not
// count the wait). Otherwise the run is (or stays) Queued with its position in the message,
// or fails with QueueTimeout when it waited too long.
func (r *BenchmarkRunReconciler) poolTurn(ctx context.Context, s *step) (bool, error) {
	run, phase := s.run, s.run.Status.Phase
	pool := run.Spec.Load.Runners.Pool
	if pool == "" || (phase != v1alpha1.PhasePending && phase != v1alpha1.PhaseQueued) {
		return true, nil
	}
	lock, holder, err := r.poolHolder(ctx, run)
	if err != nil {
		return false, err
	}
	if holder == runKey(run) { // held since an earlier step (its patch failed, or it waits for its baseline)
		if phase == v1alpha1.PhaseQueued {
			r.leaveQueue(s)
		}
		return true, nil
	}
	if phase == v1alpha1.PhasePending {
		s.setPhase(v1alpha1.PhaseQueued, "Queued", "waiting for load pool %s", pool)
	}
	waiting, err := r.poolQueue(ctx, run, holder)
	if err != nil {
		return false, err
	}
	if holder == "" && len(waiting) > 0 && runKey(&waiting[0]) == runKey(run) {
		ok, err := r.takePool(ctx, run, lock)
		if ok {
			r.leaveQueue(s)
		}
		return ok, err
	}
	if since := run.Status.StartTime; since != nil && s.now.Sub(since.Time) >= queueTimeout(run) {
		msg := fmt.Sprintf("waited %s for load pool %s (timeouts.queued); nothing was provisioned", queueTimeout(run), pool)
		quietCondition(s, metav1.ConditionFalse, "QueueTimeout", msg) // the phase Event reports it
		r.finish(s, v1alpha1.PhaseFailed, "QueueTimeout", msg)
		return false, nil
	}
	s.setCondition(v1alpha1.ConditionQueued, metav1.ConditionTrue, "WaitingForPool", queueMessage(run, waiting, holder))
	return false, nil
}

// leaveQueue marks a run that holds its pool as no longer queued: back to Pending, which
// provision moves to Provisioning in this same step, with its start time restarted.
func (r *BenchmarkRunReconciler) leaveQueue(s *step) {
	pool := s.run.Spec.Load.Runners.Pool
	quietCondition(s, metav1.ConditionFalse, "PoolAcquired", fmt.Sprintf("holds load pool %s", pool))
	s.event(corev1.EventTypeNormal, "PoolAcquired", "holds load pool %s; provisioning", pool)
	s.run.Status.StartTime = &s.now
	s.run.Status.Phase = v1alpha1.PhasePending
}

// quietCondition sets the Queued condition without an Event of its own.
func quietCondition(s *step, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&s.run.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionQueued, Status: status,
		Reason: reason, Message: message, ObservedGeneration: s.run.Generation, LastTransitionTime: s.now})
}

// queueMessage is "position N of M waiting for pool P; run H holds it" for the Queued
// condition (position 1: next in line).
func queueMessage(run *v1alpha1.BenchmarkRun, waiting []v1alpha1.BenchmarkRun, holder string) string {
	pos, total := len(waiting)+1, len(waiting)+1 // not listed yet (a stale cache): last
	for i := range waiting {
		if runKey(&waiting[i]) == runKey(run) {
			pos, total = i+1, len(waiting)
			break
		}
	}
	msg := fmt.Sprintf("position %d of %d waiting for pool %s", pos, total, run.Spec.Load.Runners.Pool)
	switch {
	case holder != "":
		msg += "; run " + shortKey(run, holder) + " holds it"
	case pos > 1:
		msg += "; run " + shortKey(run, runKey(&waiting[0])) + " is next"
	}
	return msg
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

// poolQueue lists the runs waiting for run's pool (phase unset, Pending or Queued, not being
// deleted, not its holder) from the cache, first in line first.
func (r *BenchmarkRunReconciler) poolQueue(ctx context.Context, run *v1alpha1.BenchmarkRun, holder string) ([]v1alpha1.BenchmarkRun, error) {
	var list v1alpha1.BenchmarkRunList
	var opts []client.ListOption
	if r.PoolNamespace == "" {
		opts = append(opts, client.InNamespace(run.Namespace))
	}
	if err := r.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing runs of pool %s: %w", run.Spec.Load.Runners.Pool, err)
	}
	var waiting []v1alpha1.BenchmarkRun
	for _, o := range list.Items {
		p := o.Status.Phase
		if o.Spec.Load.Runners.Pool == run.Spec.Load.Runners.Pool && o.DeletionTimestamp == nil && runKey(&o) != holder &&
			(p == "" || p == v1alpha1.PhasePending || p == v1alpha1.PhaseQueued) {
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

// poolLockKey is the lock ConfigMap of run's pool.
func (r *BenchmarkRunReconciler) poolLockKey(run *v1alpha1.BenchmarkRun) types.NamespacedName {
	ns := r.PoolNamespace
	if ns == "" {
		ns = run.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: lockPrefix + run.Spec.Load.Runners.Pool}
}

// poolHolder reads the pool's lock past the cache (nil when it does not exist yet) and the
// run holding the pool: "" when nobody does (no lock, or its holder finished, was deleted,
// or moved to a new generation).
func (r *BenchmarkRunReconciler) poolHolder(ctx context.Context, run *v1alpha1.BenchmarkRun) (*corev1.ConfigMap, string, error) {
	var lock corev1.ConfigMap
	if err := r.uncached().Get(ctx, r.poolLockKey(run), &lock); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("reading the lock of pool %s: %w", run.Spec.Load.Runners.Pool, err)
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

// takePool writes run as the pool's holder: create the lock, or update it at the version read.
// false: another run won the race (a conflict); the run stays Queued.
func (r *BenchmarkRunReconciler) takePool(ctx context.Context, run *v1alpha1.BenchmarkRun, lock *corev1.ConfigMap) (bool, error) {
	data := map[string]string{lockKeyHolder: runKey(run), lockKeyUID: string(run.UID),
		lockKeyGeneration: strconv.FormatInt(run.Generation, 10)}
	var err error
	if lock == nil {
		key := r.poolLockKey(run)
		lock = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{naming.LabelComponent: "pool-lock"}}, Data: data}
		err = r.Create(ctx, lock)
	} else {
		lock.Data = data // Update sends the resourceVersion read: a concurrent writer conflicts
		err = r.Update(ctx, lock)
	}
	if kerrors.IsConflict(err) || kerrors.IsAlreadyExists(err) {
		logf.FromContext(ctx).V(1).Info("lost the race for a load pool", "pool", run.Spec.Load.Runners.Pool)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("taking load pool %s: %w", run.Spec.Load.Runners.Pool, err)
	}
	return true, nil
}

// poolPeers maps any change of a run on a pool (it finished, was deleted, left the queue) to
// the first run waiting for that pool, so the next one starts without waiting for its poll.
func (r *BenchmarkRunReconciler) poolPeers(ctx context.Context, obj client.Object) []reconcile.Request {
	run, ok := obj.(*v1alpha1.BenchmarkRun)
	if !ok || run.Spec.Load.Runners.Pool == "" {
		return nil
	}
	waiting, err := r.poolQueue(ctx, run, "")
	if err != nil || len(waiting) == 0 || runKey(&waiting[0]) == runKey(run) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: waiting[0].Namespace, Name: waiting[0].Name}}}
}
