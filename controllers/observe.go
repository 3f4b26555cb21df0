package controllers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
)

// observation is what the runners' state ConfigMaps, pods and Job say.
type observation struct {
	states  []runner.State
	configs []*corev1.ConfigMap // by index, nil when missing
	failed  map[int]string      // index → reason, for runners that will not finish
	waiting map[int]string      // index → why its pod is not running yet (unschedulable, image pull...)
	ready   int                 // at the barrier or past it
	started int                 // load started
	done    int                 // finished with a stored result
	skew    time.Duration       // spread of load start times, when every runner started
}

// failedText lists the failed runners, sorted.
func (o *observation) failedText() string {
	idx := make([]int, 0, len(o.failed))
	for i := range o.failed {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	parts := make([]string, len(idx))
	for k, i := range idx {
		parts[k] = fmt.Sprintf("runner-%d: %s", i, o.failed[i])
	}
	return strings.Join(parts, "; ")
}

// observeRunners reads every runner's state and the failures the cluster reports: a pod
// that failed, was evicted or OOM-killed, or an index the Job marked failed, while the
// runner did not store a finished result.
func (r *BenchmarkRunReconciler) observeRunners(ctx context.Context, s *step) (*observation, error) {
	run := s.run
	p := prefix(run, run.Generation)
	n := int(run.Status.Runners.Desired)
	obs := &observation{states: make([]runner.State, n), configs: make([]*corev1.ConfigMap, n), failed: map[int]string{}, waiting: map[int]string{}}
	var first, last time.Time
	for i := 0; i < n; i++ {
		cm, err := r.stateConfigMap(ctx, run, runner.StateName(p, i))
		if err != nil {
			return nil, err
		}
		if cm == nil {
			obs.failed[i] = "state ConfigMap deleted"
			continue
		}
		if !ownedBy(cm, run) { // an earlier run's, not yet collected by the garbage collector
			obs.waiting[i] = "state ConfigMap of an earlier run of the same name not deleted yet"
			continue
		}
		st := runner.ParseState(cm, i)
		obs.states[i], obs.configs[i] = st, cm
		switch st.State {
		case runner.StateReady:
			obs.ready++
		case runner.StateRunning:
			obs.ready++
		case runner.StateDone:
			obs.ready++
			obs.done++
		case runner.StateFailed:
			obs.failed[i] = st.Reason
		}
		if !st.LoadStartedAt.IsZero() {
			obs.started++
			if first.IsZero() || st.LoadStartedAt.Before(first) {
				first = st.LoadStartedAt
			}
			if st.LoadStartedAt.After(last) {
				last = st.LoadStartedAt
			}
		}
	}
	if obs.started == n {
		obs.skew = last.Sub(first)
	}
	if err := r.observeRunnerPods(ctx, s, obs); err != nil {
		return nil, err
	}
	return obs, nil
}

// observeRunnerPods adds the failures of runner pods and of Job indexes.
func (r *BenchmarkRunReconciler) observeRunnerPods(ctx context.Context, s *step, obs *observation) error {
	run := s.run
	finishedOK := func(i int) bool { return i < 0 || i >= len(obs.states) || obs.states[i].State == runner.StateDone }
	var job batchv1.Job
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: runner.JobName(prefix(run, run.Generation))}, &job)
	if err != nil && !kerrors.IsNotFound(err) {
		return err
	}
	if err != nil || !ownedBy(&job, run) {
		job = batchv1.Job{} // none, or an earlier run's: neither its indexes nor its pods are this run's
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(runLabels(run, run.Generation)),
		client.MatchingLabels{naming.LabelRunnerSet: prefix(run, run.Generation)}); err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		idx, err := strconv.Atoi(pod.Labels[batchv1.JobCompletionIndexAnnotation])
		if err != nil || finishedOK(idx) {
			continue
		}
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.UID != job.UID {
			continue // a pod of an earlier run's Job
		}
		if _, known := obs.failed[idx]; known {
			continue
		}
		if reason := podFailure(pod); reason != "" {
			obs.failed[idx] = reason
		} else if why := podWaiting(pod); why != "" {
			obs.waiting[idx] = why
		}
	}
	if job.Status.FailedIndexes != nil {
		for _, idx := range parseIndexes(*job.Status.FailedIndexes) {
			if _, known := obs.failed[idx]; !known && !finishedOK(idx) {
				obs.failed[idx] = "runner pod failed (Job index failed)"
			}
		}
	}
	return nil
}

// stateConfigMap reads a runner state ConfigMap from the cache; one the cache does not hold
// yet (created a moment ago) is read from the API server before it counts as deleted. nil:
// there is none.
func (r *BenchmarkRunReconciler) stateConfigMap(ctx context.Context, run *v1alpha1.BenchmarkRun, name string) (*corev1.ConfigMap, error) {
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: run.Namespace, Name: name}
	err := r.Get(ctx, key, &cm)
	if kerrors.IsNotFound(err) {
		err = r.uncached().Get(ctx, key, &cm)
	}
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &cm, nil
}

// podFailure says why a runner pod failed, or "" when it did not.
func podFailure(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			return fmt.Sprintf("pod %s OOM-killed (exit code %d)", pod.Name, t.ExitCode)
		}
	}
	if pod.Status.Phase != corev1.PodFailed {
		return ""
	}
	if pod.Status.Reason != "" {
		return fmt.Sprintf("pod %s %s: %s", pod.Name, strings.ToLower(pod.Status.Reason), pod.Status.Message)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("pod %s failed: %s (exit code %d)", pod.Name, t.Reason, t.ExitCode)
		}
	}
	return fmt.Sprintf("pod %s failed", pod.Name)
}

// podWaiting says why a pod does not run yet (unschedulable, image pull errors...), or "".
func podWaiting(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return c.Reason + ": " + c.Message
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return w.Reason + ": " + w.Message
		}
	}
	return ""
}

// waitingText lists why runners are not running yet, sorted, at most 3.
func (o *observation) waitingText() string {
	idx := make([]int, 0, len(o.waiting))
	for i := range o.waiting {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var parts []string
	for _, i := range idx[:min(len(idx), 3)] {
		parts = append(parts, fmt.Sprintf("runner-%d: %s", i, o.waiting[i]))
	}
	return strings.Join(parts, "; ")
}

// parseIndexes parses a Job's failedIndexes ("1,3-5").
func parseIndexes(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && i-a < 1<<16; i++ {
			out = append(out, i)
		}
	}
	return out
}
