package redisrole

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// fakeRedis answers AUTH (password "pw") and ROLE with role, one connection at a time.
func fakeRedis(t *testing.T, role string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(conn)
			for {
				var args []string
				head, err := r.ReadString('\n')
				if err != nil {
					break
				}
				n := 0
				for _, c := range strings.TrimSpace(head[1:]) {
					n = n*10 + int(c-'0')
				}
				for range n {
					_, _ = r.ReadString('\n')
					a, _ := r.ReadString('\n')
					args = append(args, strings.TrimSpace(a))
				}
				switch args[0] {
				case "AUTH":
					if args[1] == "pw" {
						_, _ = conn.Write([]byte("+OK\r\n"))
					} else {
						_, _ = conn.Write([]byte("-WRONGPASS\r\n"))
					}
				case "ROLE":
					_, _ = conn.Write([]byte("*3\r\n$" + string(rune('0'+len(role))) + "\r\n" + role + "\r\n:0\r\n*0\r\n"))
				}
			}
			_ = conn.Close()
		}
	}()
	return ln.Addr().String()
}

func TestRole(t *testing.T) {
	ctx := context.Background()
	if role, err := Role(ctx, fakeRedis(t, "slave"), "pw"); err != nil || role != "replica" {
		t.Fatalf("%q %v", role, err)
	}
	if role, err := Role(ctx, fakeRedis(t, "master"), ""); err != nil || role != "master" {
		t.Fatalf("%q %v", role, err)
	}
	if _, err := Role(ctx, fakeRedis(t, "master"), "bad"); err == nil {
		t.Fatal("bad password accepted")
	}
}

func TestFollowerLabelsPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{Label: "replica"}}}
	c := fake.NewClientBuilder().WithObjects(pod).Build()
	ctx, cancel := context.WithCancel(context.Background())
	f := &Follower{Client: c, Namespace: "ns", Pod: "p", Addr: fakeRedis(t, "master"), Password: "pw", Interval: 10e6}
	done := make(chan struct{})
	go func() { _ = f.Run(ctx); close(done) }()
	for {
		var got corev1.Pod
		_ = c.Get(ctx, client.ObjectKeyFromObject(pod), &got)
		if got.Labels[Label] == "master" {
			break
		}
	}
	cancel()
	<-done
}
