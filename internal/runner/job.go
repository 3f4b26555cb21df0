package runner

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// ResultFile is where k6's benchrun output writes the document inside the pod.
const ResultFile = "/tmp/benchrun/result.json"

// Options are what the runner objects are built from.
type Options struct {
	// Namespace is the BenchmarkRun's namespace.
	Namespace string
	// Prefix starts every object name; at most 45 characters so names stay DNS labels.
	Prefix string
	// Labels go on every object and pod.
	Labels map[string]string
	// Image is the runner image (benchrun-runner agent + k6 + scripts).
	Image string
	// Spec is the runner placement and count.
	Spec v1alpha1.RunnerSpec
	// Secrets become secretKeyRef environment variables of the runner pods (name → key).
	Secrets map[string]v1alpha1.SecretKeyRef
	// ActiveDeadline stops the runner pods even when the operator is gone (0: none).
	ActiveDeadline time.Duration
}

// JobName is the runner Job's name.
func JobName(prefix string) string { return prefix + "-runners" }

// BarrierName is the start barrier ConfigMap's name.
func BarrierName(prefix string) string { return prefix + "-barrier" }

// StatePrefix starts every runner state ConfigMap name; the index follows.
func StatePrefix(prefix string) string { return prefix + "-runner-" }

// StateName is runner i's state ConfigMap name.
func StateName(prefix string, i int) string { return fmt.Sprintf("%s%d", StatePrefix(prefix), i) }

// ResultPrefix starts every runner result ConfigMap name; the index follows.
func ResultPrefix(prefix string) string { return prefix + "-result-" }

// ResultName is runner i's result ConfigMap name.
func ResultName(prefix string, i int) string { return fmt.Sprintf("%s%d", ResultPrefix(prefix), i) }

// AccountName names the runners' ServiceAccount, Role and RoleBinding.
func AccountName(prefix string) string { return prefix + "-runner" }

// count is the number of runners.
func (o Options) count() int { return int(max(o.Spec.Parallelism, 1)) }

// labels returns o.Labels plus the runner component and set.
func (o Options) labels() map[string]string {
	l := map[string]string{naming.LabelComponent: "runner", naming.LabelRunnerSet: o.Prefix}
	for k, v := range o.Labels {
		l[k] = v
	}
	return l
}

// meta is the ObjectMeta of a runner object.
func (o Options) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels()}
}

// StateConfigMaps are the per-runner state ConfigMaps holding each runner's invocation.
func StateConfigMaps(o Options, invocations []string) []*corev1.ConfigMap {
	cms := make([]*corev1.ConfigMap, len(invocations))
	for i, inv := range invocations {
		cms[i] = &corev1.ConfigMap{ObjectMeta: o.meta(StateName(o.Prefix, i)), Data: map[string]string{KeyInvocation: inv}}
		cms[i].Labels[naming.LabelRunnerIndex] = fmt.Sprint(i)
	}
	return cms
}

// ResultConfigMaps are the per-runner result ConfigMaps, empty until each runner stores its
// document; their component label keeps them out of the manager's cache.
func ResultConfigMaps(o Options) []*corev1.ConfigMap {
	cms := make([]*corev1.ConfigMap, o.count())
	for i := range cms {
		cms[i] = &corev1.ConfigMap{ObjectMeta: o.meta(ResultName(o.Prefix, i))}
		cms[i].Labels[naming.LabelComponent] = ComponentResult
		cms[i].Labels[naming.LabelRunnerIndex] = fmt.Sprint(i)
	}
	return cms
}

// Barrier is the start barrier ConfigMap (startAt empty until the operator releases it).
func Barrier(o Options) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: o.meta(BarrierName(o.Prefix)), Data: map[string]string{}}
}

// Access are the runners' ServiceAccount, Role and RoleBinding: read and watch the barrier,
// read and update their own state and result ConfigMaps, nothing else. (Which runner may
// write which of them is enforced by the runner-isolation admission policy.)
func Access(o Options) []client.Object {
	name := AccountName(o.Prefix)
	states := make([]string, 0, 2*o.count())
	for i := range o.count() {
		states = append(states, StateName(o.Prefix, i), ResultName(o.Prefix, i))
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: o.meta(name), AutomountServiceAccountToken: ptr.To(true)},
		&rbacv1.Role{ObjectMeta: o.meta(name), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{BarrierName(o.Prefix)}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: states, Verbs: []string{"get", "update", "patch"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: o.meta(name),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: o.Namespace}}},
	}
}

// Job is the Indexed Job of runner pods. Each index may fail once without failing the
// others (backoffLimitPerIndex 0): the surviving runners finish and store their results,
// and the operator reports the run Failed with partial results.
func Job(o Options) *batchv1.Job {
	n := int32(o.count())
	spec := o.Spec
	labels := o.labels()
	env := []corev1.EnvVar{
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	names := make([]string, 0, len(o.Secrets))
	for name := range o.Secrets {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ref := o.Secrets[name]
		env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key}}})
	}
	res := naming.DefaultResources()
	if spec.Resources != nil {
		res = spec.Resources.Core()
	}
	affinity := spec.Affinity.DeepCopy()
	if spec.OnePerNode {
		if affinity == nil {
			affinity = &corev1.Affinity{}
		}
		if affinity.PodAntiAffinity == nil {
			affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelRunnerSet: o.Prefix}}})
	}
	pod := corev1.PodSpec{
		ServiceAccountName:            AccountName(o.Prefix),
		RestartPolicy:                 corev1.RestartPolicyNever,
		SecurityContext:               naming.PodSecurityContext(),
		EnableServiceLinks:            ptr.To(false),
		NodeSelector:                  spec.NodeSelector,
		Tolerations:                   spec.Tolerations,
		Affinity:                      affinity,
		PriorityClassName:             spec.PriorityClassName,
		TerminationGracePeriodSeconds: ptr.To[int64](60),
		Containers: []corev1.Container{{
			Name: "runner", Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"benchrun-runner"},
			Args: []string{"--namespace=$(POD_NAMESPACE)", "--state-prefix=" + StatePrefix(o.Prefix),
				"--result-prefix=" + ResultPrefix(o.Prefix), "--barrier=" + BarrierName(o.Prefix), "--result-file=" + ResultFile},
			Env:             env,
			Resources:       res,
			SecurityContext: naming.ContainerSecurityContext(),
			VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
		}},
		Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	job := &batchv1.Job{ObjectMeta: o.meta(JobName(o.Prefix)), Spec: batchv1.JobSpec{
		CompletionMode:       ptr.To(batchv1.IndexedCompletion),
		Completions:          ptr.To(n),
		Parallelism:          ptr.To(n),
		BackoffLimitPerIndex: ptr.To[int32](0),
		Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
	}}
	if o.ActiveDeadline > 0 {
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64(o.ActiveDeadline.Seconds()))
	}
	return job
}
