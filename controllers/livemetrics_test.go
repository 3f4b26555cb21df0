package controllers

import (
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/livemetrics"
)

// TestRemoteWriteRunnerEnv: the manager's default remote-write URL reaches a run that sets
// none, the run's own URL wins, and the remote-write credentials reach the runner pods only as
// secretKeyRef variables (never in the Job, the state ConfigMaps or status).
func TestRemoteWriteRunnerEnv(t *testing.T) {
	e := newEnv(t)
	e.r.RemoteWriteURL = "http://prometheus.monitoring:9090/api/v1/write"
	plain := e.startedRun(e.redisRun("plain", 1))
	own := e.redisRun("own", 1)
	own.Spec.Collect.PrometheusRemoteWriteURL = "https://metrics.example/api/v1/write"
	own.Spec.Collect.PrometheusRemoteWrite = &v1alpha1.RemoteWriteSpec{
		BearerTokenSecretRef: &v1alpha1.SecretKeyRef{Name: "prom-write", Key: "token"},
		TLS:                  &v1alpha1.TLSSpec{CASecretRef: &v1alpha1.SecretKeyRef{Name: "prom-write", Key: "ca.crt"}},
	}
	own = e.startedRun(own)

	var cms corev1.ConfigMapList
	if err := k8sClient.List(e.ctx, &cms, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	invocations := map[string]string{} // run → its state ConfigMaps' text
	for _, cm := range cms.Items {
		b, _ := json.Marshal(cm.Data)
		for _, run := range []string{plain.Name, own.Name} {
			if strings.HasPrefix(cm.Name, run+"-") {
				invocations[run] += string(b)
			}
		}
	}
	if !strings.Contains(invocations["plain"], "http://prometheus.monitoring:9090/api/v1/write") ||
		!strings.Contains(invocations["own"], "https://metrics.example/api/v1/write") ||
		strings.Contains(invocations["own"], "prometheus.monitoring") {
		t.Fatalf("remote-write URLs in the runners' invocations: %v", invocations)
	}
	var jobs batchv1.JobList
	if err := k8sClient.List(e.ctx, &jobs, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, j := range jobs.Items {
		for _, v := range j.Spec.Template.Spec.Containers[0].Env {
			if v.Name == livemetrics.EnvBearerToken || v.Name == livemetrics.EnvTLSCA {
				if v.Value != "" || v.ValueFrom == nil || v.ValueFrom.SecretKeyRef == nil || v.ValueFrom.SecretKeyRef.Name != "prom-write" {
					t.Errorf("job %s: %s is not a secretKeyRef: %+v", j.Name, v.Name, v)
				}
				found++
			}
		}
	}
	if found != 2 {
		t.Fatalf("%d remote-write secret env vars in the jobs, want 2 (token and CA of run own)", found)
	}
}
