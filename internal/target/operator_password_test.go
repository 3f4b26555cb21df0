package target

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/resp"
)

// operatorPasswords are passwords the OT redis-operator's unquoted config lines break: the
// e2e suite's one (space, ", $, \, &, #, @, :, /, UTF-8), and each of tab, newline, carriage
// return, single quote and glob characters on their own.
var operatorPasswords = []string{
	`p@ss:w/rd#&\1 ${HOME} "q" ünï 密码`,
	"tab\there", "new\nline", "cr\rhere", "it's", `a"b`, "*?[x]", `\`, "plain",
}

// operatorConf is the file the operator's `/operator agent bootstrap` (v0.23.0,
// internal/agent/bootstrap) writes, in its util.Config.Append format: default lines, then
// one "\n<key> <words joined by spaces>" per directive, no final newline. sentinel: the
// sentinel.conf of a sentinel monitoring master with auth-pass.
func operatorConf(sentinel bool, password, master string, port string) string {
	if !sentinel {
		return "\nbind 0.0.0.0 ::\ntcp-backlog 511\ntimeout 0\ntcp-keepalive 300\ndaemonize no\nsupervised no" +
			"\nmasterauth " + password + "\nrequirepass " + password + "\nprotected-mode yes" + "\nport " + port
	}
	host, mport, _ := net.SplitHostPort(master)
	return "\ndaemonize no\nlogfile \"\"\n\nacllog-max-len 128\nsentinel deny-scripts-reconfig yes" +
		"\nprotected-mode no" + "\nsentinel monitor " + masterGroup + " " + host + " " + mport + " 1" +
		"\nsentinel down-after-milliseconds " + masterGroup + " 30000" +
		"\nsentinel auth-pass " + masterGroup + " " + password + "\nport " + port
}

// fixConf writes conf to dir and runs our init container's command on it, as the pod does.
func fixConf(t *testing.T, dir, conf, password string, sentinel bool) string {
	t.Helper()
	path := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", passwordLineFix(path, operatorConfFix[sentinel].lines))
	cmd.Env = append(os.Environ(), PasswordEnv+"="+password)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fix script: %v\n%s", err, out)
	}
	return path
}

// startConf starts redis-server (or a sentinel) on a config file, stopped when the test ends.
func startConf(t *testing.T, path string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(redistest.Bin(t), append([]string{path, "--bind", "127.0.0.1", "--dir", filepath.Dir(path)}, args...)...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// TestOperatorPasswordConfReal: with the operator's raw lines a real redis-server refuses
// the config (the crash loop) for every password with a special character; after our init
// container's rewrite it starts, accepts exactly the password (AUTH) and our probe passes.
func TestOperatorPasswordConfReal(t *testing.T) {
	bin := redistest.Bin(t)
	ctx := context.Background()
	for _, pw := range operatorPasswords {
		addr := redistest.FreeAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		conf := operatorConf(false, pw, "", port)
		raw := filepath.Join(t.TempDir(), "raw.conf")
		_ = os.WriteFile(raw, []byte(conf), 0o644)
		if pw != "plain" && pw != `\` && pw != "*?[x]" {
			// port 0: nothing listens; an accepted config would run until timeout stops it.
			out, _ := exec.Command("timeout", "5", bin, raw, "--port", "0").CombinedOutput()
			if !strings.Contains(string(out), "FATAL CONFIG FILE ERROR") {
				t.Errorf("%q: redis-server accepted the operator's raw config:\n%s", pw, out)
			}
			t.Logf("%q raw: %s", pw, firstLine(string(out), "Bad directive", "wrong number", "Unbalanced"))
		}
		path := fixConf(t, t.TempDir(), conf, pw, false)
		startConf(t, path)
		redistest.WaitListening(t, addr)
		if got, err := resp.Do(ctx, addr, pw, "PING"); err != nil || got != "PONG" {
			t.Errorf("%q: PING with the password: %q %v", pw, got, err)
		}
		if _, err := resp.Do(ctx, addr, pw+"x", "PING"); err == nil {
			t.Errorf("%q: a wrong password was accepted", pw)
		}
		probe := operatorProbe(true)["exec"].(map[string]any)["command"].([]any)
		cmd := exec.Command(probe[0].(string), probe[1].(string), probe[2].(string))
		cmd.Env = append(os.Environ(), PasswordEnv+"="+pw, "REDIS_PORT="+port)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%q: probe failed: %v %s", pw, err, out)
		}
		cmd.Env = append(os.Environ(), PasswordEnv+"="+pw+"x", "REDIS_PORT="+port)
		if err := cmd.Run(); err == nil {
			t.Errorf("%q: probe passed with a wrong password", pw)
		}
	}
}

// firstLine is the first line of s containing one of subs (s itself when none does).
func firstLine(s string, subs ...string) string {
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				return strings.TrimSpace(l)
			}
		}
	}
	return strings.TrimSpace(s)
}

// TestOperatorPasswordSentinelReal: a real sentinel with the rewritten auth-pass line
// authenticates to a real master with requirepass (its INFO refresh succeeds); one with a
// wrong password does not (what the check tells apart).
func TestOperatorPasswordSentinelReal(t *testing.T) {
	for _, pw := range operatorPasswords[:3] {
		master := redistest.Start(t, "--requirepass", pw)
		if !sentinelAuthenticated(t, master, pw, pw, 10*time.Second) {
			t.Errorf("%q: the sentinel did not authenticate to the master", pw)
		}
		if pw == operatorPasswords[0] && sentinelAuthenticated(t, master, pw+"x", pw+"x", 3*time.Second) {
			t.Errorf("%q: a sentinel with a wrong auth-pass counted as authenticated", pw)
		}
	}
}

// sentinelAuthenticated starts a sentinel on the operator's sentinel.conf with auth-pass
// raw, rewritten by our script with password fix, and tells whether within timeout its
// INFO of the master succeeds (info-refresh under 10 s; it is the time since the last
// successful INFO, huge before any) with the master not down.
func sentinelAuthenticated(t *testing.T, master, raw, fix string, timeout time.Duration) bool {
	t.Helper()
	saddr := redistest.FreeAddr(t)
	_, sport, _ := net.SplitHostPort(saddr)
	path := fixConf(t, t.TempDir(), operatorConf(true, raw, master, sport), fix, true)
	startConf(t, path, "--sentinel")
	redistest.WaitListening(t, saddr)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		reply, err := resp.Do(context.Background(), saddr, "", "SENTINEL", "MASTER", masterGroup)
		refresh := fieldAfterLine(reply, "info-refresh")
		if err == nil && refresh != "" && len(refresh) < 5 && fieldAfterLine(reply, "flags") == "master" {
			return true
		}
	}
	return false
}

// fieldAfterLine is the line after the line equal to name in a flat reply.
func fieldAfterLine(reply, name string) string {
	lines := strings.Split(reply, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if lines[i] == name {
			return lines[i+1]
		}
	}
	return ""
}

// TestOperatorPasswordObjects: with a password the operator's resources get our init
// container (the Secret only through env, never its value), the sentinel's fixing
// sentinel.conf, and the Redis pods our quoted probes; without one nothing of it.
func TestOperatorPasswordObjects(t *testing.T) {
	ref := &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}
	tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderRedisOperator,
		PasswordSecretRef: ref}}, opts(true))
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := tg.Objects()
	m := byName(objs)
	for name, conf := range map[string]string{"RedisReplication/run-g1-redis": "/etc/redis/redis.conf", "RedisSentinel/run-g1-redis": "/etc/redis/sentinel.conf"} {
		u := m[name].(*unstructured.Unstructured).DeepCopy() // panics on non-JSON types
		ic, _, _ := unstructured.NestedMap(u.Object, "spec", "initContainer")
		cmd, _, _ := unstructured.NestedStringSlice(ic, "command")
		env, _, _ := unstructured.NestedSlice(ic, "env")
		if ic["enabled"] != true || len(cmd) != 3 || !strings.Contains(cmd[2], conf) || len(env) != 1 {
			t.Fatalf("%s: init container %v", name, ic)
		}
		if key, _, _ := unstructured.NestedString(env[0].(map[string]any), "valueFrom", "secretKeyRef", "key"); key != "k" {
			t.Fatalf("%s: init container env %v", name, env)
		}
		_, probe, _ := unstructured.NestedMap(u.Object, "spec", "readinessProbe")
		if probe != (name == "RedisReplication/run-g1-redis") {
			t.Errorf("%s: readinessProbe present %v", name, probe)
		}
	}
	tg, _ = New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle, Provider: v1alpha1.ProviderRedisOperator}}, opts(true))
	objs, _ = tg.Objects()
	u := byName(objs)["Redis/run-g1-redis"].(*unstructured.Unstructured)
	if on, _, _ := unstructured.NestedBool(u.Object, "spec", "initContainer", "enabled"); on {
		t.Error("init container enabled without a password")
	}
	if _, probe, _ := unstructured.NestedMap(u.Object, "spec", "livenessProbe"); probe {
		t.Error("probes without a password: the operator's own are fine then")
	}
}
