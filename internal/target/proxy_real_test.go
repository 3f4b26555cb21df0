package target

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/resp"
)

// Real-process tests of the proxy target: redis-server master and replicas (and a sentinel)
// run the shell scripts of the generated StatefulSets, camellia-redis-proxy runs the
// generated Deployment's script with the generated ConfigMap, inside the proxy image's own
// root file system (its JRE, jars, sh and awk).
//
// They need root (mount namespaces, chroot), redis-server on PATH and the proxy image built
// by hack/images/build.sh proxy in $BENCHRUN_CACHE/images/proxy.tar (default
// ~/.cache/benchrun; CI machines have it), and skip, saying what is missing, otherwise or
// with -short. Each server gets its own loopback address (127.x.y.n) with the real port
// 6379, and the pods' stable DNS names resolve to those addresses through /etc/hosts bind
// mounted in private mount namespaces, so the scripts and the route table run unmodified;
// only the servers' config and data paths are moved into the test's directory (a wrapper
// also adds --bind and --dir, which a pod's own network namespace makes unnecessary), and the
// proxy's ports come from the environment (Spring's relaxed binding) instead of 6380.

// realEnv is what the real-process tests need.
type realEnv struct {
	redisServer string // the redis-server binary
	rootfs      string // the proxy image, extracted
}

// needReal skips unless the real-process tests can run, and extracts the proxy image.
func needReal(t *testing.T) *realEnv {
	t.Helper()
	bin := redistest.Bin(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount namespaces and chroot emulate the pods)")
	}
	for _, tool := range []string{"unshare", "chroot", "mount", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	cache := os.Getenv("BENCHRUN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "benchrun")
	}
	image := filepath.Join(cache, "images", "proxy.tar")
	if _, err := os.Stat(image); err != nil {
		t.Skipf("proxy image absent (%s): build it with hack/images/build.sh proxy", image)
	}
	return &realEnv{redisServer: bin, rootfs: extractImage(t, image)}
}

