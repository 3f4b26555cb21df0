package runner

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// Runner pods: read-only root filesystem with /tmp an emptyDir, explicit default requests,
// and spec.load.runners.resources replacing them.
func TestJobHardening(t *testing.T) {
	o := Options{Namespace: "ns", Prefix: "r-g1", Image: "runner:t", Spec: v1alpha1.RunnerSpec{Parallelism: 2}}
	c := Job(o).Spec.Template.Spec.Containers[0]
	if !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) {
		t.Error("runner root filesystem not read-only")
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/tmp" {
		t.Errorf("runner mounts %+v, want /tmp", c.VolumeMounts)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("runner requests %+v", c.Resources)
	}
	o.Spec.Resources = &v1alpha1.ResourceRequirements{Limits: v1alpha1.ResourceList{corev1.ResourceCPU: v1alpha1.Quantity{IntOrString: intstr.FromString("2")}}}
	if got := Job(o).Spec.Template.Spec.Containers[0].Resources; !got.Limits.Cpu().Equal(resource.MustParse("2")) || got.Requests != nil {
		t.Errorf("spec resources not used: %+v", got)
	}
}
