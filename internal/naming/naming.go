// Package naming holds the conventions every benchrun package shares: the labels that select
// a run's objects, how object names are built so they stay valid DNS labels, and the
// restricted security contexts of every pod benchrun creates.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// Labels put on every object of a run; they select a generation's objects for teardown.
const (
	// LabelRun is the BenchmarkRun's name (ShortName of it).
	LabelRun = "bench.benchrun.io/run"
	// LabelGeneration is the spec generation the object belongs to.
	LabelGeneration = "bench.benchrun.io/generation"
	// LabelComponent is the object's role: redis-master, redis-replica, sentinel, proxy, hetu, runner...
	LabelComponent = "bench.benchrun.io/component"
	// LabelRunnerSet marks the runner pods of one generation (the anti-affinity selects on it).
	LabelRunnerSet = "bench.benchrun.io/runner-set"
	// LabelRunnerIndex is a runner's index on its ConfigMaps.
	LabelRunnerIndex = "bench.benchrun.io/runner-index"
)

// ComponentReport is the component label value of report ConfigMaps (report.md, tables,
// parts): they outlive cleanup, and the manager never caches them (read uncached).
const ComponentReport = "report"

// Name joins prefix and suffix into an object name that is a valid DNS label (at most 63
// characters; longer names are cut and end with a hash so they stay unique).
func Name(prefix, suffix string) string {
	return cut(prefix+"-"+suffix, 63)
}

// ShortName is a run name cut to 30 characters (with a hash when cut), for object names
// and label values.
func ShortName(name string) string { return cut(name, 30) }

// cut keeps s when it has at most n characters, else its first n-9 (without trailing '-'
// or '.') and an 8-digit hash of the whole.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:n-9], "-.") + "-" + hex.EncodeToString(sum[:])[:8]
}

// Prefix starts the names of every object of a run generation, e.g. "myrun-g2".
func Prefix(run string, generation int64) string {
	return fmt.Sprintf("%s-g%d", ShortName(run), generation)
}

// RunLabels select the objects of a run generation.
func RunLabels(run string, generation int64) map[string]string {
	return map[string]string{LabelRun: ShortName(run), LabelGeneration: fmt.Sprint(generation)}
}

// PodSecurityContext is the restricted Pod Security Standard pod context every benchrun pod uses.
func PodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](65532),
		RunAsGroup:     ptr.To[int64](65532),
		FSGroup:        ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// ContainerSecurityContext is the restricted container context: no privilege escalation, no
// capabilities, a read-only root filesystem (every container writes only to emptyDir mounts).
func ContainerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// DefaultResources are the requests of a target or runner container whose spec sets no
// resources: explicit, small enough for a one-node test cluster, and no limits, so a benchmark
// is never throttled or OOM-killed by a default (spec.*.resources sets both).
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
}