// extractImage unpacks a docker-archive tarball's layers into a temporary directory.
func extractImage(t *testing.T, image string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("tar", "-xOf", image, "manifest.json").Output()
	if err != nil {
		t.Fatalf("reading %s: %v", image, err)
	}
	var manifest []struct{ Layers []string }
	if err := json.Unmarshal(out, &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest of %s: %v", image, err)
	}
	root := filepath.Join(dir, "rootfs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, layer := range manifest[0].Layers {
		cmd := exec.Command("sh", "-c", `tar -xOf "$1" "$2" | tar -x -C "$3"`, "-", image, layer, root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("extracting %s: %v\n%s", layer, err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "etc", "camellia"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Mount points for the pod's /etc/hosts and termination log.
	if f, err := os.OpenFile(filepath.Join(root, "etc", "hosts"), os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		_ = f.Close()
	}
	return root
}

// loopbackBlock returns n loopback addresses 127.a.b.1..n whose port 6379 is free.
func loopbackBlock(t *testing.T, n int) []string {
	t.Helper()
	for range 20 {
		a, b := 100+rand.IntN(150), rand.IntN(250)
		var ips []string
		for i := 1; i <= n; i++ {
			ip := fmt.Sprintf("127.%d.%d.%d", a, b, i)
			l, err := net.Listen("tcp", ip+":6379")
			if err != nil {
				break
			}
			_ = l.Close()
			ips = append(ips, ip)
		}
		if len(ips) == n {
			return ips
		}
	}
	t.Skip("no free loopback addresses for port 6379 (a server listening on *:6379?)")
	return nil
}

// freePort is a free TCP port on all interfaces.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// cluster is a target's servers running as local processes.
type cluster struct {
	hosts    string            // /etc/hosts lines: every pod's stable name
	addr     map[string]string // pod name -> ip:port
	password string
	dir      string
	conf     string             // the shared redis.conf
	pods     map[string]realPod // by name, as last started
}

// podNames are the pods of a StatefulSet with their stable DNS names.
func podNames(sts *appsv1.StatefulSet) (pods, dns []string) {
	for i := range *sts.Spec.Replicas {
		pod := fmt.Sprintf("%s-%d", sts.Name, i)
		pods = append(pods, pod)
		dns = append(dns, fmt.Sprintf("%s.%s.%s.svc", pod, sts.Spec.ServiceName, sts.Namespace))
	}
	return pods, dns
}

// startServers starts every pod of the target's StatefulSets (master first) with their own
// scripts and the shared redis.conf, and waits until the replicas are in sync.
func (e *realEnv) startServers(t *testing.T, tg Target, password string) *cluster {
	t.Helper()
	objs, err := tg.Objects()
	if err != nil {
		t.Fatal(err)
	}
	m := byName(objs)
	var sets []*appsv1.StatefulSet
	for _, suffix := range []string{"redis-master", "redis-replica", "redis-sentinel"} {
		if s, ok := m["StatefulSet/run-g1-"+suffix].(*appsv1.StatefulSet); ok {
			sets = append(sets, s)
		}
	}
	c := &cluster{addr: map[string]string{}, pods: map[string]realPod{}, password: password, dir: t.TempDir()}
	var hosts strings.Builder
	hosts.WriteString("127.0.0.1 localhost\n")
	n := 0
	for _, s := range sets {
		n += int(*s.Spec.Replicas)
	}
	ips := loopbackBlock(t, n)
	var pods []realPod
	for _, s := range sets {
		names, dns := podNames(s)
		port := 6379
		if s.Name == "run-g1-redis-sentinel" {
			port = sentinelPort
		}
		for i, name := range names {
			ip := ips[len(pods)]
			fmt.Fprintf(&hosts, "%s %s\n", ip, dns[i])
			c.addr[name] = net.JoinHostPort(ip, strconv.Itoa(port))
			pods = append(pods, realPod{name: name, ip: ip, script: s.Spec.Template.Spec.Containers[0].Command[2], port: port})
		}
	}
	// The role-following master Service (replicas' replicaof) selects the master pod: here
	// its name resolves to that pod's address, as kube-proxy would route it.
	if _, ok := m["Service/run-g1-redis-master"]; ok {
		masterIP, _, _ := net.SplitHostPort(c.addr["run-g1-redis-master-0"])
		fmt.Fprintf(&hosts, "%s run-g1-redis-master.ns.svc\n", masterIP)
	}
	c.hosts = hosts.String()
	hostsFile := filepath.Join(c.dir, "hosts")
	if err := os.WriteFile(hostsFile, []byte(c.hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	c.conf = m["ConfigMap/run-g1-redis-config"].(*corev1.ConfigMap).Data["redis.conf"]
	for _, p := range pods {
		c.pods[p.name] = p
		e.startPod(t, c, p)
	}
	for _, p := range pods {
		if strings.Contains(p.name, "replica") {
			waitUntil(t, 15*time.Second, p.name+" in sync with the master (masterauth)", func() bool {
				info, err := resp.Do(context.Background(), c.addr[p.name], password, "INFO", "replication")
				return err == nil && strings.Contains(info, "master_link_status:up")
			}, filepath.Join(c.dir, p.name, "log"))
		}
	}
	return c
}

// realPod is one emulated pod of a StatefulSet: its name, address, script and port.
type realPod struct {
	name, ip, script string
	port             int
}

// startPod starts pod p of c (its script with c's redis.conf, its own address and data
// directory, c's /etc/hosts) and waits until it listens.
func (e *realEnv) startPod(t *testing.T, c *cluster, p realPod) {
	t.Helper()
	dir := filepath.Join(c.dir, p.name)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "redis.conf.in"), []byte(c.conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The pod's network namespace and emptyDir: its own address (also the source of its
	// connections: sentinels announce that one to each other), its own data directory.
	for name, extra := range map[string]string{"redis-server": "", "redis-sentinel": " --sentinel"} {
		wrapper := fmt.Sprintf("#!/bin/sh\nexec %s \"$@\"%s --bind %s --bind-source-addr %s --dir %s\n", e.redisServer, extra, p.ip, p.ip, dir)
		if err := os.WriteFile(filepath.Join(dir, "bin", name), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := strings.NewReplacer("/etc/benchrun/redis.conf", dir+"/redis.conf.in", "/tmp/", dir+"/").Replace(p.script)
	cmd := exec.Command("unshare", "-m", "sh", "-c", `mount --bind "$0" /etc/hosts && exec sh -c "$1"`, filepath.Join(c.dir, "hosts"), script)
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/sbin:/usr/bin:/sbin:/bin", "POD_NAME=" + p.name}
	if c.password != "" {
		cmd.Env = append(cmd.Env, PasswordEnv+"="+c.password)
	}
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = log.Close() })
	addr := c.addr[p.name]
	waitUntil(t, 10*time.Second, p.name+" listening", func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			_ = conn.Close()
		}
		return err == nil
	}, filepath.Join(dir, "log"))
}

// waitUntil polls cond every 100 ms and fails with the log's tail after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool, log string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("%s: not after %s; %s:\n%s", what, timeout, log, tail(string(b), 30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// proxyLauncher emulates the proxy pod for the proxy image's root file system ($1): a
// private /proc, /dev with the usual devices and the kubelet's termination-log file, the
// ConfigMap at /etc/camellia, an emptyDir at /tmp, the pods' names in /etc/hosts (all from
// the instance directory $2), the image's user and environment plus the rest of the
// arguments, then the container's command.
const proxyLauncher = `set -e
R=$1 I=$2
shift 2
mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=755 tmpfs "$R/dev"
for d in null zero random urandom; do touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; done
touch "$R/dev/termination-log"; mount --bind "$I/termination-log" "$R/dev/termination-log"
mount --bind "$I/camellia" "$R/etc/camellia"
mount --bind "$I/hosts" "$R/etc/hosts"
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
exec chroot --userspec=65532:65532 "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/nonroot "$@"
`

// proxyProc is a running (or exited) proxy.
type proxyProc struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// log is the proxy's output so far.
func (p *proxyProc) log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	return string(b)
}

// startProxy runs the generated proxy Deployment's command with its ConfigMap, the password
// in $REDIS_PASSWORD (as the kubelet sets it from the Secret), resolving c's pod names.
func (e *realEnv) startProxy(t *testing.T, tg Target, c *cluster) *proxyProc {
	t.Helper()
	objs, _ := tg.Objects()
	m := byName(objs)
	cm := m["ConfigMap/run-g1-proxy-config"].(*corev1.ConfigMap)
	ctr := m["Deployment/run-g1-proxy"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "camellia"), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, "camellia", k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(c.hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "termination-log"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(filepath.Join(dir, "termination-log"), 0o666)
	port := freePort(t)
	args := []string{"-m", "sh", "-c", proxyLauncher, "-", e.rootfs, dir,
		"CAMELLIA_REDIS_PROXY_PORT=" + strconv.Itoa(port), "CAMELLIA_REDIS_PROXY_CONSOLE_PORT=" + strconv.Itoa(freePort(t))}
	for _, env := range ctr.Env {
		if env.Name == PasswordEnv && env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil {
			args = append(args, PasswordEnv+"="+c.password)
		}
	}
	args = append(args, ctr.Command...)
	cmd := exec.Command("unshare", args...)
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proxyProc{addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = log.Close(); close(p.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.done })
	return p
}

// waitListening waits until the proxy accepts connections.
func (p *proxyProc) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-p.done:
			t.Fatalf("proxy exited (%v):\n%s", p.cmd.ProcessState, tail(p.log(), 40))
		default:
		}
		if conn, err := net.Dial("tcp", p.addr); err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy not listening after 3m:\n%s", tail(p.log(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// proxyTarget is a builtin proxy target with 2 replicas, the read policy and a password
// Secret when withPassword.
func proxyTarget(t *testing.T, policy v1alpha1.ReadPolicy, withPassword bool) Target {
	t.Helper()
	spec := &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderBuiltin,
		Proxy: &v1alpha1.RedisProxySpec{ReadPolicy: policy}}
	if withPassword {
		spec.PasswordSecretRef = &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}
	}
	tg, err := New(&v1alpha1.TargetSpec{Redis: spec}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestProxyRealPasswords: passwords with every character that needs escaping somewhere
// (redis.conf quoting, camellia's redis:// user info, JSON, awk, Spring placeholders, the
// JVM's decoding of the environment) work end to end: the replicas authenticate to the
// master, clients to the proxy, the proxy to master and replicas (SET, then GET from a
// replica). A password that is not UTF-8 is refused with a termination message that does
// not contain it. A sentinel of an HA target with the same password discovers the replicas
// through the master (auth-pass).
func TestProxyRealPasswords(t *testing.T) {
	e := needReal(t)
	passwords := []string{
		`p@ss:w/rd#&\1 %41 "q" ?x=1&y`, // colon: user "default"; @ / # & \ % space " ? in the URL
		`ünïcødé 密码 & \\ "x" # @h`,     // UTF-8 (the JVM's environment decoding), no colon: no user name
		`${HOME}${x:y}$$ \& ${`,        // Spring placeholders, awk gsub specials
		"tab\tnl\nend\n",               // control characters, a trailing newline (a Secret from a file)
	}
	ctx := context.Background()
	for i, password := range passwords {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			tg := proxyTarget(t, v1alpha1.ReadReplicas, true)
			c := e.startServers(t, tg, password)
			if got, err := resp.Do(ctx, c.addr["run-g1-redis-master-0"], password, "CONFIG", "GET", "requirepass"); err != nil || got != "requirepass\n"+password {
				t.Fatalf("requirepass as the master has it: %q, %v", got, err)
			}
			p := e.startProxy(t, tg, c)
			p.waitListening(t)
			key, value := fmt.Sprintf("k%d", i), "v-"+password
			if _, err := resp.Do(ctx, p.addr, password, "SET", key, value); err != nil {
				t.Fatalf("SET through the proxy: %v\n%s", err, tail(p.log(), 30))
			}
			waitUntil(t, 5*time.Second, "GET through the proxy (from a replica)", func() bool {
				got, err := resp.Do(ctx, p.addr, password, "GET", key)
				return err == nil && got == value
			}, filepath.Join(p.dir, "log"))
			if got, err := resp.Do(ctx, c.addr["run-g1-redis-master-0"], password, "GET", key); err != nil || got != value {
				t.Fatalf("the write did not reach the master: %q, %v", got, err)
			}
			if _, err := resp.Do(ctx, p.addr, password+"x", "GET", key); err == nil {
				t.Fatal("the proxy accepted a wrong password")
			}
			if _, err := resp.Do(ctx, p.addr, "", "GET", key); err == nil {
				t.Fatal("the proxy accepted a client without AUTH")
			}
		})
	}

	t.Run("sentinel", func(t *testing.T) {
		password := passwords[0] + passwords[2]
		tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
			Sentinels: ptr.To[int32](1), PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}, opts(false))
		if err != nil {
			t.Fatal(err)
		}
		c := e.startServers(t, tg, password)
		waitUntil(t, 20*time.Second, "the sentinel sees 2 replicas (it authenticated to the master)", func() bool {
			got, err := resp.Do(ctx, c.addr["run-g1-redis-sentinel-0"], "", "SENTINEL", "MASTER", masterGroup)
			return err == nil && strings.Contains(got, "num-slaves\n2\n")
		}, filepath.Join(c.dir, "run-g1-redis-sentinel-0", "log"))
	})

	t.Run("not-utf8", func(t *testing.T) {
		password := "latin1 caf\xe9 secret"
		tg := proxyTarget(t, v1alpha1.ReadReplicas, true)
		c := &cluster{hosts: "127.0.0.1 localhost\n", password: password}
		p := e.startProxy(t, tg, c)
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			t.Fatal("the proxy started with a password that is not UTF-8")
		}
		if p.cmd.ProcessState.ExitCode() == 0 {
			t.Fatal("exit status 0")
		}
		msg, _ := os.ReadFile(filepath.Join(p.dir, "termination-log"))
		if !strings.HasPrefix(string(msg), proxyRejectPrefix+"the Redis password is not valid UTF-8") {
			t.Fatalf("termination message %q; log:\n%s", msg, p.log())
		}
		if strings.Contains(string(msg), "caf") || strings.Contains(p.log(), "caf") {
			t.Fatal("the password was printed")
		}
	})
}

