package controllers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// podNameExtra is the user-info extra the API server sets from a pod-bound token.
const podNameExtra = "authentication.kubernetes.io/pod-name"

// installIsolationPolicy installs config/admission's runner-isolation policy and binding.
func installIsolationPolicy(t *testing.T) {
	t.Helper()
	installAdmissionPolicy(t, "runner_isolation.yaml")
}

// installAdmissionPolicy installs the ValidatingAdmissionPolicy and its binding of
// config/admission/file (kept when they exist already) and returns them.
func installAdmissionPolicy(t *testing.T, file string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "admission", file))
	if err != nil {
		t.Fatal(err)
	}
	docs := yamlDocs(t, data)
	if len(docs) != 2 {
		t.Fatalf("%s: %d documents", file, len(docs))
	}
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict(docs[0], &policy); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &binding); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&policy, &binding} {
		if err := k8sClient.Create(context.Background(), obj); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return &policy, &binding
}

// impersonateRunner is a client (with watch) acting as a runner ServiceAccount from pod
// (no pod name when pod is "").
func impersonateRunner(t *testing.T, user, pod string) client.WithWatch {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	if pod != "" {
		c.Impersonate.Extra = map[string][]string{podNameExtra: {pod}}
	}
	cl, err := client.NewWithWatch(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// touch sets one data key of a ConfigMap as c (a read-modify-update, as the agent does).
func touch(e *env, c client.Client, name string, mutate func(*corev1.ConfigMap)) error {
	var cm corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &cm); err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["probe"] = time.Now().String()
	if mutate != nil {
		mutate(&cm)
	}
	return c.Update(e.ctx, &cm)
}

// TestRunnerIsolation: with config/admission's runner-isolation policy on the real
// kube-apiserver, runner 0's ServiceAccount from runner 0's pod may write runner 0's state
// and result ConfigMaps but not runner 1's, nor its own labels, nor anything without a pod
// name; then both real agents run the whole protocol (barrier watch included) under exactly
// those rights and the run succeeds.
func TestRunnerIsolation(t *testing.T) {
	e := newEnv(t)
	installIsolationPolicy(t)
	run := e.create(e.redisRun("iso", 2))
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	p := prefix(run, run.Generation)
	user := fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, runner.AccountName(p))
	pod := func(i int) string { return fmt.Sprintf("%s-%d-x7k2p", runner.JobName(p), i) }
	r0 := impersonateRunner(t, user, pod(0))
	waitAllowed(t, r0, authorizationv1.ResourceAttributes{Namespace: e.ns, Verb: "update", Resource: "configmaps", Name: runner.StateName(p, 0)})

	// The policy takes effect within a few seconds of its creation.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = touch(e, r0, runner.StateName(p, 1), nil); err != nil {
			break
		}
	}
	if !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "may be written only by the pod of runner 1") {
		t.Fatalf("runner 0 writing runner 1's state: want Forbidden by the policy, got %v", err)
	}
	if err := touch(e, r0, runner.ResultName(p, 1), nil); !kerrors.IsForbidden(err) {
		t.Errorf("runner 0 writing runner 1's result: want Forbidden, got %v", err)
	}
	if err := touch(e, r0, runner.StateName(p, 0), nil); err != nil {
		t.Errorf("runner 0 writing its own state: %v", err)
	}
	if err := touch(e, r0, runner.ResultName(p, 0), nil); err != nil {
		t.Errorf("runner 0 writing its own result: %v", err)
	}
	relabel := func(cm *corev1.ConfigMap) { cm.Labels["bench.benchrun.io/runner-index"] = "1" }
	if err := touch(e, r0, runner.ResultName(p, 0), relabel); !kerrors.IsForbidden(err) {
		t.Errorf("runner 0 relabelling its result as runner 1's: want Forbidden, got %v", err)
	}
	if err := touch(e, impersonateRunner(t, user, ""), runner.StateName(p, 0), nil); !kerrors.IsForbidden(err) {
		t.Errorf("runner account without a pod name: want Forbidden, got %v", err)
	}
	var cm corev1.ConfigMap
	cm.Namespace, cm.Name = e.ns, runner.StateName(p, 0)
	if err := r0.Delete(e.ctx, &cm); !kerrors.IsForbidden(err) {
		t.Errorf("runner 0 deleting its state: want Forbidden, got %v", err)
	}
	if err := r0.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.JobName(p)}, &corev1.ConfigMap{}); !kerrors.IsForbidden(err) {
		t.Errorf("runner 0 reading another ConfigMap: want Forbidden, got %v", err)
	}

	// The barrier is watched, not polled: a single-object watch is what the Role allows.
	for _, verb := range []string{"get", "list", "watch"} {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: e.ns, Verb: verb, Resource: "configmaps", Name: runner.BarrierName(p)}}}
		if err := r0.Create(e.ctx, r); err != nil || !r.Status.Allowed {
			t.Errorf("runner 0 may not %s its barrier: %v %s", verb, err, r.Status.Reason)
		}
	}
	w, err := r0.Watch(e.ctx, &corev1.ConfigMapList{}, client.InNamespace(e.ns), client.MatchingFields{"metadata.name": runner.BarrierName(p)})
	if err != nil {
		t.Fatalf("runner 0 watching its barrier: %v", err)
	}
	w.Stop()

	// Both agents, each as its own pod: ready, barrier watch, result, done.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		a := testAgent(t, e, run, i)
		a.Client, a.ResultName = impersonateRunner(t, user, pod(i)), runner.ResultName(p, i)
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = a.Run(context.Background()) }()
	}
	waitFor(t, func() bool {
		obs, err := e.r.observeRunners(e.ctx, e.r.newStep(e.get(run.Name)))
		return err == nil && obs.ready == 2
	})
	e.until(run.Name, v1alpha1.PhaseRunning)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	if len(run.Status.Results) != 2 || run.Status.Results[0].Calls != 200 {
		t.Fatalf("results %+v", run.Status.Results)
	}
}

