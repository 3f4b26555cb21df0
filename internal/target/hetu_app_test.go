package target

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// A HeTu target with the user's app (spec.app): config.yml names the mounted app file and
// its namespace; the ConfigMap key is mounted as app.py in a writable directory (HeTu writes
// logs next to it); the user's image replaces the default one. Without app the bench app is used.
func TestHeTuUserApp(t *testing.T) {
	spec := &v1alpha1.HeTuTarget{Image: "my/hetu-game:1", App: &v1alpha1.HeTuAppSpec{ConfigMapName: "game", Key: "server.py", Namespace: "game"},
		Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{}}}
	tg, err := New(&v1alpha1.TargetSpec{HeTu: spec}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := tg.Objects()
	m := byName(objs)
	cfg := m["ConfigMap/run-g1-hetu-config"].(*corev1.ConfigMap).Data["config.yml"]
	if !strings.Contains(cfg, "APP_FILE: /srv/hetu-app/app.py\nNAMESPACE: game\n") {
		t.Errorf("config.yml:\n%s", cfg)
	}
	pod := m["Deployment/run-g1-hetu"].(*appsv1.Deployment).Spec.Template.Spec
	c := pod.Containers[0]
	mounts := map[string]corev1.VolumeMount{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.Name] = vm
	}
	if c.Image != "my/hetu-game:1" || mounts["app"].MountPath != "/srv/hetu-app/app.py" || mounts["app"].SubPath != "app.py" ||
		mounts["app-dir"].MountPath != "/srv/hetu-app" || mounts["logs"].MountPath != "/srv/hetu-app/logs" {
		t.Errorf("image %s, mounts %+v", c.Image, c.VolumeMounts)
	}
	var app *corev1.ConfigMapVolumeSource
	for _, v := range pod.Volumes {
		if v.Name == "app" {
			app = v.ConfigMap
		}
	}
	if app == nil || app.Name != "game" || len(app.Items) != 1 || app.Items[0].Key != "server.py" || app.Items[0].Path != "app.py" {
		t.Errorf("app volume %+v", app)
	}
	spec.App, spec.Image = nil, ""
	tg, _ = New(&v1alpha1.TargetSpec{HeTu: spec}, opts(false))
	objs, _ = tg.Objects()
	if cfg := byName(objs)["ConfigMap/run-g1-hetu-config"].(*corev1.ConfigMap).Data["config.yml"]; !strings.Contains(cfg, "APP_FILE: /srv/hetu-bench/app.py\nNAMESPACE: bench\n") {
		t.Errorf("default config.yml:\n%s", cfg)
	}
}