// TestProxyRealReadSpread: with the generated route table, reads through the real proxy
// reach every replica (camellia picks a random read server per command, over the replicas'
// per-pod names) and never the master; replicas-and-master spreads them over all servers;
// master sends them all to the master. Counts come from INFO commandstats of each server.
func TestProxyRealReadSpread(t *testing.T) {
	e := needReal(t)
	ctx := context.Background()
	const keys, conns, getsPerConn = 100, 4, 1000
	for _, policy := range []v1alpha1.ReadPolicy{v1alpha1.ReadReplicas, v1alpha1.ReadReplicasAndMaster, v1alpha1.ReadMaster} {
		t.Run(string(policy), func(t *testing.T) {
			password := "s3cret:" + string(policy)
			tg := proxyTarget(t, policy, true)
			c := e.startServers(t, tg, password)
			p := e.startProxy(t, tg, c)
			p.waitListening(t)
			for k := range keys {
				if _, err := resp.Do(ctx, p.addr, password, "SET", fmt.Sprintf("user%d", k), strings.Repeat("x", 100)); err != nil {
					t.Fatalf("SET: %v\n%s", err, tail(p.log(), 30))
				}
			}
			servers := []string{"run-g1-redis-master-0", "run-g1-redis-replica-0", "run-g1-redis-replica-1"}
			for _, s := range servers[1:] {
				waitUntil(t, 10*time.Second, s+" has every key", func() bool {
					n, err := resp.Do(ctx, c.addr[s], password, "DBSIZE")
					return err == nil && n == strconv.Itoa(keys)
				}, filepath.Join(c.dir, s, "log"))
			}
			before := map[string]int64{}
			for _, s := range servers {
				before[s] = getCalls(t, c.addr[s], password)
			}
			errs := make(chan error, conns)
			for i := range conns {
				go func() { errs <- pipelinedGets(p.addr, password, keys, getsPerConn, int64(i)) }()
			}
			for range conns {
				if err := <-errs; err != nil {
					t.Fatalf("GETs through the proxy: %v\n%s", err, tail(p.log(), 30))
				}
			}
			got := map[string]int64{}
			var total int64
			for _, s := range servers {
				got[s] = getCalls(t, c.addr[s], password) - before[s]
				total += got[s]
			}
			t.Logf("readPolicy %s: %d GETs over %d connections: master %d, replica-0 %d, replica-1 %d",
				policy, conns*getsPerConn, conns, got[servers[0]], got[servers[1]], got[servers[2]])
			if total != conns*getsPerConn {
				t.Errorf("servers counted %d GETs, sent %d", total, conns*getsPerConn)
			}
			switch policy {
			case v1alpha1.ReadReplicas:
				if got[servers[0]] != 0 || got[servers[1]] == 0 || got[servers[2]] == 0 {
					t.Errorf("reads must reach every replica and not the master: %v", got)
				}
			case v1alpha1.ReadReplicasAndMaster:
				if got[servers[0]] == 0 || got[servers[1]] == 0 || got[servers[2]] == 0 {
					t.Errorf("reads must reach every server: %v", got)
				}
			case v1alpha1.ReadMaster:
				if got[servers[0]] != total {
					t.Errorf("reads must all reach the master: %v", got)
				}
			}
		})
	}
}

