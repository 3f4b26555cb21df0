//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

const scenarioDuration = 6 * time.Second

const loadPoolPlacement = `
      nodeSelector:
        benchrun.io/pool: load
      tolerations:
      - key: benchrun.io/load
        operator: Exists
        effect: NoSchedule`

// redisScenarios are three short Redis scenarios (ping, get 1 KiB, upsert).
const redisScenarios = `
    scenarios:
    - name: ping
      type: redis.ping
    - name: get_1k
      type: redis.get
      bodySize: 1024
    - name: upsert
      type: redis.upsert`

var redisScenarioNames = []string{"ping", "get_1k", "upsert"}

func runManifest(name, target, load string, runners int, cleanup string) string {
	return fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  target:
%s
  load:
    workers: 2
    tasksPerWorker: 8
    duration: %s
%s
    runners:
      parallelism: %d
  cleanup:
    policy: %s
`, name, target, scenarioDuration, load, runners, cleanup)
}

// succeed applies a run, waits for Succeeded, records the timings and checks the tables.
func succeed(t *testing.T, ns, name, manifest string, scenarios []string) *v1alpha1.BenchmarkRun {
	t.Helper()
	apply(t, ns, manifest)
	run := waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if run.Status.Partial {
		t.Errorf("Succeeded run marked partial: %v", run.Status.PartialReasons)
	}
	if r := run.Status.Runners; r == nil || r.Succeeded != r.Desired {
		t.Errorf("runners: %+v", run.Status.Runners)
	}
	checkTables(t, ns, run, scenarios, scenarioDuration)
	return run
}

// (a) Redis single, 2 runners on a node labelled and tainted as a dedicated load pool.
func TestRedisSingleLoadPool(t *testing.T) {
	ns := newNamespace(t, "redis-pool")
	loadPool(t)
	m := fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: redis-pool
spec:
  target:
    redis:
      mode: single
      tolerations:
      - key: benchrun.io/load
        operator: Exists
        effect: NoSchedule
  load:
    workers: 2
    tasksPerWorker: 8
    duration: %s
%s
    runners:
      parallelism: 2
%s
  cleanup:
    policy: OnSuccess
`, scenarioDuration, redisScenarios, loadPoolPlacement)
	apply(t, ns, m)
	waitPhase(t, ns, "redis-pool", runTimeout, v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting)
	// The runner pods carry the pool's nodeSelector and toleration.
	for _, p := range podNames(t, ns, "bench.benchrun.io/component=runner") {
		spec := mustKubectl(t, "", "-n", ns, "get", "pod", p, "-o", `jsonpath={.spec.nodeSelector}{" "}{.spec.tolerations}`)
		if !strings.Contains(spec, `"benchrun.io/pool":"load"`) || !strings.Contains(spec, "benchrun.io/load") {
			t.Errorf("runner pod %s: no load-pool placement: %s", p, spec)
		}
	}
	run := waitPhase(t, ns, "redis-pool", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if r := run.Status.Runners; r == nil || r.Desired != 2 || r.Succeeded != 2 {
		t.Errorf("runners: %+v", run.Status.Runners)
	}
	if run.Status.Runners != nil && run.Status.Runners.StartSkew == "" {
		t.Errorf("no start skew with 2 runners")
	}
	if run.Status.Partial {
		t.Errorf("partial: %v", run.Status.PartialReasons)
	}
	checkTables(t, ns, run, redisScenarioNames, scenarioDuration)
	checkCleanedOnSuccess(t, ns, "redis-pool", len(redisScenarioNames))
}

// (b) k6 killed in one of two runners mid-run → Failed, the other runner's results kept, partial.
func TestRunnerKilledMidRun(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "runner-kill")
	m := (`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: runner-kill
spec:
  target:
    redis:
      mode: single
  load:
    workers: 2
    tasksPerWorker: 8
    duration: 10s
    scenarios:
    - name: ping
      type: redis.ping
    - name: get_1k
      type: redis.get
      bodySize: 1024
    runners:
      parallelism: 2
  cleanup:
    policy: OnSuccess
`)
	apply(t, ns, m)
	waitPhase(t, ns, "runner-kill", runTimeout, v1alpha1.PhaseRunning)
	time.Sleep(4 * time.Second)
	pods := podNames(t, ns, "bench.benchrun.io/component=runner,batch.kubernetes.io/job-completion-index=0")
	if len(pods) == 0 {
		t.Fatal("no runner pod with index 0")
	}
	t.Log(killK6(t, ns, pods[0]))
	run := waitPhase(t, ns, "runner-kill", runTimeout, v1alpha1.PhaseFailed)
	recordTimings(t, run)
	t.Logf("conditions: %s", conditionsText(run))
	if !run.Status.Partial {
		t.Errorf("Failed run not marked partial")
	}
	t.Logf("partialReasons: %v", run.Status.PartialReasons)
	if len(run.Status.Results) == 0 {
		t.Fatalf("partial results not kept: status.results empty")
	}
	for _, r := range run.Status.Results {
		if r.Calls <= 0 {
			t.Errorf("partial result %s: calls %d", r.Name, r.Calls)
		}
	}
	if r := run.Status.Runners; r == nil || r.Failed < 1 {
		t.Errorf("runners: %+v", run.Status.Runners)
	}
	checkReport(t, ns, run)
	// OnSuccess: a failed run keeps its target for inspection.
	if out, _ := kubectl("", "-n", ns, "get", "statefulsets,deployments", "-l", "bench.benchrun.io/run", "-o", "name"); strings.TrimSpace(out) == "" {
		t.Errorf("OnSuccess: the failed run's target was deleted")
	}
}

