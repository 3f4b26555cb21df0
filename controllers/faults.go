package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/target"
)

// Fault injection (spec.faults): while the load runs, each fault is applied once when it is
// due (load start + its scenario's start + offset): the pod holding its role at that moment
// is deleted, with grace period 0 (kill) or its own (restart), or paused (faultpause.go). A fault is recorded before its
// pod is deleted, in a ConfigMap created only once (<prefix>-fault-<i>), so a status patch
// that conflicts or an operator restart never applies it twice; status.faults is rebuilt from
// those ConfigMaps. The failover measured around each fault is added when results are
// collected (faultmeasure.go).

// componentFault labels the fault record ConfigMaps.
const componentFault = "fault"

// Keys of a fault record ConfigMap.
const (
	faultKeyPod     = "pod"
	faultKeyApplied = "appliedTime"
	faultKeyOutcome = "outcome"
	faultKeyMessage = "message"
	faultKeyLateMs  = "lateMs"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=delete

// applyFaults applies the faults that are due and sets s.wake to when the next one is.
func (r *BenchmarkRunReconciler) applyFaults(ctx context.Context, s *step) error {
	run := s.run
	if len(run.Spec.Faults) == 0 || run.Status.LoadStartTime == nil {
		return nil
	}
	start := r.loadStart(ctx, s)
	now := r.now()
	for i := range run.Spec.Faults {
		if faultStatusAt(run, i) != nil {
			continue
		}
		due, ok := lifecycle.FaultDue(run, i, start) // the rule benchrun run applies too
		if !ok {
			continue
		}
		if now.Before(due) {
			if s.wake.IsZero() || due.Before(s.wake) {
				s.wake = due
			}
			continue
		}
		fs, err := r.applyFault(ctx, s, i, due)
		if err != nil {
			return err
		}
		run.Status.Faults = append(run.Status.Faults, fs)
		slices.SortFunc(run.Status.Faults, func(a, b v1alpha1.FaultStatus) int { return int(a.Index - b.Index) })
	}
	return nil
}

// loadStart is the barrier's startAt, to the nanosecond (status.loadStartTime is kept to the
// second only); status.loadStartTime when the barrier cannot be read.
func (r *BenchmarkRunReconciler) loadStart(ctx context.Context, s *step) time.Time {
	var b corev1.ConfigMap
	key := client.ObjectKey{Namespace: s.run.Namespace, Name: runner.BarrierName(prefix(s.run, s.run.Generation))}
	if err := r.Get(ctx, key, &b); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, b.Data[runner.KeyStartAt]); err == nil {
			return t
		}
	}
	return s.run.Status.LoadStartTime.Time
}

// faultStatusAt is status.faults' entry of fault i, if any.
func faultStatusAt(run *v1alpha1.BenchmarkRun, i int) *v1alpha1.FaultStatus {
	for j := range run.Status.Faults {
		if int(run.Status.Faults[j].Index) == i {
			return &run.Status.Faults[j]
		}
	}
	return nil
}

// faultRecordName is the record ConfigMap of fault i.
func faultRecordName(run *v1alpha1.BenchmarkRun, i int) string {
	return fmt.Sprintf("%s-fault-%d", prefix(run, run.Generation), i)
}

// faultPending is the outcome of a fault record written before its pod is acted on: the
// intent (which pod, which UID). It never reaches status.faults; the next step acts again
// (idempotently) and only then records Applied or Failed.
const faultPending = "Pending"

// faultKeyPodUID is the UID of the pod a fault record acts on.
const faultKeyPodUID = "podUID"

// faultRetryWindow bounds how long after its due time a fault whose pod could not be found or
// acted on because of errors that may heal (API throttling, timeouts) is retried before it
// is recorded Failed.
var faultRetryWindow = 30 * time.Second

// applyFault applies fault i (due at due) once: it resolves the role's pod, records the intent
// (a create-only ConfigMap, outcome Pending), acts on the pod (a UID precondition: the pod
// chosen is the one acted on), then records the outcome. A record found Pending (the manager
// stopped or an error that may heal came between) is acted on again: the pod gone or replaced
// means the fault happened. A record found with an outcome only rebuilds the status entry.
func (r *BenchmarkRunReconciler) applyFault(ctx context.Context, s *step, i int, due time.Time) (v1alpha1.FaultStatus, error) {
	run, f := s.run, s.run.Spec.Faults[i]
	fs := lifecycle.FaultEntry(i, f)
	rec, err := r.faultRecord(ctx, run, i)
	if err != nil {
		return fs, err
	}
	if rec != nil && rec.Data[faultKeyOutcome] != faultPending {
		fromRecord(&fs, rec)
		s.faultEvent(&fs)
		return fs, nil
	}
	var pod *corev1.Pod
	if rec == nil {
		if pod, rec, err = r.recordFaultIntent(ctx, run, i, due, &fs); err != nil || pod == nil {
			if err == nil {
				s.faultEvent(&fs)
			}
			return fs, err
		}
	} else {
		fromRecord(&fs, rec)
		if pod, err = r.recordedPod(ctx, run, rec); err != nil {
			return fs, err
		}
	}
	if err := r.actOnFaultPod(ctx, run, pod, i, f, due, &fs); err != nil {
		return fs, err // still Pending: the next step acts again
	}
	rec.Data = toRecord(&fs)
	if err := r.Update(ctx, rec); err != nil {
		return fs, fmt.Errorf("recording fault %d: %w", i, err) // the next step finds it Pending and confirms
	}
	s.faultEvent(&fs)
	return fs, nil
}