// getCalls is the number of GET commands a server executed (INFO commandstats).
func getCalls(t *testing.T, addr, password string) int64 {
	t.Helper()
	info, err := resp.Do(context.Background(), addr, password, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_get:calls="); ok {
			n, _ := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
			return n
		}
	}
	return 0
}

// pipelinedGets sends n GETs of random keys user0..user<keys-1> over one connection (a
// load client's long-lived connection), 100 in flight, and checks every reply is a value.
func pipelinedGets(addr, password string, keys, n int, seed int64) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	command := func(args ...string) {
		fmt.Fprintf(w, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	command("AUTH", password)
	if err := w.Flush(); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("AUTH: %w", err)
	}
	if !strings.HasPrefix(line, "+OK") {
		return fmt.Errorf("AUTH: %q", line)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for sent := 0; sent < n; {
		batch := min(100, n-sent)
		for range batch {
			command("GET", fmt.Sprintf("user%d", rng.IntN(keys)))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		for range batch {
			line, err = r.ReadString('\n')
			if err != nil {
				return err
			}
			if !strings.HasPrefix(line, "$100") {
				return fmt.Errorf("GET reply %q", line)
			}
			if _, err := io.CopyN(io.Discard, r, 102); err != nil {
				return err
			}
		}
		sent += batch
	}
	return nil
}
