package target

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// loadWithHeTu loads config.yml with HeTu's own YAML loader (its ${VAR} and !eval handling)
// inside the cached HeTu runtime, with env set, and returns BACKENDS.main.master and servants
// as parsed by redis-py (the library HeTu connects with): host, port, username and password.
func loadWithHeTu(t *testing.T, config string, env map[string]string) map[string]any {
	t.Helper()
	cache := os.Getenv("BENCHRUN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "benchrun")
	}
	rootfs := filepath.Join(cache, "hetu-runtime", "rootfs")
	if _, err := os.Stat(filepath.Join(rootfs, ".benchrun-venv")); err != nil || os.Geteuid() != 0 || testing.Short() {
		t.Skip("needs root and the HeTu runtime (hack/hetu-runtime.sh)")
	}
	const script = `
import json, sys
from hetu.common.yamlloader import Loader
import yaml
from redis.connection import parse_url
cfg = yaml.load(sys.stdin, Loader)["BACKENDS"]["main"]
def parsed(u):
    p = parse_url(u)
    return {k: p.get(k) for k in ("host", "port", "username", "password", "connection_class")} | {"url_scheme": u.split(":", 1)[0]}
print(json.dumps({"master": parsed(cfg["master"]), "servants": [parsed(s) for s in cfg["servants"]]}, default=str))
`
	cmd := exec.Command("chroot", rootfs, "/opt/hetu/bin/python", "-c", script)
	cmd.Stdin = strings.NewReader(config)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("HeTu could not load the config: %v\n%s", err, stderr.String())
	}
	// HeTu prints a locale notice on import; the JSON is the last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got
}

// TestHeTuBackendURLsWithAnyPassword: a password with URL-special characters reaches redis-py
// intact through the config the operator generates (the kubelet's $(VAR) expansion would have
// pasted it raw into the URL).
func TestHeTuBackendURLsWithAnyPassword(t *testing.T) {
	tg, err := New(&v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Port: 2466,
		Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
			PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}}}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := tg.Objects()
	m := byName(objs)
	config := m["ConfigMap/run-g1-hetu-config"].(*corev1.ConfigMap).Data["config.yml"]
	env := map[string]string{}
	for _, e := range m["Deployment/run-g1-hetu"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	const password = `p@ss:w/rd#?%41"x`
	env[PasswordEnv] = password // what the kubelet sets from the Secret
	got := loadWithHeTu(t, config, env)
	master := got["master"].(map[string]any)
	if master["host"] != "run-g1-redis-master.ns.svc" || master["password"] != password || master["url_scheme"] != "redis" {
		t.Fatalf("master as redis-py sees it: %v", master)
	}
	servants := got["servants"].([]any)
	if len(servants) != 1 || servants[0].(map[string]any)["password"] != password {
		t.Fatalf("servants as redis-py sees them: %v", servants)
	}

	// Without a password the URL has no credentials.
	delete(env, PasswordEnv)
	if p := loadWithHeTu(t, config, env)["master"].(map[string]any)["password"]; p != nil {
		t.Fatalf("password %v without REDIS_PASSWORD", p)
	}
}