// faultRecord reads fault i's record ConfigMap (uncached): nil when there is none; one of an
// earlier run of the same name is never read as this run's (errForeign).
func (r *BenchmarkRunReconciler) faultRecord(ctx context.Context, run *v1alpha1.BenchmarkRun, i int) (*corev1.ConfigMap, error) {
	var rec corev1.ConfigMap
	err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: faultRecordName(run, i)}, &rec)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !ownedBy(&rec, run) {
		return nil, r.removeForeign(ctx, run, &rec)
	}
	return &rec, nil
}

// recordFaultIntent resolves fault i's pod and creates its record: Pending with the pod and
// its UID, or Failed when no pod can take the fault (the returned pod is then nil). An error
// that may heal is returned (no record) while the fault is within faultRetryWindow of due.
func (r *BenchmarkRunReconciler) recordFaultIntent(ctx context.Context, run *v1alpha1.BenchmarkRun, i int, due time.Time,
	fs *v1alpha1.FaultStatus) (*corev1.Pod, *corev1.ConfigMap, error) {
	f := run.Spec.Faults[i]
	pod, podErr := r.faultPod(run, f.Role, ctx)
	now := r.now()
	if podErr != nil && transient(podErr) && now.Sub(due) < faultRetryWindow {
		return nil, nil, podErr
	}
	fs.AppliedTime = &metav1.MicroTime{Time: now}
	fs.LateMs = max(0, now.Sub(due).Milliseconds())
	fs.Outcome = faultPending
	if podErr == nil && f.Action == v1alpha1.FaultPause {
		_, podErr = r.pauseContainer(pod, i, f.Duration.Duration) // faultpause.go: can it be paused?
	}
	data := map[string]string{}
	if podErr != nil {
		fs.Outcome, fs.Message = v1alpha1.FaultFailed, boundText(podErr.Error(), 512)
		pod = nil
	} else {
		fs.Pod = pod.Name
		data[faultKeyPodUID] = string(pod.UID)
	}
	rec := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: faultRecordName(run, i), Namespace: run.Namespace,
		Labels: runLabels(run, run.Generation)}, Data: toRecord(fs)}
	rec.Labels[naming.LabelComponent] = componentFault
	maps.Copy(rec.Data, data)
	if err := ctrl.SetControllerReference(run, rec, r.Scheme); err != nil {
		return nil, nil, err
	}
	if err := r.Create(ctx, rec); err != nil {
		return nil, nil, fmt.Errorf("recording fault %d: %w", i, err) // AlreadyExists: another worker won; next step reads it
	}
	return pod, rec, nil
}

// recordedPod is the pod a Pending record names, as it is now: a pod with the recorded UID
// (nil UID match: gone or replaced, a stub carrying the recorded name and UID).
func (r *BenchmarkRunReconciler) recordedPod(ctx context.Context, run *v1alpha1.BenchmarkRun, rec *corev1.ConfigMap) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: rec.Data[faultKeyPod]}, pod)
	if err != nil && !kerrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil || string(pod.UID) != rec.Data[faultKeyPodUID] {
		pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: rec.Data[faultKeyPod],
			UID: types.UID(rec.Data[faultKeyPodUID])}}
	}
	return pod, nil
}

// actOnFaultPod acts on the fault's pod and sets the outcome: Applied once the delete or the
// pause patch succeeded (or, acting again, the pod of that UID is gone: it happened), Failed
// for an error that will not heal or once faultRetryWindow has passed. Other errors are
// returned (the outcome stays Pending).
func (r *BenchmarkRunReconciler) actOnFaultPod(ctx context.Context, run *v1alpha1.BenchmarkRun, pod *corev1.Pod, i int,
	f v1alpha1.Fault, due time.Time, fs *v1alpha1.FaultStatus) error {
	err := r.actOnPod(ctx, pod, i, f)
	gone := kerrors.IsNotFound(err) || (kerrors.IsConflict(err) && f.Action != v1alpha1.FaultPause) // UID precondition failed
	switch {
	case err == nil:
		fs.Outcome, fs.Message = v1alpha1.FaultApplied, faultDone(f, pod.Name)
	case gone && f.Action != v1alpha1.FaultPause:
		fs.Outcome, fs.Message = v1alpha1.FaultApplied, faultDone(f, pod.Name)+" (the pod of that UID was gone when confirmed)"
	case transient(err) && r.now().Sub(due) < faultRetryWindow:
		return err
	default:
		fs.Outcome, fs.Message = v1alpha1.FaultFailed, boundText(fmt.Sprintf("%s pod %s: %v", f.Action, pod.Name, err), 512)
	}
	return nil
}

