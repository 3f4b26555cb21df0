// Package controllers reconciles BenchmarkRuns. The reconcile in this file reads like the
// lifecycle; each phase or concern has its own file:
//
//	generation.go      accept a generation; a spec change archives the previous run in history
//	stop.go, keep.go   stop the runners of an edited or deleted run; keep a deleted run's results
//	queue.go           Queued: a run waits for its load pool or external target (queuekeys.go: the keys)
//	verdict.go         baseline resolution; thresholds and the verdict once collected
//	provision.go       Pending/Provisioning: deploy the target, wait until it is ready
//	                   (hetuapp.go, netpol.go, targetfailure.go, events.go: why it is not ready)
//	start.go           Starting: runner objects, start barrier released when all are ready
//	watch.go           Running: runner states (observe.go), failures (stuck.go), run timeout
//	faults.go          the fault timeline (faultpause.go, faultmeasure.go)
//	liveabort.go       live progress in status.live, live abortOnFail thresholds
//	collect.go         Collecting: merge the stored result documents (resultsource.go,
//	                   collect_open.go, collectdeadline.go), report ConfigMaps (reportsize.go)
//	finish.go          Succeeded/Failed
//	cleanup.go         cleanup policy and ttlSecondsAfterFinished (objects.go: what a run owns)
//	usage.go           CPU/memory per role (metrics.k8s.io, kubelets, runners' cgroups; liveusage.go)
//	metrics.go         the manager's Prometheus metrics of runs
//	status.go          conditions, Events, status patch with optimistic locking (statusbudget.go)
//	discovery.go, cachefallback.go  which APIs are served; cache reads with an API fallback
//
// Condition types and reasons are the constants of api/v1alpha1/conditions.go (contracts_test.go).
package controllers

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/usage"
)

// Images are the default images the operator deploys when a BenchmarkRun does not name one.
type Images struct {
	// Runner is the k6 runner image (benchrun-runner agent, k6 and scripts).
	Runner string
	// Redis is the Redis server image.
	Redis string
	// Valkey is the Valkey server image.
	Valkey string
	// HeTu is the HeTu bench app image.
	HeTu string
	// Proxy is the read/write-splitting proxy image.
	Proxy string
}

// BenchmarkRunReconciler drives a BenchmarkRun through its phases.
type BenchmarkRunReconciler struct {
	client.Client
	// Scheme maps Go types to API kinds.
	Scheme *runtime.Scheme
	// Recorder emits Kubernetes Events at each transition.
	Recorder record.EventRecorder
	// Images are the default images.
	Images Images
	// Clock is the time source (real time when nil).
	Clock Clock
	// StartDelay is how far ahead of the barrier release the runners start (default 3s).
	StartDelay time.Duration
	// PollInterval is how often an active run is re-checked besides watch events (default 5s).
	PollInterval time.Duration
	// APIReader reads objects the manager does not cache, such as the user's script
	// ConfigMaps (the cache holds benchrun's own ConfigMaps only); Client when nil.
	APIReader client.Reader
	// RedisRoleClusterRole is the ClusterRole (pods patch) bound to the redis-role sidecars
	// of builtin ha and proxy targets; target.DefaultRedisRoleClusterRole when empty. The
	// manager holds bind on that ClusterRole only, never pods patch itself.
	RedisRoleClusterRole string
	// Kubelet reads pod CPU/memory from the kubelets when the cluster serves no
	// metrics.k8s.io; nil turns that off (runners still report their own usage).
	Kubelet *usage.KubeletMetrics
	// History exports finished runs as metrics (nil: none).
	History *History
	// MaxConcurrent is how many BenchmarkRuns are reconciled in parallel (1 when unset); one
	// run is never reconciled by two workers at once.
	MaxConcurrent int
	// RemoteWriteURL is the Prometheus remote-write URL runners stream live metrics to when a
	// run sets none (empty: only runs that set one stream).
	RemoteWriteURL string
	// PoolNamespace holds the lock ConfigMaps of cluster-wide load pools (queue.go); empty:
	// a load pool is per namespace.
	PoolNamespace string
	// NetworkPolicies, when set, has the manager create each run's NetworkPolicies (netpol.go).
	NetworkPolicies *NetworkPolicyConfig

	// servedKinds remembers which optional APIs the cluster serves (discovery.go).
	servedKinds servedCache
}

// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;get;list
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=statefulsets;deployments,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;delete
// The redis-role sidecars' RoleBinding references this ClusterRole (config/rbac/redis_role.yaml;
// the chart rewrites the name to its release's): bind on it instead of holding pods patch.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=benchrun-redis-role
// +kubebuilder:rbac:groups=redis.redis.opstreelabs.in,resources=redis;redisreplications;redissentinels,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=get;list

