package controllers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// applyFault applies fault i (due at due) once: it resolves the role's pod, records the fault
// (create-only ConfigMap), then deletes the pod. When the record exists already (applied in
// an earlier step whose status patch was lost) it only rebuilds the status entry from it.
func (r *BenchmarkRunReconciler) applyFault(ctx context.Context, s *step, i int, due time.Time) (v1alpha1.FaultStatus, error) {
	run, f := s.run, s.run.Spec.Faults[i]
	fs := lifecycle.FaultEntry(i, f)
	var rec corev1.ConfigMap
	key := client.ObjectKey{Namespace: run.Namespace, Name: faultRecordName(run, i)}
	if err := r.uncached().Get(ctx, key, &rec); err == nil {
		fromRecord(&fs, &rec)
		s.faultEvent(&fs)
		return fs, nil
	} else if !kerrors.IsNotFound(err) {
		return fs, err
	}
	pod, podErr := r.faultPod(run, f.Role, ctx)
	now := r.now()
	fs.AppliedTime = &metav1.MicroTime{Time: now}
	fs.LateMs = max(0, now.Sub(due).Milliseconds())
	fs.Outcome = v1alpha1.FaultApplied
	if podErr == nil && f.Action == v1alpha1.FaultPause {
		_, podErr = r.pauseContainer(pod, i, f.Duration.Duration) // faultpause.go: can it be paused?
	}
	if podErr != nil {
		fs.Outcome, fs.Message = v1alpha1.FaultFailed, boundText(podErr.Error(), 512)
		pod = nil
	} else {
		fs.Pod = pod.Name
		fs.Message = faultDone(f, pod.Name)
	}
	rec = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
		Labels: runLabels(run, run.Generation)}, Data: toRecord(&fs)}
	rec.Labels[naming.LabelComponent] = componentFault
	if err := ctrl.SetControllerReference(run, &rec, r.Scheme); err != nil {
		return fs, err
	}
	if err := r.Create(ctx, &rec); err != nil {
		return fs, fmt.Errorf("recording fault %d: %w", i, err) // AlreadyExists: another worker won; next step reads it
	}
	if pod != nil {
		if err := r.actOnPod(ctx, pod, i, f); err != nil {
			fs.Outcome, fs.Message = v1alpha1.FaultFailed, boundText(fmt.Sprintf("%s pod %s: %v", f.Action, pod.Name, err), 512)
			rec.Data = toRecord(&fs)
			_ = r.Update(ctx, &rec) // best effort: the status below says it anyway
		}
	}
	s.faultEvent(&fs)
	return fs, nil
}

// actOnPod applies fault i to pod: starts its pause, or deletes it.
func (r *BenchmarkRunReconciler) actOnPod(ctx context.Context, pod *corev1.Pod, i int, f v1alpha1.Fault) error {
	if f.Action == v1alpha1.FaultPause {
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
