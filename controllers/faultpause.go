package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/pause"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/target"
)

// Pause faults (action pause): the pods of a role a pause fault names share one process
// namespace (shareProcessNamespace, set on their templates when the run has such a fault), so
// the server is not PID 1 of its namespace (the kernel ignores SIGSTOP sent to a namespace's
// init from inside it). When the fault is due the manager adds an ephemeral container running
// `benchrun-runner pause` (the runner image, the target container's UID, restricted security
// context, no token) that stops the server container's processes, sleeps for the duration
// and continues them: the resume is the pod's own, whatever happens to the manager. The
// container's termination message says when it stopped and continued them; collection reads
// it into status.faults[].pausedTime/resumedTime.

// +kubebuilder:rbac:groups="",resources=pods/ephemeralcontainers,verbs=patch

// pauseContainerPrefix names the ephemeral container of pause fault i: prefix + i.
const pauseContainerPrefix = "benchrun-pause-"

// sharePIDs sets shareProcessNamespace on the pod templates of objs that serve a role a
// pause fault of run names: the workloads whose pods the role's Service selects (for Redis
// servers whatever their current role label, since master and replica swap in a failover).
func sharePIDs(run *v1alpha1.BenchmarkRun, t target.Target, objs []client.Object) {
	f, ok := t.(target.Faultable)
	if !ok {
		return
	}
	var selectors []labels.Selector
	for _, fault := range run.Spec.Faults {
		if fault.Action != v1alpha1.FaultPause {
			continue
		}
		name := f.FaultService(fault.Role)
		for _, obj := range objs {
			if svc, ok := obj.(*corev1.Service); ok && svc.Name == name && len(svc.Spec.Selector) > 0 {
				sel := labels.Set{}
				for k, v := range svc.Spec.Selector {
					if k != redisrole.Label {
						sel[k] = v
					}
				}
				selectors = append(selectors, labels.SelectorFromSet(sel))
			}
		}
	}
	for _, obj := range objs {
		var tpl *corev1.PodTemplateSpec
		switch w := obj.(type) {
		case *appsv1.StatefulSet:
			tpl = &w.Spec.Template
		case *appsv1.Deployment:
			tpl = &w.Spec.Template
		default:
			continue
		}
		for _, sel := range selectors {
			if sel.Matches(labels.Set(tpl.Labels)) {
				tpl.Spec.ShareProcessNamespace = ptr.To(true)
			}
		}
	}
}

// startPause starts pause fault i on pod: it adds the ephemeral container that stops the
// pod's server container (its first) for d. The patch names the pod's UID, so a pod
// replaced under the same name meanwhile is not the one paused.
func (r *BenchmarkRunReconciler) startPause(ctx context.Context, pod *corev1.Pod, i int, d time.Duration) error {
	ec, err := r.pauseContainer(pod, i, d)
	if err != nil {
		return err
	}
	patch := map[string]any{"metadata": map[string]any{"uid": pod.UID},
		"spec": map[string]any{"ephemeralContainers": []corev1.EphemeralContainer{*ec}}}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return r.SubResource("ephemeralcontainers").Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, b))
}

// pauseContainer is the ephemeral container of pause fault i on pod; an error says why the
// pod cannot be paused.
func (r *BenchmarkRunReconciler) pauseContainer(pod *corev1.Pod, i int, d time.Duration) (*corev1.EphemeralContainer, error) {
	if pod.Spec.ShareProcessNamespace == nil || !*pod.Spec.ShareProcessNamespace {
		return nil, fmt.Errorf("pod %s does not share its process namespace, so its server is PID 1 of its container and "+
			"ignores SIGSTOP from inside the pod (pods benchrun deploys share it when the run has a pause fault; "+
			"the redis-operator's pods do not)", pod.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, fmt.Errorf("pod %s has no container", pod.Name)
	}
	server := pod.Spec.Containers[0]
	id := ""
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == server.Name && cs.State.Running != nil {
			_, id, _ = strings.Cut(cs.ContainerID, "://") // containerd://<id>
		}
	}
	if id == "" {
		return nil, fmt.Errorf("container %s of pod %s is not running", server.Name, pod.Name)
	}
	sc := naming.ContainerSecurityContext()
	sc.RunAsUser = containerUID(pod, &server) // signals need the same UID, no capability
	return &corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: fmt.Sprintf("%s%d", pauseContainerPrefix, i), Image: r.Images.Runner, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:                  []string{"benchrun-runner", "pause", "--container-id", id, "--for", d.String()},
		SecurityContext:          sc,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}}, nil
}

// containerUID is the UID c runs as: its own runAsUser, else the pod's; nil when neither
// sets one (the image's user, the same for the pause container only if it is the same).
func containerUID(pod *corev1.Pod, c *corev1.Container) *int64 {
	if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
		return c.SecurityContext.RunAsUser
	}
	if pod.Spec.SecurityContext != nil {
		return pod.Spec.SecurityContext.RunAsUser
	}
	return nil
}

// pauseDone describes a started pause.
func pauseDone(pod string, d time.Duration) string {
	return fmt.Sprintf("pod %s: its server's processes stopped for %v by the ephemeral container (SIGSTOP, then SIGCONT)", pod, d)
}

// readPauses adds to each applied pause of status.faults what its pause container reported
// (pausedTime, resumedTime), or fails the fault when the container reported an error or was
// never added. Pods gone or containers not ended yet leave the entry as it is.
func (r *BenchmarkRunReconciler) readPauses(ctx context.Context, run *v1alpha1.BenchmarkRun) {
	for i := range run.Status.Faults {
		fs := &run.Status.Faults[i]
		if fs.Action != v1alpha1.FaultPause || fs.Outcome != v1alpha1.FaultApplied || fs.Pod == "" || fs.PausedTime != nil {
			continue
		}
		var pod corev1.Pod
		if err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: fs.Pod}, &pod); err != nil {
			continue
		}
		name := fmt.Sprintf("%s%d", pauseContainerPrefix, fs.Index)
		if !slices.ContainsFunc(pod.Spec.EphemeralContainers, func(c corev1.EphemeralContainer) bool { return c.Name == name }) {
			fs.Outcome = v1alpha1.FaultFailed // recorded, then the manager stopped before its patch
			fs.Message = fmt.Sprintf("pod %s has no pause container %s: the manager stopped between recording the fault and adding it", fs.Pod, name)
			continue
		}
		for _, cs := range pod.Status.EphemeralContainerStatuses {
			term := cs.State.Terminated
			if cs.Name != name || term == nil {
				continue
			}
			if rep, ok := pause.ParseMessage(term.Message); ok {
				fs.PausedTime = &metav1.MicroTime{Time: time.UnixMicro(rep.PausedUnixMicro)}
				fs.ResumedTime = &metav1.MicroTime{Time: time.UnixMicro(rep.ResumedUnixMicro)}
			} else if term.ExitCode != 0 {
				fs.Outcome = v1alpha1.FaultFailed
				fs.Message = boundText(fmt.Sprintf("the pause container of pod %s exited %d: %s", fs.Pod, term.ExitCode, term.Message), 512)
			}
		}
	}
}
