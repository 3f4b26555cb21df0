package controllers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// maxWarningMessage bounds the Event message quoted in a condition (PodSecurity rejections
// list every violated rule and run to a kilobyte).
const maxWarningMessage = 400

// warningSlack accepts Events stamped a little before the run started (clock skew between
// the manager and the component reporting); older ones belong to an earlier run of the same
// name, whose objects had the same names.
const warningSlack = time.Minute

// targetWarning is the newest Warning Event on the target's workloads, their ReplicaSets or
// their pods since the run started, as "Kind/name Reason: message" ("" when there is none
// or the Events cannot be read). Events are listed through the API reader with a field
// selector, so the manager keeps no Event informer. The text is what Kubernetes components
// reported about those objects; the manager never reads Secrets.
func (r *BenchmarkRunReconciler) targetWarning(ctx context.Context, run *v1alpha1.BenchmarkRun, workloads []target.Workload) string {
	if len(workloads) == 0 {
		return ""
	}
	var list corev1.EventList
	if err := r.uncached().List(ctx, &list, client.InNamespace(run.Namespace), client.MatchingFields{"type": corev1.EventTypeWarning}); err != nil {
		logf.FromContext(ctx).Error(err, "listing Warning Events of the target")
		return ""
	}
	var since time.Time
	if run.Status.StartTime != nil {
		since = run.Status.StartTime.Add(-warningSlack)
	}
	var newest *corev1.Event
	var newestAt time.Time
	for i := range list.Items {
		ev := &list.Items[i]
		at := eventTime(ev)
		if ev.Type != corev1.EventTypeWarning || at.Before(since) || !involves(workloads, ev.InvolvedObject) {
			continue
		}
		if newest == nil || at.After(newestAt) {
			newest, newestAt = ev, at
		}
	}
	if newest == nil {
		return ""
	}
	count := newest.Count
	if newest.Series != nil && newest.Series.Count > count {
		count = newest.Series.Count
	}
	times := ""
	if count > 1 {
		times = fmt.Sprintf(" (%d times)", count)
	}
	return fmt.Sprintf("%s/%s %s%s: %s", newest.InvolvedObject.Kind, newest.InvolvedObject.Name, newest.Reason, times,
		oneLine(newest.Message, maxWarningMessage))
}

// eventTime is when an Event was last seen, whichever API wrote it (as kubectl sorts them):
// the series' last observation, the core/v1 last timestamp, the events.k8s.io event time,
// else its creation.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// Names of the pods and ReplicaSets of a workload, after "<name>-": a StatefulSet's pods
// are numbered, a Deployment's ReplicaSets end in the pod-template hash and their pods in
// one more random suffix.
var (
	ordinalSuffix = regexp.MustCompile(`^[0-9]+$`)
	hashSuffix    = regexp.MustCompile(`^[a-z0-9]+$`)
	podSuffix     = regexp.MustCompile(`^[a-z0-9]+-[a-z0-9]+$`)
)

// involves tells whether an Event's object is one of the workloads, or a pod or ReplicaSet
// of one.
func involves(workloads []target.Workload, obj corev1.ObjectReference) bool {
	for _, w := range workloads {
		if obj.Kind == w.Kind && obj.Name == w.Name {
			return true
		}
		rest, ok := strings.CutPrefix(obj.Name, w.Name+"-")
		if !ok {
			continue
		}
		switch {
		case w.Kind == "StatefulSet" && obj.Kind == "Pod":
			ok = ordinalSuffix.MatchString(rest)
		case w.Kind == "Deployment" && obj.Kind == "ReplicaSet":
			ok = hashSuffix.MatchString(rest)
		case w.Kind == "Deployment" && obj.Kind == "Pod":
			ok = podSuffix.MatchString(rest)
		default:
			ok = false
		}
		if ok {
			return true
		}
	}
	return false
}

// oneLine collapses whitespace runs (newlines included) to single spaces and cuts s to at
// most limit bytes on a rune boundary, marking the cut with "…".
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
