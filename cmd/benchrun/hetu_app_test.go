package main

import (
	"path/filepath"
	"testing"
)

const hetuAppRun = `apiVersion: v1
kind: ConfigMap
metadata:
  name: game-app
data:
  game.py: |
    import numpy as np
    import hetu

    @hetu.define_component(namespace="game", volatile=True, permission=hetu.Permission.EVERYBODY)
    class Score(hetu.BaseComponent):
        points: np.int32 = hetu.property_field(0)

    # HeTu serves a namespace only when it has a system (an endpoint alone is not enough).
    @hetu.define_system(namespace="game", components=(Score,), permission=hetu.Permission.EVERYBODY)
    async def add(ctx: hetu.SystemContext, a, b):
        return hetu.ResponseToClient([a + b])

    @hetu.define_endpoint(namespace="game", permission=hetu.Permission.EVERYBODY)
    async def greet(ctx: hetu.EndpointContext, name):
        return hetu.ResponseToClient(["hi " + name[:2]])
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-hetu-app
spec:
  target:
    hetu:
      app: {configMapName: game-app, key: game.py, namespace: game}
      backend:
        redis:
          mode: single
  load:
    workers: 1
    tasksPerWorker: 2
    duration: 2s
    scenarios:
    - name: add
      type: hetu.call
      keySpace: 1
      hetuCall: {rpc: add, args: ['__rand_int__', '41']}
    - name: greet
      type: hetu.call
      hetuCall: {rpc: greet, args: ["'42__rand_str__'"]}
`

// TestRunHeTuUserApp runs the user's own HeTu app (hetu.app: a ConfigMap of the run file,
// its own namespace) with hetu.call scenarios through `benchrun run` on a real HeTu server:
// add(__rand_int__ below keySpace 1, 41) returns 42 every call (arguments sent as numbers),
// greet('42...') gets a string argument and returns "hi 42".
func TestRunHeTuUserApp(t *testing.T) {
	needRedis(t)
	needHeTu(t)
	file := writeFile(t, "hetu-app.yaml", hetuAppRun)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, c.stdout.String())
	}
	doc := completeDoc(t, out, 2)
	for _, s := range doc.Scenarios {
		want := map[string]string{"add": "42", "greet": "hi 42"}[s.Name]
		if s.ReturnValues[want] != s.Calls || s.Type != "hetu."+s.Name {
			t.Errorf("%s (%s): return values %v, want all %q", s.Name, s.Type, s.ReturnValues, want)
		}
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}
