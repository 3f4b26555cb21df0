package redisrole

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Follower defaults.
const (
	// DefaultInterval is how often a Follower checks by default.
	DefaultInterval = 500 * time.Millisecond
	// DefaultUnresponsive is how long a master's server may stay silent before its pod loses
	// the master label by default: below the sentinels' down-after (5 s), so the master
	// Service is already empty when the sentinels promote a replica.
	DefaultUnresponsive = 3 * time.Second
	// CheckTimeout bounds one ROLE or sentinel query.
	CheckTimeout = time.Second
)

// Follower labels its own pod with the role of the Redis server beside it, by the rule of
// Decide.
type Follower struct {
	// Client patches the pod.
	Client client.Client
	// Namespace and Pod name the pod to label.
	Namespace, Pod string
	// Addr is the local Redis server (default 127.0.0.1:6379).
	Addr string
	// Password authenticates to Redis (from a Secret-backed environment variable).
	Password string
	// Sentinels are asked each check, one query per entry (the sentinel Service repeated, so
	// that the connections spread over its pods); none: the server's own role decides alone.
	Sentinels []string
	// Group is the sentinels' master group name.
	Group string
	// Self is this server's host name as the sentinels report it.
	Self string
	// Interval is how often the role is checked (default DefaultInterval).
	Interval time.Duration
	// Unresponsive is how long a silent server keeps the master label when there are
	// sentinels to promote a replica (default DefaultUnresponsive); without sentinels a
	// silent master keeps it (clients wait for it, as they would for any paused server).
	Unresponsive time.Duration
	// Logf reports errors and label changes (default: none).
	Logf func(format string, args ...any)
}

// defaults fills the zero fields.
func (f *Follower) defaults() {
	if f.Addr == "" {
		f.Addr = "127.0.0.1:6379"
	}
	if f.Interval <= 0 {
		f.Interval = DefaultInterval
	}
	if f.Unresponsive <= 0 {
		f.Unresponsive = DefaultUnresponsive
	}
	if f.Logf == nil {
		f.Logf = func(string, ...any) {}
	}
}

// Run checks every Interval and patches the label when Decide changes it, until ctx ends.
func (f *Follower) Run(ctx context.Context) error {
	f.defaults()
	var st State
	labelled := ""
	silent := time.Duration(0) // the last check's silence, to log the end of one
	for {
		start := time.Now()
		obs := f.observe(ctx, &st)
		switch {
		case obs.Failures == 1:
			f.Logf("redis role: %s", obs.Err)
		case obs.Err == "" && silent > 0:
			f.Logf("redis role: the server answers again after %v", silent.Round(time.Millisecond))
		}
		silent = obs.Silent
		unresponsive := f.Unresponsive
		if len(f.Sentinels) == 0 {
			unresponsive = 0
		}
		if want := Decide(labelled, obs, f.Self, unresponsive); want != "" && want != labelled {
			if err := f.label(ctx, want); err != nil {
				f.Logf("labelling pod %s: %v", f.Pod, err)
			} else {
				f.Logf("labelled %s %s (server: %q, sentinels' master: %q, silent %v)", f.Pod, want,
					obs.Role, obs.Master, obs.Silent.Round(time.Millisecond))
				labelled = want
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(start.Add(f.Interval))):
		}
	}
}

// observe asks the server its role and the sentinels their master, concurrently.
func (f *Follower) observe(ctx context.Context, st *State) Observation {
	qctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	masterc := make(chan string, 1)
	go func() { masterc <- SentinelMaster(qctx, f.Sentinels, f.Group) }()
	role, err := Role(qctx, f.Addr, f.Password)
	obs := st.Observe(role, err == nil, time.Now())
	if err != nil {
		obs.Err = err.Error()
	}
	obs.Master = <-masterc
	return obs
}

// label sets the role label on the pod.
func (f *Follower) label(ctx context.Context, role string) error {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = f.Namespace, f.Pod
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, Label, role)
	return f.Client.Patch(ctx, pod, client.RawPatch("application/merge-patch+json", []byte(patch)))
}
