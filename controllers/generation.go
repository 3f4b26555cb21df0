package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// maxHistory bounds status.history.
const maxHistory = 10

// acceptGeneration starts the run of the current spec generation. A previous generation
// (finished, or stopped here because the spec changed under it) moves to status.history
// with its results, and its objects are deleted except its report: results of two specs
// are never mixed.
func (r *BenchmarkRunReconciler) acceptGeneration(ctx context.Context, s *step) error {
	run := s.run
	st := &run.Status
	operator, err := r.operatorInstalledNow() // before anything changes: a failed discovery is retried
	if err != nil {
		return fmt.Errorf("discovering the redis-operator's API: %w", err)
	}
	if st.Phase != "" && st.ObservedGeneration != 0 && st.ObservedGeneration != run.Generation {
		if err := r.archive(ctx, s); err != nil {
			return err
		}
	}
	*st = v1alpha1.BenchmarkRunStatus{History: st.History}
	st.ObservedGeneration = run.Generation
	st.Scenarios = int32(len(run.Spec.Load.Scenarios))
	st.StartTime = &s.now
	st.Runners = &v1alpha1.RunnersStatus{Desired: max(run.Spec.Load.Runners.Parallelism, 1)}
	st.Target = &v1alpha1.TargetStatus{Kind: "unknown"}
	s.setCondition(v1alpha1.ConditionSucceeded, metav1.ConditionUnknown, reasonWaiting, "the run has not finished")
	t, err := target.New(&run.Spec.Target, r.targetOptions(run, operator))
	if err != nil {
		s.setPhase(v1alpha1.PhasePending, v1alpha1.ReasonAccepted, "generation %d accepted", run.Generation)
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalidTarget, err.Error())
		if len(st.History) > 0 { // no Pending step follows: the previous generation's objects go now
			_, err := r.deleteGeneration(ctx, run, st.History[0].Generation, false)
			return err
		}
		return nil
	}
	st.Target = &v1alpha1.TargetStatus{Kind: t.Kind(), Provider: t.Provider()}
	s.setPhase(v1alpha1.PhasePending, v1alpha1.ReasonAccepted, "generation %d accepted: %s target (%s), %d scenarios, %d runners",
		run.Generation, t.Kind(), t.Provider(), st.Scenarios, st.Runners.Desired)
	return nil
}

// archive moves the current generation's outcome to the front of status.history. A
// generation stopped during its load first has what its runners stored merged (results and
// report in the record), before its objects go.
func (r *BenchmarkRunReconciler) archive(ctx context.Context, s *step) error {
	run, st := s.run, &s.run.Status
	wasFinished := finished(st.Phase)
	rec := v1alpha1.RunRecord{Generation: st.ObservedGeneration, Phase: st.Phase, StartTime: st.StartTime,
		CompletionTime: st.CompletionTime, Partial: st.Partial, Verdict: st.Verdict, Results: st.Results, Report: st.Report}
	if !finished(st.Phase) {
		if st.LoadStartTime != nil && apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionResultsCollected) == nil {
			// The collection of the stopped generation begins: its deadline counts from now.
			s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionUnknown, v1alpha1.ReasonCollecting,
				"merging what the runners of the superseded generation stored")
		}
		collected, err := r.collectStopped(ctx, run, s.now, false)
		if err != nil {
			return fmt.Errorf("%w: %w", errCollectRetry, err)
		}
		if collected != nil {
			rec.Results, rec.Report, rec.Partial, rec.Verdict = collected.Results, collected.Report, true, collected.Verdict
		}
		rec.Phase, rec.CompletionTime = v1alpha1.PhaseFailed, &s.now
		s.event(corev1.EventTypeWarning, v1alpha1.ReasonSuperseded, "generation %d stopped in phase %s: the spec changed", st.ObservedGeneration, st.Phase)
	}
	st.History = append([]v1alpha1.RunRecord{rec}, st.History...)
	for _, dropped := range st.History[min(len(st.History), maxHistory):] {
		if dropped.Report != nil {
			for _, name := range append([]string{dropped.Report.ConfigMapName}, dropped.Report.Parts...) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: name}}
				if err := r.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
		}
	}
	st.History = st.History[:min(len(st.History), maxHistory)]
	// A generation stopped unfinished keeps its objects until this record is stored
	// (dropSuperseded): deleted now, a status patch that fails would have the next step collect
	// it again from objects already gone. A finished one's record comes from its status.
	if wasFinished {
		if _, err := r.deleteGeneration(ctx, run, rec.Generation, false); err != nil {
			return err
		}
	}
	s.event(corev1.EventTypeNormal, v1alpha1.ReasonArchived, "generation %d (%s) moved to status.history; starting generation %d",
		rec.Generation, rec.Phase, run.Generation)
	return nil
}

// dropSuperseded deletes the objects of the generation before the current one, except its
// report, in the current generation's first step (Pending): after the status patch that stored
// its history record. Idempotent: a failure is retried by the next step.
func (r *BenchmarkRunReconciler) dropSuperseded(ctx context.Context, s *step) error {
	st := &s.run.Status
	if st.Phase != v1alpha1.PhasePending || len(st.History) == 0 || st.History[0].Generation >= st.ObservedGeneration {
		return nil
	}
	_, err := r.deleteGeneration(ctx, s.run, st.History[0].Generation, false)
	return err
}

// errCollectRetry marks a superseded generation's collection that is retried (an error that
// may heal, before its collect deadline): the step persists only when that collection began.
var errCollectRetry = errors.New("collecting the superseded generation")

// targetOptions are the target builder's options for the run's current generation.
func (r *BenchmarkRunReconciler) targetOptions(run *v1alpha1.BenchmarkRun, operator bool) target.Options {
	return target.Options{
		Namespace: run.Namespace,
		Prefix:    prefix(run, run.Generation),
		Labels:    runLabels(run, run.Generation),
		Images: target.Images{Redis: r.Images.Redis, Valkey: r.Images.Valkey, HeTu: r.Images.HeTu, Proxy: r.Images.Proxy,
			Agent: r.Images.Runner},
		OperatorInstalled:    operator,
		RedisRoleClusterRole: r.RedisRoleClusterRole,
	}
}

// buildTarget rebuilds the run's Target with the provider chosen when the generation was
// accepted (status.target.provider), so installing the operator mid-run changes nothing.
func (r *BenchmarkRunReconciler) buildTarget(run *v1alpha1.BenchmarkRun) (target.Target, error) {
	operator := run.Status.Target != nil && strings.HasSuffix(run.Status.Target.Provider, string(v1alpha1.ProviderRedisOperator))
	return target.New(&run.Spec.Target, r.targetOptions(run, operator))
}