// Reconcile moves one BenchmarkRun forward by one step and patches its status once.
func (r *BenchmarkRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// 1. Fetch the run; deleted runs take their objects with them (owner references).
	var run v1alpha1.BenchmarkRun
	if err := r.Get(ctx, req.NamespacedName, &run); err != nil {
		if kerrors.IsNotFound(err) { // deleted: its metrics go (metrics.go)
			r.forgetDeleted(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.DeletionTimestamp != nil { // deleted mid-load: keep what was stored (keep.go)
		return r.deleting(ctx, &run)
	}
	s := r.newStep(&run)

	// 2. A new spec generation: archive the previous one (finished or not) and start over. What
	// it deletes is decided on the run as the API server has it now, never a stale cached copy.
	if run.Status.ObservedGeneration != run.Generation || run.Status.Phase == "" {
		return r.newGeneration(ctx, req, &run)
	}

	// 3. Finished runs only wait for cleanup and their TTL.
	if finished(run.Status.Phase) {
		r.History.Observe(&run)
		return r.afterFinish(ctx, s)
	}

	// 4. The whole-run timeout ends the load; what runners stored is still collected.
	if r.runTimedOut(s) {
		return r.patchStatus(ctx, s, requeueSoon)
	}

	// 5. One phase step.
	var err error
	switch run.Status.Phase {
	case v1alpha1.PhasePending, v1alpha1.PhaseQueued, v1alpha1.PhaseProvisioning:
		err = r.prepare(ctx, s)
	case v1alpha1.PhaseStarting:
		err = r.startRunners(ctx, s)
	case v1alpha1.PhaseRunning:
		err = r.watchRunners(ctx, s)
	case v1alpha1.PhaseCollecting:
		err = r.collectWithDeadline(ctx, s) // collectdeadline.go: the deadline is checked before any retry
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	// 6. Persist the step; a finished run gets its cleanup right away.
	res := ctrl.Result{RequeueAfter: r.pollInterval()}
	if finished(run.Status.Phase) {
		res = requeueSoon
	}
	res = s.requeueForFaults(res, r.now())
	if res, err = r.patchStatus(ctx, s, res); err != nil {
		return res, err
	}
	return res, r.syncFinalizer(ctx, &run)
}

// newGeneration archives the previous spec generation (finished or not) and starts the new
// one, deciding on the run as the API server has it now, never a stale cached copy.
func (r *BenchmarkRunReconciler) newGeneration(ctx context.Context, req ctrl.Request, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if err := r.uncached().Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.Status.ObservedGeneration == run.Generation && run.Status.Phase != "" {
		return requeueSoon, nil // accepted already: the cache was behind
	}
	s := r.newStep(run)
	// Runners still loading are stopped first, and waited for (stop.go).
	if wait, err := r.stopRunners(ctx, s, "the spec changed"); err != nil {
		return ctrl.Result{}, err
	} else if wait {
		return r.patchStatus(ctx, s, ctrl.Result{RequeueAfter: stopPoll})
	}
	if err := r.acceptGeneration(ctx, s); err != nil {
		if errors.Is(err, errCollectRetry) { // generation.go: keep when that collection began
			if _, perr := r.patchStatus(ctx, s, ctrl.Result{}); perr != nil {
				return ctrl.Result{}, perr
			}
		}
		return ctrl.Result{}, err
	}
	return r.patchStatus(ctx, s, requeueSoon)
}

// prepare is the step of a run not yet loading: the previous generation's objects go, the
// baseline is resolved, the load pool taken, the target provisioned and, once it serves, the
// runners created.
func (r *BenchmarkRunReconciler) prepare(ctx context.Context, s *step) error {
	if err := r.dropSuperseded(ctx, s); err != nil { // generation.go: the previous generation's objects
		return err
	}
	// verdict.go: the baseline first, so a run never holds a load pool while it waits for it
	// (a baseline queued behind it on the same pool would wait for ever).
	if turn, err := r.resolveBaseline(ctx, s); !turn || err != nil {
		return err
	}
	if turn, err := r.poolTurn(ctx, s); !turn || err != nil { // queue.go: a load pool is held by one run at a time
		return err
	}
	ready, err := r.provision(ctx, s)
	if ready && err == nil {
		err = r.createRunners(ctx, s) // in the same step: the load starts as soon as the target serves
	}
	return err
}

// finished tells whether a phase is terminal.
func finished(p v1alpha1.Phase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed
}

// pollInterval is PollInterval or 5s.
func (r *BenchmarkRunReconciler) pollInterval() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return 5 * time.Second
}

// SetupWithManager registers the reconciler: runs, the objects they own, and runner pods
// (owned by the Job, mapped back through their run annotation).
func (r *BenchmarkRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BenchmarkRun{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&batchv1.Job{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&appsv1.Deployment{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToRun)).
		Watches(&v1alpha1.BenchmarkRun{}, handler.EnqueueRequestsFromMapFunc(r.poolPeers)).
		Named("benchmarkrun").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrent)}).
		Complete(r)
}

// podToRun maps a runner pod to its BenchmarkRun.
func podToRun(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetAnnotations()[annotationRun]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// uncached reads past the manager's cache (which holds benchrun's own ConfigMaps and the
// runner pods only): APIReader, or Client when none is set.
func (r *BenchmarkRunReconciler) uncached() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
