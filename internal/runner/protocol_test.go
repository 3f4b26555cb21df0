package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

// TestAgentStoresResultInResultConfigMap: with a result ConfigMap named, the document goes
// there (not into the state ConfigMap, which the manager caches) and the state says its size.
func TestAgentStoresResultInResultConfigMap(t *testing.T) {
	c, a := setup(t, plan.Invocation{Script: "x.js"})
	if err := c.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-result-0"}}); err != nil {
		t.Fatal(err)
	}
	a.ResultName = "r-result-0"
	doc, _ := results.NewDocument("runner-0")
	a.Load = &scriptedLoad{path: a.ResultFile, doc: doc}
	go func() { _, _ = release(c, 20*time.Millisecond) }()
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	cm := state(t, c)
	st := ParseState(cm, 0)
	if st.State != StateDone || !st.HasResult || st.ResultInState || len(cm.BinaryData) != 0 || cm.Data[KeyResultBytes] == "" {
		t.Fatalf("state %+v data %v binary %d", st, cm.Data, len(cm.BinaryData))
	}
	var res corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-result-0"}, &res); err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeResult(&res); err != nil || len(got.Runners) != 1 {
		t.Fatalf("stored result %+v, %v", got, err)
	}
}

// TestAgentResultConfigMapMissing: a result that cannot be stored fails the runner with the
// reason instead of claiming a result.
func TestAgentResultConfigMapMissing(t *testing.T) {
	c, a := setup(t, plan.Invocation{Script: "x.js"})
	a.ResultName = "r-result-0" // never created
	doc, _ := results.NewDocument("runner-0")
	a.Load = &scriptedLoad{path: a.ResultFile, doc: doc}
	go func() { _, _ = release(c, 20*time.Millisecond) }()
	if err := a.Run(context.Background()); err == nil {
		t.Fatal("no error")
	}
	if st := ParseState(state(t, c), 0); st.State != StateFailed || st.HasResult || st.Reason == "" {
		t.Fatalf("state %+v", st)
	}
}

// TestBarrierWatchedNotPolled: a runner waiting 1.5 s at the barrier reads it a handful of
// times (it watches the one object) where the fixed 10 ms poll read it ~150 times, and it
// still sees the release at once.
func TestBarrierWatchedNotPolled(t *testing.T) {
	var gets, watches atomic.Int32
	inv, _ := EncodeInvocation(plan.Invocation{Script: "x.js"})
	c := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-runner-0"}, Data: map[string]string{KeyInvocation: inv}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-barrier"}},
	).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == "r-barrier" {
				gets.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			watches.Add(1)
			return c.Watch(ctx, list, opts...)
		},
	}).Build()
	a := &Agent{Client: c, Namespace: "ns", StateName: "r-runner-0", BarrierName: "r-barrier", ResultFile: t.TempDir() + "/r.json",
		CgroupDir: t.TempDir(), Poll: 10 * time.Millisecond}
	a.defaults()
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		var b corev1.ConfigMap
		_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-barrier"}, &b)
		now := time.Now()
		b.Data = map[string]string{KeyStartAt: now.UTC().Format(time.RFC3339Nano)}
		_ = c.Update(context.Background(), &b)
		released <- now
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.waitBarrier(ctx); err != nil {
		t.Fatal(err)
	}
	at := <-released
	if late := time.Since(at); late > 200*time.Millisecond {
		t.Errorf("release seen %s late", late)
	}
	if g := gets.Load(); g > 6 || watches.Load() == 0 {
		t.Fatalf("barrier read %d times with %d watches while waiting 1.5 s", g, watches.Load())
	}
	t.Logf("barrier: %d reads, %d watch(es) in 1.5 s (10 ms polling: ~150 reads)", gets.Load()-1, watches.Load())
}

// TestBarrierBackoffWithoutWatch: a client that cannot watch reads the barrier with a
// doubling delay bounded by MaxBarrierBackoff.
func TestBarrierBackoffWithoutWatch(t *testing.T) {
	var gets atomic.Int32
	base := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-barrier"}}).Build()
	a := &Agent{Client: getOnly{base, &gets}, Namespace: "ns", BarrierName: "r-barrier", Poll: 10 * time.Millisecond}
	a.defaults()
	go func() {
		time.Sleep(2500 * time.Millisecond)
		var b corev1.ConfigMap
		_ = base.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-barrier"}, &b)
		b.Data = map[string]string{KeyStartAt: time.Now().UTC().Format(time.RFC3339Nano)}
		_ = base.Update(context.Background(), &b)
	}()
	begin := time.Now()
	if _, err := a.waitBarrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 10+20+40+...+640 ms, then 1 s steps: ~9 reads in 2.5 s instead of 250.
	if g := gets.Load(); g > 12 || time.Since(begin) > 2500*time.Millisecond+MaxBarrierBackoff+200*time.Millisecond {
		t.Fatalf("%d reads, released after %s", g, time.Since(begin))
	}
}

// getOnly is a client that cannot watch, counting Gets.
type getOnly struct {
	client.Client
	gets *atomic.Int32
}

// Get implements client.Reader.
func (g getOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	g.gets.Add(1)
	return g.Client.Get(ctx, key, obj, opts...)
}
