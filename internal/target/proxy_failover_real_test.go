package target

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/resp"
)

// TestProxyRealMasterMoves: camellia follows an upstream name whose address changes (in a
// cluster: a replica's per-pod name when its pod is recreated, or any name camellia is given).
// The master is stopped and started on a new loopback address twice, /etc/hosts of every
// emulated pod and of the proxy updated at once (its pod and master Service names); writes
// through the proxy must succeed again within 10 s of the new master listening. The second
// move comes right after the proxy looked the name up again, which the JVM's default 30 s
// DNS cache (proxyJavaSecurity) turned into a 30 s outage.
func TestProxyRealMasterMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes; not with -short")
	}
	e := needReal(t)
	ctx := context.Background()
	tg := proxyTarget(t, v1alpha1.ReadReplicas, false)
	c := e.startServers(t, tg, "")
	p := e.startProxy(t, tg, c)
	p.waitListening(t)
	if _, err := resp.Do(ctx, p.addr, "", "SET", "k", "v"); err != nil {
		t.Fatalf("SET through the proxy: %v\n%s", err, tail(p.log(), 30))
	}
	const master = "run-g1-redis-master-0"
	for move := 1; move <= 2; move++ {
		started := c.moveMaster(t, e, master, p)
		var lastErr error
		for {
			_, lastErr = resp.Do(ctx, p.addr, "", "SET", "k", "v")
			if lastErr == nil {
				break
			}
			if time.Since(started) > 45*time.Second {
				t.Fatalf("move %d: writes through the proxy still fail 45 s after the master came back: %v\n%s", move, lastErr, tail(p.log(), 30))
			}
			time.Sleep(50 * time.Millisecond)
		}
		took := time.Since(started)
		t.Logf("move %d: writes through the proxy again %v after the master listened at %s", move, took.Round(time.Millisecond), c.addr[master])
		if took > 10*time.Second {
			t.Errorf("move %d: camellia took %v to follow the master to its new address", move, took.Round(time.Millisecond))
		}
	}
}

// moveMaster stops pod's server (SHUTDOWN NOSAVE, as a killed pod loses its data), points its
// name at a new loopback address in c's and the proxy's /etc/hosts (rewritten in place: they
// are bind mounted) and starts it there; it returns when the new server listens.
func (c *cluster) moveMaster(t *testing.T, e *realEnv, pod string, p *proxyProc) time.Time {
	t.Helper()
	old, _, _ := net.SplitHostPort(c.addr[pod])
	_, _ = resp.Do(context.Background(), c.addr[pod], c.password, "SHUTDOWN", "NOSAVE")
	waitUntil(t, 10*time.Second, pod+" stopped", func() bool {
		conn, err := net.Dial("tcp", c.addr[pod])
		if err == nil {
			_ = conn.Close()
		}
		return err != nil
	}, filepath.Join(c.dir, pod, "log"))
	ip := loopbackBlock(t, 1)[0]
	c.hosts = strings.ReplaceAll(c.hosts, "\n"+old+" ", "\n"+ip+" ")
	c.addr[pod] = net.JoinHostPort(ip, "6379")
	for _, f := range []string{filepath.Join(c.dir, "hosts"), filepath.Join(p.dir, "hosts")} {
		if err := os.WriteFile(f, []byte(c.hosts), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rp := c.pods[pod]
	rp.ip = ip
	c.pods[pod] = rp
	e.startPod(t, c, rp)
	return time.Now()
}

// TestProxyJavaSecurity: the proxy ConfigMap carries the DNS cache overrides and the
// container's JVM loads them from where the ConfigMap is mounted.
func TestProxyJavaSecurity(t *testing.T) {
	objs, err := proxyTarget(t, v1alpha1.ReadReplicas, false).Objects()
	if err != nil {
		t.Fatal(err)
	}
	m := byName(objs)
	cm := m["ConfigMap/run-g1-proxy-config"].(*corev1.ConfigMap)
	if got := cm.Data["java.security"]; !strings.Contains(got, "networkaddress.cache.ttl=1\n") || !strings.Contains(got, "networkaddress.cache.negative.ttl=0\n") {
		t.Errorf("java.security: %q", got)
	}
	ctr := m["Deployment/run-g1-proxy"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	if script := ctr.Command[2]; !strings.Contains(script, "exec java -Djava.security.properties=/etc/camellia/java.security ") {
		t.Errorf("the JVM does not load the overrides:\n%s", script)
	}
	if ctr.VolumeMounts[0].MountPath != "/etc/camellia" {
		t.Errorf("ConfigMap mounted at %s", ctr.VolumeMounts[0].MountPath)
	}
}
