//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// specialPassword has every character that once broke a config file, URL or shell word on
// the way (see TestProxyReadsOnReplicas); the OT redis-operator wrote it unquoted into
// redis.conf / sentinel.conf and passed it unquoted to redis-cli in its probes.
const specialPassword = `p@ss:w/rd#&\1 ${HOME} "q" ünï 密码`

// (j) Redis HA through the OT redis-operator with a password of special characters: the
// servers start (no crash loop), the replica syncs with masterauth, the sentinels
// authenticate to the master (auth-pass) and see the replica, the run succeeds, and the
// password appears nowhere in the run, its report or the events.
func TestRedisHAOperatorPassword(t *testing.T) {
	parallel(t)
	installRedisOperator(t)
	ns := newNamespace(t, "ha-operator-pw")
	apply(t, ns, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: op-pw\ntype: Opaque\nstringData:\n  password: '"+specialPassword+"'\n")
	m := runManifest("op-pw", `    redis:
      mode: ha
      replicas: 1
      sentinels: 3
      provider: redis-operator
      passwordSecretRef:
        name: op-pw
        key: password`, `
    scenarios:
    - name: upsert
      type: redis.upsert`, 1, "Never")
	run := succeed(t, ns, "op-pw", m, []string{"upsert"})
	if run.Status.Target == nil || run.Status.Target.Provider != "redis-operator" {
		t.Errorf("target: %+v", run.Status.Target)
	}
	checkNoSecret(t, ns, run, specialPassword)
	restarts := mustKubectl(t, "", "-n", ns, "get", "pods", "-o",
		`jsonpath={range .items[*]}{.metadata.name}{" "}{.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	t.Logf("pods and restarts:\n%s", restarts)
	var sentinel string
	for _, l := range strings.Split(strings.TrimSpace(restarts), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && strings.Contains(f[0], "op-pw-g1-redis") && f[1] != "0" {
			last, _ := kubectl("", "-n", ns, "get", "pod", f[0], "-o", `jsonpath={.status.containerStatuses[0].lastState}`)
			logs, _ := kubectl("", "-n", ns, "logs", "--previous", "--tail", "20", f[0])
			t.Errorf("target pod %s restarted %s times; last state %s; its previous log:\n%s", f[0], f[1], last, logs)
		}
		if len(f) > 0 && strings.HasPrefix(f[0], "op-pw-g1-redis-sentinel-") {
			sentinel = f[0]
		}
	}
	if sentinel == "" {
		t.Fatalf("no sentinel pod in:\n%s", restarts)
	}
	// num-slaves comes from the master's INFO, which needs auth-pass; flags "master" (not
	// s_down) needs authenticated PINGs. A sentinel refreshes INFO every 10 s and a young one
	// may not have seen the replica yet (the runs are short): asked until it has, for 30 s.
	var master string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Second) {
		master = redisCLI(t, ns, sentinel, "-p", "26379", "SENTINEL", "MASTER", "mymaster")
		if (fieldAfter(master, "flags") == "master" && fieldAfter(master, "num-slaves") == "1") || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("SENTINEL MASTER mymaster:\n%s", master)
	if f := fieldAfter(master, "flags"); f != "master" {
		t.Errorf("sentinel %s: master flags %q", sentinel, f)
	}
	if n := fieldAfter(master, "num-slaves"); n != "1" {
		t.Errorf("sentinel %s: num-slaves %q, want 1", sentinel, n)
	}
}

// fieldAfter returns the line after the line equal to name in redis-cli's flat reply.
func fieldAfter(reply, name string) string {
	lines := strings.Split(reply, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == name {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}