// (c) the operator pod deleted mid-run → still Succeeded, both runners' results merged.
func TestOperatorRestartMidRun(t *testing.T) {
	ns := newNamespace(t, "op-restart")
	m := runManifest("op-restart", "    redis:\n      mode: single", `
    scenarios:
    - name: ping
      type: redis.ping
    - name: get_1k
      type: redis.get
      bodySize: 1024`, 2, "OnSuccess")
	apply(t, ns, m)
	waitPhase(t, ns, "op-restart", runTimeout, v1alpha1.PhaseRunning)
	time.Sleep(2 * time.Second)
	mustKubectl(t, "", "-n", managerNamespace, "delete", "pod", "-l", "app.kubernetes.io/component=manager", "--wait=false")
	t.Log("manager pod deleted")
	run := waitPhase(t, ns, "op-restart", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if r := run.Status.Runners; r == nil || r.Desired != 2 || r.Succeeded != 2 {
		t.Errorf("runners: %+v", run.Status.Runners)
	}
	if run.Status.Partial {
		t.Errorf("partial after operator restart: %v", run.Status.PartialReasons)
	}
	checkTables(t, ns, run, []string{"ping", "get_1k"}, scenarioDuration)
	checkCleanedOnSuccess(t, ns, "op-restart", 2)
	mustKubectl(t, "", "-n", managerNamespace, "rollout", "status", "deploy/benchrun-manager", "--timeout=120s")
}

// (d) Valkey single.
func TestValkey(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "valkey")
	m := runManifest("valkey", "    redis:\n      mode: single\n      engine: valkey", redisScenarios, 1, "OnSuccess")
	succeed(t, ns, "valkey", m, redisScenarioNames)
	checkCleanedOnSuccess(t, ns, "valkey", len(redisScenarioNames))
}

// (e) the r/w-split proxy: reads (HGETALL of YCSB) reach the replicas, writes the master.
func TestProxyReadsOnReplicas(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "proxy")
	// A password with every character that once broke a config file or URL on the way:
	// redis.conf quoting, camellia's redis:// URL (@ and :), its JSON route table, Spring's
	// ${...} placeholders, awk's & and \ in replacements, non-ASCII.
	const password = `p@ss:w/rd#&\1 ${HOME} "q" ünï 密码`
	apply(t, ns, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: proxy-pw\ntype: Opaque\nstringData:\n  password: '"+password+"'\n")
	// provider builtin: the subject is our proxy staging and replica reads (the operator's
	// pods with this password: TestRedisHAOperatorPassword).
	m := runManifest("proxy", `    redis:
      mode: proxy
      engine: valkey
      provider: builtin
      replicas: 2
      passwordSecretRef:
        name: proxy-pw
        key: password
      proxy:
        replicas: 1
        readPolicy: replicas`, `
    scenarios:
    - name: ycsb_b
      type: ycsb
      bodySize: 256
      ycsb:
        readProportion: 0.95
        updateProportion: 0.05
        requestDistribution: zipfian
        recordCount: 1000`, 1, "Never")
	run := succeed(t, ns, "proxy", m, []string{"ycsb_b"})
	checkNoSecret(t, ns, run, password)
	replicas := podNames(t, ns, "bench.benchrun.io/component=redis-replica")
	masters := podNames(t, ns, "bench.benchrun.io/component=redis-master")
	if len(replicas) != 2 || len(masters) != 1 {
		t.Fatalf("pods: masters %v replicas %v", masters, replicas)
	}
	var replicaReads int64
	for _, p := range replicas {
		info := redisCLI(t, ns, p, "INFO", "commandstats")
		n := commandCalls(info, "hgetall")
		t.Logf("replica %s: hgetall=%d hset=%d", p, n, commandCalls(info, "hset"))
		if n == 0 {
			// camellia's route table lists every replica by its pod name.
			t.Errorf("replica %s served no HGETALL: reads not spread over the replicas", p)
		}
		replicaReads += n
	}
	info := redisCLI(t, ns, masters[0], "INFO", "commandstats")
	mr, mw := commandCalls(info, "hgetall"), commandCalls(info, "hset")
	t.Logf("master %s: hgetall=%d hset=%d", masters[0], mr, mw)
	metric(t.Name(), "replica HGETALL=%d master HGETALL=%d master HSET=%d", replicaReads, mr, mw)
	if mw == 0 {
		t.Errorf("master served no HSET")
	}
	if replicaReads == 0 || mr != 0 {
		t.Errorf("readPolicy replicas: reads must reach only the replicas: master %d, replicas %d", mr, replicaReads)
	}
}