// actOnPod applies fault i to pod: starts its pause (once: a pod that has the pause container
// already is not patched again), or deletes it.
func (r *BenchmarkRunReconciler) actOnPod(ctx context.Context, pod *corev1.Pod, i int, f v1alpha1.Fault) error {
	if f.Action == v1alpha1.FaultPause {
		name := fmt.Sprintf("%s%d", pauseContainerPrefix, i)
		if slices.ContainsFunc(pod.Spec.EphemeralContainers, func(c corev1.EphemeralContainer) bool { return c.Name == name }) {
			return nil
		}
		if len(pod.Spec.Containers) == 0 { // a stub: the recorded pod is gone or replaced
			return kerrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		return r.startPause(ctx, pod, i, f.Duration.Duration)
	}
	return r.deleteFaultPod(ctx, pod, f.Action)
}

// faultPod resolves role to the pod the fault acts on now.
func (r *BenchmarkRunReconciler) faultPod(run *v1alpha1.BenchmarkRun, role v1alpha1.FaultRole, ctx context.Context) (*corev1.Pod, error) {
	t, err := r.buildTarget(run)
	if err != nil {
		return nil, err
	}
	return target.FaultPod(ctx, r.uncached(), t, run.Namespace, prefix(run, run.Generation), role)
}

// deleteFaultPod deletes pod: grace period 0 for kill, the pod's own for restart. The UID
// precondition makes sure the pod chosen is the one deleted.
func (r *BenchmarkRunReconciler) deleteFaultPod(ctx context.Context, pod *corev1.Pod, action v1alpha1.FaultAction) error {
	opts := []client.DeleteOption{client.Preconditions{UID: &pod.UID}}
	if action == v1alpha1.FaultKill {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	return r.Delete(ctx, pod, opts...)
}

// faultDone describes an applied fault.
func faultDone(f v1alpha1.Fault, pod string) string {
	if f.Action == v1alpha1.FaultPause {
		return pauseDone(pod, f.Duration.Duration)
	}
	if f.Action == v1alpha1.FaultKill {
		return "pod " + pod + " deleted with grace period 0"
	}
	return "pod " + pod + " deleted gracefully"
}

// faultEvent queues the Event of an applied or failed fault.
func (s *step) faultEvent(fs *v1alpha1.FaultStatus) {
	if fs.Outcome == v1alpha1.FaultApplied {
		s.event(corev1.EventTypeNormal, v1alpha1.ReasonFaultApplied, "fault %d (%s %s at %s in %s): %s, %d ms after its due time",
			fs.Index, fs.Action, fs.Role, fs.Offset, fs.Scenario, fs.Message, fs.LateMs)
		return
	}
	s.event(corev1.EventTypeWarning, v1alpha1.ReasonFaultFailed, "fault %d (%s %s at %s in %s) not applied: %s",
		fs.Index, fs.Action, fs.Role, fs.Offset, fs.Scenario, fs.Message)
}

// toRecord is the data of a fault record ConfigMap.
func toRecord(fs *v1alpha1.FaultStatus) map[string]string {
	return map[string]string{faultKeyPod: fs.Pod, faultKeyApplied: fs.AppliedTime.UTC().Format(time.RFC3339Nano),
		faultKeyOutcome: string(fs.Outcome), faultKeyMessage: fs.Message, faultKeyLateMs: strconv.FormatInt(fs.LateMs, 10)}
}

// fromRecord fills a status entry from a fault record ConfigMap.
func fromRecord(fs *v1alpha1.FaultStatus, rec *corev1.ConfigMap) {
	fs.Pod, fs.Message = rec.Data[faultKeyPod], rec.Data[faultKeyMessage]
	fs.Outcome = v1alpha1.FaultOutcome(rec.Data[faultKeyOutcome])
	if t, err := time.Parse(time.RFC3339Nano, rec.Data[faultKeyApplied]); err == nil {
		fs.AppliedTime = &metav1.MicroTime{Time: t}
	}
	fs.LateMs, _ = strconv.ParseInt(rec.Data[faultKeyLateMs], 10, 64)
}

// requeueForFaults shortens res so the next step runs when the next fault is due.
func (s *step) requeueForFaults(res ctrl.Result, now time.Time) ctrl.Result {
	if s.wake.IsZero() || finished(s.run.Status.Phase) {
		return res
	}
	d := max(s.wake.Sub(now), 10*time.Millisecond)
	if res.RequeueAfter == 0 || d < res.RequeueAfter {
		res.RequeueAfter = d
	}
	return res
}
