package plan

import (
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/livemetrics"
)

// Live metrics: the run's URL wins over the default, credentials and the CA travel only as
// Secret references, and the labels name the run, namespace and target.
func TestRemoteWriteEnv(t *testing.T) {
	run := hetuRun()
	run.Namespace = "bench"
	inv, err := ForRunner(run, hetuEndpoints, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, on := inv.Env[livemetrics.EnvURL]; on {
		t.Fatal("remote write on without a URL")
	}
	inv, _ = ForRunner(run, hetuEndpoints, 0, 2, WithRemoteWriteDefault("http://prom:9090/api/v1/write"))
	if inv.Env[livemetrics.EnvURL] != "http://prom:9090/api/v1/write" || inv.Env[livemetrics.EnvRun] != "rpc" ||
		inv.Env[livemetrics.EnvNamespace] != "bench" || inv.Env[livemetrics.EnvTargetKind] != "hetu" {
		t.Fatalf("env %v", inv.Env)
	}
	two := int32(2)
	run.Spec.Collect.PrometheusRemoteWriteURL = "https://metrics.example/api/v1/write"
	run.Spec.Collect.PrometheusRemoteWrite = &v1alpha1.RemoteWriteSpec{
		BasicAuth: &v1alpha1.RemoteWriteBasicAuth{UsernameSecretRef: v1alpha1.SecretKeyRef{Name: "rw", Key: "user"},
			PasswordSecretRef: v1alpha1.SecretKeyRef{Name: "rw", Key: "password"}},
		TLS:             &v1alpha1.TLSSpec{CASecretRef: &v1alpha1.SecretKeyRef{Name: "rw", Key: "ca.crt"}, ServerName: "metrics"},
		IntervalSeconds: &two,
	}
	inv, _ = ForRunner(run, hetuEndpoints, 1, 2, WithRemoteWriteDefault("http://prom:9090/api/v1/write"))
	if inv.Env[livemetrics.EnvURL] != "https://metrics.example/api/v1/write" || inv.Env[livemetrics.EnvInterval] != "2s" ||
		inv.Env[livemetrics.EnvTLSServerName] != "metrics" {
		t.Fatalf("env %v", inv.Env)
	}
	secret := map[string]string{}
	for _, se := range inv.SecretEnv {
		secret[se.Name] = se.Secret.Name + "/" + se.Secret.Key
	}
	if secret[livemetrics.EnvUsername] != "rw/user" || secret[livemetrics.EnvPassword] != "rw/password" ||
		secret[livemetrics.EnvTLSCA] != "rw/ca.crt" {
		t.Fatalf("secret env %v", secret)
	}
	for k := range inv.Env {
		if strings.Contains(k, "PASSWORD") || strings.Contains(k, "TOKEN") || k == livemetrics.EnvTLSCA {
			t.Fatalf("%s as a plain env var", k)
		}
	}
}

func TestTargetKind(t *testing.T) {
	for _, c := range []struct {
		spec v1alpha1.TargetSpec
		want string
	}{
		{v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}}, "redis/single"},
		{v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Engine: v1alpha1.EngineValkey, Mode: v1alpha1.RedisHA}}, "valkey/ha"},
		{v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis}}, "external/redis"},
	} {
		if got := TargetKind(&v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{Target: c.spec}}); got != c.want {
			t.Errorf("%+v: %s want %s", c.spec, got, c.want)
		}
	}
}