// (f) HeTu on Redis, the four RPC scenarios.
func TestHeTuOnRedis(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "hetu")
	m := runManifest("hetu", `    hetu:
      replicas: 1
      workers: 2
      packetLayers: msgpack+zlib+crypto
      backend:
        redis:
          mode: single`, `
    scenarios:
    - name: get
      type: hetu.get
    - name: get2_update2
      type: hetu.get2_update2
    - name: get_then_update
      type: hetu.get_then_update
    - name: hello_world
      type: hetu.hello_world`, 1, "OnSuccess")
	run := succeed(t, ns, "hetu", m, []string{"get", "get2_update2", "get_then_update", "hello_world"})
	// The local cluster has no metrics-server: the operator reads the kubelet's
	// /metrics/resource (24 s of load spans at least two kubelet refreshes).
	checkUsage(t, run, "hetu", "redis-master", "runner")
	checkCleanedOnSuccess(t, ns, "hetu", 4)
}

// (g) an external target: an in-cluster Redis (deployed by the test) with a password in a Secret.
func TestExternalRedisSecret(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "external")
	extRedis(t, ns)
	m := runManifest("external", fmt.Sprintf(`    external:
      kind: redis
      addresses: ["ext-redis.%s.svc.cluster.local:6379"]
      passwordSecretRef:
        name: ext-redis
        key: password`, ns), `
    scenarios:
    - name: get_128
      type: redis.get
      bodySize: 128
    - name: set_128
      type: redis.set
      bodySize: 128`, 1, "OnSuccess")
	succeed(t, ns, "external", m, []string{"get_128", "set_128"})
	// The external Redis was really used (and, external, it is not ours to clean up).
	pod := podNames(t, ns, "app=ext-redis")
	if len(pod) == 1 {
		info := redisCLI(t, ns, pod[0], "INFO", "commandstats")
		t.Logf("external redis: get=%d set=%d", commandCalls(info, "get"), commandCalls(info, "set"))
		if commandCalls(info, "get") == 0 || commandCalls(info, "set") == 0 {
			t.Errorf("external redis saw no GET/SET")
		}
	}
	mustKubectl(t, "", "-n", ns, "get", "deploy", "ext-redis")
}

// extRedis deploys the Redis an external target points at: Deployment and Service ext-redis
// (ext-redis.<ns>.svc.cluster.local:6379), password e2e-s3cret in Secret ext-redis, key password.
func extRedis(t *testing.T, ns string) {
	t.Helper()
	apply(t, ns, `apiVersion: v1
kind: Secret
metadata:
  name: ext-redis
type: Opaque
stringData:
  password: e2e-s3cret
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ext-redis
spec:
  replicas: 1
  selector:
    matchLabels: {app: ext-redis}
  template:
    metadata:
      labels: {app: ext-redis}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: redis
        image: benchrun.local/redis:dev
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "exec redis-server --port 6379 --save '' --appendonly no --requirepass \"$REDIS_PASSWORD\""]
        env:
        - name: REDIS_PASSWORD
          valueFrom: {secretKeyRef: {name: ext-redis, key: password}}
        ports: [{containerPort: 6379}]
        readinessProbe:
          tcpSocket: {port: 6379}
          periodSeconds: 1
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata:
  name: ext-redis
spec:
  selector: {app: ext-redis}
  ports: [{port: 6379, targetPort: 6379}]
`)
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deploy/ext-redis", "--timeout=120s")
}

// (h) Redis HA with the builtin provider (master + replica + 3 sentinels), 2 runners.
func TestRedisHABuiltin(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "ha-builtin")
	m := runManifest("ha-builtin", `    redis:
      mode: ha
      replicas: 1
      sentinels: 3
      provider: builtin`, `
    scenarios:
    - name: upsert
      type: redis.upsert`, 2, "OnSuccess")
	run := succeed(t, ns, "ha-builtin", m, []string{"upsert"})
	if run.Status.Target != nil {
		t.Logf("target: provider=%s endpoints=%v", run.Status.Target.Provider, run.Status.Target.Endpoints)
	}
	checkCleanedOnSuccess(t, ns, "ha-builtin", 1)
}

// (i) Redis HA through the OT redis-operator (installed by make redis-operator-install).
func TestRedisHAOperator(t *testing.T) {
	parallel(t)
	installRedisOperator(t)
	ns := newNamespace(t, "ha-operator")
	m := runManifest("ha-operator", `    redis:
      mode: ha
      replicas: 1
      sentinels: 3
      provider: redis-operator`, `
    scenarios:
    - name: upsert
      type: redis.upsert`, 1, "OnSuccess")
	run := succeed(t, ns, "ha-operator", m, []string{"upsert"})
	if run.Status.Target != nil && run.Status.Target.Provider != "redis-operator" {
		t.Errorf("provider %q", run.Status.Target.Provider)
	}
	// OnSuccess: the operator's CRs and the StatefulSets it made are gone.
	checkGone(t, ns, "ha-operator", 1, "redisreplications.redis.redis.opstreelabs.in,redissentinels.redis.redis.opstreelabs.in,statefulsets")
}
