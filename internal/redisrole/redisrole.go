// Package redisrole keeps a Redis pod's role label current, so that the builtin provider's
// master and replica Services follow a sentinel failover. It runs as a small sidecar
// (`benchrun-runner redis-role`) next to each builtin Redis server of an HA or proxy target.
package redisrole

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/resp"
)

// Label is the pod label holding the role: master or replica.
const Label = "bench.benchrun.io/redis-role"

// Role asks the Redis server at addr for its role with the ROLE command (after AUTH when
// password is set): master, replica or sentinel.
func Role(ctx context.Context, addr, password string) (string, error) {
	reply, err := resp.Do(ctx, addr, password, "ROLE")
	if err != nil {
		return "", err
	}
	// ROLE answers an array whose first element is the role; resp joins elements with newlines.
	switch role, _, _ := strings.Cut(reply, "\n"); role {
	case "master", "sentinel":
		return role, nil
	case "slave", "replica":
		return "replica", nil
	default:
		return "", fmt.Errorf("ROLE: unknown role %q", role)
	}
}

// Follower labels its own pod with the role of the Redis server beside it.
type Follower struct {
	// Client patches the pod.
	Client client.Client
	// Namespace and Pod name the pod to label.
	Namespace, Pod string
	// Addr is the local Redis server (default 127.0.0.1:6379).
	Addr string
	// Password authenticates to Redis (from a Secret-backed environment variable).
	Password string
	// Interval is how often the role is checked (default 1s).
	Interval time.Duration
	// Logf reports errors (default: none).
	Logf func(format string, args ...any)
}

// Run checks the role every Interval and patches the label when it changed, until ctx ends.
func (f *Follower) Run(ctx context.Context) error {
	if f.Addr == "" {
		f.Addr = "127.0.0.1:6379"
	}
	if f.Interval <= 0 {
		f.Interval = time.Second
	}
	if f.Logf == nil {
		f.Logf = func(string, ...any) {}
	}
	labelled := ""
	for {
		if role, err := Role(ctx, f.Addr, f.Password); err != nil {
			f.Logf("redis role: %v", err)
		} else if role != labelled {
			if err := f.label(ctx, role); err != nil {
				f.Logf("labelling pod %s: %v", f.Pod, err)
			} else {
				labelled = role
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(f.Interval):
		}
	}
}

// label sets the role label on the pod.
func (f *Follower) label(ctx context.Context, role string) error {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = f.Namespace, f.Pod
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, Label, role)
	return f.Client.Patch(ctx, pod, client.RawPatch("application/merge-patch+json", []byte(patch)))
}
