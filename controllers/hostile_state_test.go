package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestRunnerStateConfigMapBounded: with config/admission's runner-isolation policy on the
// real kube-apiserver, a runner (its token, from its own pod) cannot grow its state
// ConfigMap, which the manager caches, to 1 MiB: data over 96 KiB besides the invocation,
// binaryData, annotations and a changed invocation are refused, while a full progress
// document (64 KiB) and the usual keys are let through. Its result ConfigMap (not cached)
// still takes a large document. On main the 1 MiB write was accepted.
func TestRunnerStateConfigMapBounded(t *testing.T) {
	e := newEnv(t)
	installIsolationPolicy(t)
	run := e.create(e.redisRun("big", 1))
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	p := prefix(run, run.Generation)
	user := fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, runner.AccountName(p))
	r0 := impersonateRunner(t, user, fmt.Sprintf("%s-0-x7k2p", runner.JobName(p)))
	state := runner.StateName(p, 0)
	grow := func(cm *corev1.ConfigMap) { cm.Data["reason"] = strings.Repeat("x", 1<<20-4096) }
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = touch(e, r0, state, grow); err != nil {
			break
		}
	}
	if !kerrors.IsRequestEntityTooLargeError(err) || !strings.Contains(err.Error(), "cached by the manager") {
		t.Fatalf("runner 0 growing its state ConfigMap to 1 MiB: want refused by the policy, got %v", err)
	}
	refused := map[string]func(*corev1.ConfigMap){
		"97 KiB over two keys": func(cm *corev1.ConfigMap) {
			cm.Data[progress.Key] = strings.Repeat("x", 64<<10)
			cm.Data["reason"] = strings.Repeat("é", 16<<10+1)
		},
		"binaryData":  func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"x": []byte("y")} },
		"annotations": func(cm *corev1.ConfigMap) { cm.Annotations = map[string]string{"x": "y"} },
		"invocation":  func(cm *corev1.ConfigMap) { cm.Data[runner.KeyInvocation] = "{}" },
	}
	for name, mutate := range refused {
		if err := touch(e, r0, state, mutate); !kerrors.IsRequestEntityTooLargeError(err) {
			t.Errorf("%s: want refused, got %v", name, err)
		}
	}
	full := func(cm *corev1.ConfigMap) {
		cm.Data[progress.Key] = strings.Repeat("x", progress.MaxBytes)
		cm.Data[runner.KeyState], cm.Data[runner.KeyReason] = runner.StateFailed, strings.Repeat("r", runner.MaxReasonBytes)
		cm.Data[runner.KeyUsage] = `{"cpuSeconds":1,"wallSeconds":1,"memoryPeakBytes":1}`
	}
	if err := touch(e, r0, state, full); err != nil {
		t.Errorf("a full progress document and the usual keys: %v", err)
	}
	large := func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{runner.KeyResult: make([]byte, 900<<10)} }
	if err := touch(e, r0, runner.ResultName(p, 0), large); err != nil {
		t.Errorf("a 900 KiB result in the (uncached) result ConfigMap: %v", err)
	}
}