// TestRunnerIsolationChartCopy: the chart installs the same policy as config/.
func TestRunnerIsolationChartCopy(t *testing.T) {
	a, err := os.ReadFile(filepath.Join("..", "config", "admission", "runner_isolation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "charts", "benchrun", "files", "runner-isolation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("charts/benchrun/files/runner-isolation.yaml differs from config/admission/runner_isolation.yaml: copy it")
	}
	policy, binding := renderedPolicy(t, "templates/runner-isolation.yaml")
	if policy.Name == "" || binding.Spec.PolicyName != policy.Name || len(policy.Spec.Validations) != 3 { // own index, labels, state size
		t.Fatalf("chart: policy %q with %d validations, binding to %q", policy.Name, len(policy.Spec.Validations), binding.Spec.PolicyName)
	}
}

// renderedPolicy renders the chart's template (a ValidatingAdmissionPolicy and its binding,
// as on a cluster that serves the API) and decodes both; it skips the test without helm.
func renderedPolicy(t *testing.T, template string) (admissionv1.ValidatingAdmissionPolicy, admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	helm := helmBinary()
	if helm == "" {
		t.Skip("no helm (make tools builds bin/helm): the chart's rendering is not checked")
	}
	out, err := exec.Command(helm, "template", "rel", filepath.Join("..", "charts", "benchrun"), "-n", "ns",
		"--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy", "--show-only", template).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	for _, doc := range yamlDocs(t, out) {
		var m metav1.TypeMeta
		_ = yaml.Unmarshal(doc, &m)
		switch m.Kind {
		case "ValidatingAdmissionPolicy":
			err = yaml.UnmarshalStrict(doc, &policy)
		case "ValidatingAdmissionPolicyBinding":
			err = yaml.UnmarshalStrict(doc, &binding)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return policy, binding
}
