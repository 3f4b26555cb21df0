package controllers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/naming"
)

// The manager account and runner image config/admission/pause_containers.yaml names.
const (
	pauseManagerUser  = "system:serviceaccount:benchrun-system:benchrun-controller-manager"
	pauseRunnerImage  = "ghcr.io/benchrun/benchrun-runner:0.2.0"
	pausePolicyConfig = "pause_containers.yaml"
)

// installPausePolicy installs config/admission's pause-containers policy and binding, deleted
// when t ends.
func installPausePolicy(t *testing.T) {
	t.Helper()
	policy, binding := installAdmissionPolicy(t, pausePolicyConfig)
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), policy)
	})
}

// pausablePod is a running pod sharing its process namespace, with labels and a volume v.
func (e *env) pausablePod(name string, labels map[string]string) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels}, Spec: corev1.PodSpec{
		ShareProcessNamespace: ptr.To(true), SecurityContext: naming.PodSecurityContext(),
		Containers: []corev1.Container{{Name: "redis", Image: "redis:t", SecurityContext: naming.ContainerSecurityContext()}},
		Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	e.runningContainers(pod)
	return pod
}

// TestPauseContainersPolicy: with config/admission's pause-containers policy on the real
// kube-apiserver, the manager's account may add its pause container to a run's pod, but not
// to another pod, nor a container of another image, command, or with volumes; other users
// (kubectl debug) are not concerned. Also: the chart's copy of the policy is the same file.
func TestPauseContainersPolicy(t *testing.T) {
	checkPausePolicyCopy(t)
	installPausePolicy(t)
	e := newEnv(t)
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: pauseManagerUser, Groups: []string{"system:masters"}}
	mgr, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	r := e.reconciler(mgr)
	r.Images.Runner = pauseRunnerImage
	other := e.pausablePod("not-a-run", map[string]string{"app": "x"})
	deadline := time.Now().Add(20 * time.Second) // until the policy is in force
	for err = r.startPause(e.ctx, other, 0, time.Second); err == nil && time.Now().Before(deadline); err = r.startPause(e.ctx, other, 1, time.Second) {
		time.Sleep(200 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "only to pods of a run") {
		t.Fatalf("pause container added to a pod of no run: %v", err)
	}
	runPod := e.pausablePod("run-pod", map[string]string{naming.LabelRun: "r"})
	if err := r.startPause(e.ctx, runPod, 0, time.Second); err != nil {
		t.Fatalf("the manager's pause container refused: %v", err)
	}
	r.Images.Runner = "evil:1"
	if err := r.startPause(e.ctx, runPod, 1, time.Second); err == nil || !strings.Contains(err.Error(), "may add only its pause container") {
		t.Errorf("a pause container of another image: %v", err)
	}
	for name, ec := range map[string]string{
		"shell":  `{"name":"x1","image":"` + pauseRunnerImage + `","command":["sh","-c","cat /proc/1/environ"]}`,
		"volume": `{"name":"x2","image":"` + pauseRunnerImage + `","command":["benchrun-runner","pause"],"volumeMounts":[{"name":"v","mountPath":"/v"}],"securityContext":{"allowPrivilegeEscalation":false,"runAsNonRoot":true}}`,
	} {
		patch := client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"ephemeralContainers":[`+ec+`]}}`))
		if err := mgr.SubResource("ephemeralcontainers").Patch(e.ctx, runPod, patch); err == nil || !strings.Contains(err.Error(), "may add only") {
			t.Errorf("%s container added by the manager: %v", name, err)
		}
	}
	debug := client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox","command":["sh"],"securityContext":{"allowPrivilegeEscalation":false,"runAsNonRoot":true,"capabilities":{"drop":["ALL"]},"seccompProfile":{"type":"RuntimeDefault"}}}]}}`))
	if err := k8sClient.SubResource("ephemeralcontainers").Patch(e.ctx, other, debug); err != nil {
		t.Errorf("a user's debug container refused: %v", err)
	}
}

// checkPausePolicyCopy: the chart installs the same policy file as config/.
func checkPausePolicyCopy(t *testing.T) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join("..", "config", "admission", pausePolicyConfig))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "charts", "benchrun", "files", "pause-containers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("charts/benchrun/files/pause-containers.yaml differs from config/admission/pause_containers.yaml: copy it")
	}
}
