package controllers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// chaos is one chaos suite: the faulty manager, the runner simulator and what they did.
type chaos struct {
	t       *testing.T
	e       *env
	rng     *lockedRand
	mgr     *chaosManager
	on      atomic.Bool
	faults  *chaosCounts // API faults injected, by kind
	actions *chaosCounts // manager restarts, pods and Jobs deleted, specs edited
	sim     *chaosSim
	created []string
	mu      sync.Mutex
	deleted map[string]deletedRun // by UID: runs deleted unfinished
}

// deletedRun is a run the suite deleted while it was unfinished.
type deletedRun struct {
	name       string
	generation int64
}

// newChaos builds the suite: the manager's config sends every request through chaosTransport.
func newChaos(t *testing.T, e *env, rng *lockedRand, rate float64) *chaos {
	c := &chaos{t: t, e: e, rng: rng, deleted: map[string]deletedRun{}, faults: &chaosCounts{m: map[string]int{}}, actions: &chaosCounts{m: map[string]int{}}}
	c.on.Store(true)
	fc := rest.CopyConfig(cfg)
	fc.QPS, fc.Burst = 500, 1000
	fc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return &chaosTransport{next: rt, rng: rng, rate: rate, faults: c.faults, on: c.on.Load}
	}
	c.mgr = &chaosManager{t: t, cfg: fc, ns: e.ns}
	c.sim = &chaosSim{c: c, runners: map[string]*simRunner{}, jobSeen: map[string]bool{}, stored: map[string]int64{}, perDoc: map[string]string{},
		phases: map[v1alpha1.Phase]map[string]bool{}}
	return c
}

// every runs f every d (plus up to jitter) until quit is closed.
func every(wg *sync.WaitGroup, quit chan struct{}, d func() time.Duration, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-quit:
				return
			case <-time.After(d()):
				f()
			}
		}
	}()
}

// actors starts the runner simulator, the manager killer and the chaos actions; the returned
// function stops them.
func (c *chaos) actors() func() {
	var wg sync.WaitGroup
	quit := make(chan struct{})
	every(&wg, quit, func() time.Duration { return 100 * time.Millisecond }, c.sim.tick)
	restart := chaosEnv("BENCHRUN_CHAOS_RESTART_MS", 4000) // mean time between manager restarts
	every(&wg, quit, func() time.Duration { return time.Duration(restart/2+c.rng.intn(restart)) * time.Millisecond }, func() {
		c.mgr.stop()
		c.actions.add("manager-restarts")
		c.mgr.start()
	})
	every(&wg, quit, func() time.Duration { return 200 * time.Millisecond }, func() {
		switch x := c.rng.float(); {
		case x < 0.10:
			c.sim.killPod()
		case x < 0.13:
			c.sim.killJob()
		case x < 0.19:
			c.editSpec()
		case x < 0.205:
			c.deleteRun()
		}
	})
	return func() { close(quit); wg.Wait() }
}

// newRun is run k of the suite: 1–3 runners, one or two scenarios, a third of them on one of
// two load pools (so runs queue).
func (c *chaos) newRun(k int) *v1alpha1.BenchmarkRun {
	run := c.e.redisRun(fmt.Sprintf("chaos-%03d", k), int32(1+c.rng.intn(3)))
	if c.rng.intn(2) == 0 {
		run.Spec.Load.Scenarios = run.Spec.Load.Scenarios[:1]
	}
	if c.rng.intn(3) == 0 {
		run.Spec.Load.Runners.Pool = []string{"pool-a", "pool-b"}[c.rng.intn(2)]
	}
	return run
}

// createRuns creates n runs, at most active unfinished at a time.
func (c *chaos) createRuns(n, active int, deadline time.Time) {
	for k := 0; k < n && time.Now().Before(deadline); {
		if len(c.unfinished()) >= active {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		run := c.newRun(k)
		if err := k8sClient.Create(c.e.ctx, run); err != nil {
			c.t.Fatalf("creating %s: %v", run.Name, err)
		}
		c.created = append(c.created, run.Name)
		k++
	}
}

// unfinished lists the runs whose current generation has not ended.
func (c *chaos) unfinished() []v1alpha1.BenchmarkRun {
	var list v1alpha1.BenchmarkRunList
	if err := k8sClient.List(c.e.ctx, &list, client.InNamespace(c.e.ns)); err != nil {
		c.t.Fatal(err)
	}
	var out []v1alpha1.BenchmarkRun
	for _, run := range list.Items {
		if run.Status.ObservedGeneration != run.Generation || !finished(run.Status.Phase) {
			out = append(out, run)
		}
	}
	return out
}

// waitAllFinished waits until every run created has ended, or deadline (then it fails,
// listing the runs that did not end: runs lost).
func (c *chaos) waitAllFinished(deadline time.Time) {
	for time.Now().Before(deadline) {
		if len(c.unfinished()) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, run := range c.unfinished() {
		c.t.Errorf("run lost: %s generation %d/%d phase %s conditions %+v", run.Name, run.Status.ObservedGeneration,
			run.Generation, run.Status.Phase, run.Status.Conditions)
	}
}

// editSpec changes the spec of a random run while it provisions, starts, loads or collects:
// its generation is superseded (stopped, collected into status.history) and a new one runs.
func (c *chaos) editSpec() {
	runs := c.unfinished()
	if len(runs) == 0 {
		return
	}
	run := runs[c.rng.intn(len(runs))]
	switch run.Status.Phase {
	case v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting, v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting:
	default:
		return
	}
	if run.Generation > 2 || run.Status.ObservedGeneration != run.Generation || run.DeletionTimestamp != nil {
		return
	}
	run.Spec.Load.Duration.Duration += time.Second
	if err := k8sClient.Update(c.e.ctx, &run); err == nil {
		c.actions.add("specs-edited")
	}
}

// deleteRun deletes a random unfinished run (the precondition: as it was read, unfinished, so
// its finalizer must keep what its runners stored in a report that outlives it).
func (c *chaos) deleteRun() {
	runs := c.unfinished()
	if len(runs) == 0 {
		return
	}
	run := runs[c.rng.intn(len(runs))]
	if run.DeletionTimestamp != nil || run.Status.ObservedGeneration != run.Generation || finished(run.Status.Phase) {
		return
	}
	rv := run.ResourceVersion
	if err := k8sClient.Delete(c.e.ctx, &run, client.Preconditions{ResourceVersion: &rv}); err == nil {
		c.mu.Lock()
		c.deleted[string(run.UID)] = deletedRun{name: run.Name, generation: run.Generation}
		c.mu.Unlock()
		c.actions.add("runs-deleted")
	}
}

// checkDeleted checks the runs deleted unfinished: gone, and what their last generation's
// runners stored kept in the report ConfigMap that outlives them (calls equal); it returns
// the calls lost.
func (c *chaos) checkDeleted() int64 {
	var cms corev1.ConfigMapList
	if err := k8sClient.List(c.e.ctx, &cms, client.InNamespace(c.e.ns)); err != nil {
		c.t.Fatal(err)
	}
	lost := int64(0)
	for uid, d := range c.deleted {
		stored := c.sim.stored[fmt.Sprintf("%s/%d", uid, d.generation)]
		kept, found := int64(0), false
		for _, cm := range cms.Items {
			if cm.Annotations[annotationKeptFrom] == d.name && strings.HasSuffix(cm.Name, "-report-"+uid[:8]) {
				var sum results.Summary
				found = json.Unmarshal([]byte(cm.Data["results.json"]), &sum) == nil
				for _, sc := range sum.Scenarios {
					kept += sc.Calls
				}
			}
		}
		if kept != stored {
			c.t.Errorf("deleted run %s (generation %d): %d calls stored, %d kept (kept report found: %v)", d.name, d.generation, stored, kept, found)
			lost += max(0, stored-kept)
		}
	}
	return lost
}

// simRunner is one simulated runner of one run generation.
type simRunner struct {
	calls    int           // calls per scenario it stores when it finishes
	finishIn time.Duration // after the barrier's start time
	podMade  bool          // its pod was created (the Job controller's part)
	killed   string        // why it was stopped (pod or Job deleted)
	stored   bool          // its document and final state were stored
}

// chaosSim simulates what envtest lacks (StatefulSets and Deployments ready, the Job's pods)
// and the runner agents, through the ConfigMap protocol, on a client without faults.
type chaosSim struct {
	c       *chaos
	mu      sync.Mutex
	runners map[string]*simRunner // uid/generation/index
	jobSeen map[string]bool       // uid/generation
	stored  map[string]int64      // uid/generation → calls in the documents stored
	perDoc  map[string]string     // uid/generation/index → what the runner stored (for failures)
	phases  map[v1alpha1.Phase]map[string]bool
	docs    int
}

// tick moves every run's simulated world one step.
func (s *chaosSim) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := s.c.e.ctx
	var list v1alpha1.BenchmarkRunList
	if err := k8sClient.List(ctx, &list, client.InNamespace(s.c.e.ns)); err != nil {
		return
	}
	s.targetsReady()
	for i := range list.Items {
		run := &list.Items[i]
		if s.phases[run.Status.Phase] == nil {
			s.phases[run.Status.Phase] = map[string]bool{}
		}
		s.phases[run.Status.Phase][run.Name] = true
		if gen := run.Status.ObservedGeneration; gen > 0 && run.Status.Runners != nil &&
			(run.Status.Phase == v1alpha1.PhaseStarting || run.Status.Phase == v1alpha1.PhaseRunning) {
			s.runGeneration(run, gen)
		}
	}
}

// targetsReady reports every StatefulSet and Deployment of the namespace ready.
func (s *chaosSim) targetsReady() {
	ctx, ns := s.c.e.ctx, s.c.e.ns
	var sts appsv1.StatefulSetList
	if k8sClient.List(ctx, &sts, client.InNamespace(ns)) == nil {
		for i := range sts.Items {
			o := &sts.Items[i]
			if n := ptr.Deref(o.Spec.Replicas, 1); o.Status.ReadyReplicas != n {
				o.Status.Replicas, o.Status.ReadyReplicas, o.Status.AvailableReplicas = n, n, n
				_ = k8sClient.Status().Update(ctx, o)
			}
		}
	}
	var deps appsv1.DeploymentList
	if k8sClient.List(ctx, &deps, client.InNamespace(ns)) == nil {
		for i := range deps.Items {
			o := &deps.Items[i]
			if n := ptr.Deref(o.Spec.Replicas, 1); o.Status.ReadyReplicas != n {
				o.Status.Replicas, o.Status.ReadyReplicas, o.Status.AvailableReplicas = n, n, n
				_ = k8sClient.Status().Update(ctx, o)
			}
		}
	}
}

// runGeneration moves the runners of one run generation: pods for its Job, the barrier, the
// load, and what a stopped runner does (stores its partial document, state failed).
func (s *chaosSim) runGeneration(run *v1alpha1.BenchmarkRun, gen int64) {
	ctx, p := s.c.e.ctx, prefix(run, gen)
	genKey := fmt.Sprintf("%s/%d", run.UID, gen)
	var job batchv1.Job
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: runner.JobName(p)}, &job)
	jobLive := err == nil && ownedBy(&job, run) && job.DeletionTimestamp == nil
	if jobLive {
		s.jobSeen[genKey] = true
	}
	jobGone := !jobLive && s.jobSeen[genKey]
	var barrier corev1.ConfigMap
	var startAt time.Time
	if k8sClient.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: runner.BarrierName(p)}, &barrier) == nil && ownedBy(&barrier, run) {
		startAt, _ = time.Parse(time.RFC3339Nano, barrier.Data[runner.KeyStartAt])
	}
	for i := range int(run.Status.Runners.Desired) {
		key := fmt.Sprintf("%s/%d", genKey, i)
		rs := s.runners[key]
		if rs == nil {
			rs = &simRunner{calls: 5 + s.c.rng.intn(40), finishIn: time.Duration(300+s.c.rng.intn(1500)) * time.Millisecond}
			s.runners[key] = rs
		}
		if jobGone && rs.killed == "" {
			rs.killed = "runner Job deleted"
		}
		if !rs.stored {
			s.runner(run, gen, i, rs, &job, jobLive, startAt)
		}
	}
}

// runner moves one runner: its pod, ready at the barrier, finished after the load, or stopped.
func (s *chaosSim) runner(run *v1alpha1.BenchmarkRun, gen int64, i int, rs *simRunner, job *batchv1.Job, jobLive bool, startAt time.Time) {
	ctx := s.c.e.ctx
	var cm corev1.ConfigMap
	if k8sClient.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: runner.StateName(prefix(run, gen), i)}, &cm) != nil || !ownedBy(&cm, run) {
		return
	}
	if jobLive && !rs.podMade && rs.killed == "" {
		rs.podMade = s.makePod(job, i) == nil
	}
	state := cm.Data[runner.KeyState]
	switch {
	case rs.killed != "" && !startAt.IsZero() && time.Now().After(startAt):
		s.store(run, gen, i, rs, max(1, rs.calls/3), runner.StateFailed, rs.killed+": k6 stopped early", startAt)
	case state == "" && rs.podMade:
		cm.Data[runner.KeyState] = runner.StateReady
		cm.Data[runner.KeyReadyAt] = time.Now().UTC().Format(time.RFC3339Nano)
		_ = k8sClient.Update(ctx, &cm)
	case !startAt.IsZero() && time.Now().After(startAt.Add(rs.finishIn)) && rs.killed == "":
		s.store(run, gen, i, rs, rs.calls, runner.StateDone, "", startAt)
	}
}

// makePod creates runner i's pod of job, as the Job controller would.
func (s *chaosSim) makePod(job *batchv1.Job, i int) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%d-x", job.Name, i), Namespace: job.Namespace,
		Labels:          map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)},
		Annotations:     job.Spec.Template.Annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}, Spec: job.Spec.Template.Spec}
	for k, v := range job.Spec.Template.Labels {
		pod.Labels[k] = v
	}
	return k8sClient.Create(s.c.e.ctx, pod)
}

// store stores runner i's document of calls per scenario as the agent does (the result
// ConfigMap, then the final state with its size) and counts it once the state is written.
func (s *chaosSim) store(run *v1alpha1.BenchmarkRun, gen int64, i int, rs *simRunner, calls int, state, reason string, start time.Time) {
	ctx := s.c.e.ctx
	gz, err := simDocument(run, i, start, calls)
	if err != nil {
		return
	}
	var res corev1.ConfigMap
	if k8sClient.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: runner.ResultName(prefix(run, gen), i)}, &res) != nil || !ownedBy(&res, run) {
		return
	}
	res.BinaryData = map[string][]byte{runner.KeyResult: gz}
	if k8sClient.Update(ctx, &res) != nil {
		return
	}
	var cm corev1.ConfigMap
	if k8sClient.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: runner.StateName(prefix(run, gen), i)}, &cm) != nil || !ownedBy(&cm, run) {
		return
	}
	cm.Data[runner.KeyState], cm.Data[runner.KeyResultBytes] = state, fmt.Sprint(len(gz))
	cm.Data[runner.KeyLoadStartedAt] = start.UTC().Format(time.RFC3339Nano)
	if reason != "" {
		cm.Data[runner.KeyReason] = reason
	}
	if k8sClient.Update(ctx, &cm) != nil {
		return
	}
	rs.stored = true
	s.docs++
	s.stored[fmt.Sprintf("%s/%d", run.UID, gen)] += int64(calls * len(run.Spec.Load.Scenarios))
	s.perDoc[fmt.Sprintf("%s/%d/%d", run.UID, gen, i)] = fmt.Sprintf("%s %d×%d at %s (%s)", state, calls, len(run.Spec.Load.Scenarios),
		time.Now().UTC().Format("15:04:05.000"), reason)
}

// simDocument is a runner's stored document (gzip'd JSON): calls of every scenario, 1 ms each.
func simDocument(run *v1alpha1.BenchmarkRun, i int, start time.Time, calls int) ([]byte, error) {
	var scs []results.Scenario
	for _, sc := range run.Spec.Load.Scenarios {
		rec := results.NewRecorder(sc.Name, string(sc.Type))
		for k := range calls {
			rec.Record(start.Add(time.Duration(k)*time.Second/time.Duration(calls)), time.Millisecond, "OK", "")
		}
		scs = append(scs, rec.Scenario())
	}
	doc, err := results.NewDocument(fmt.Sprintf("runner-%d", i), scs...)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := results.Encode(&b, doc); err != nil {
		return nil, err
	}
	return runner.EncodeResult(b.Bytes())
}

// victims lists the runners whose load runs (pod made, not stopped, not stored).
func (s *chaosSim) victims() []string {
	var out []string
	for key, rs := range s.runners {
		if rs.podMade && rs.killed == "" && !rs.stored {
			out = append(out, key)
		}
	}
	return out
}

// killPod deletes a random loading runner's pod (its agent stores what it measured so far).
func (s *chaosSim) killPod() {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.victims()
	if len(v) == 0 {
		return
	}
	key := v[s.c.rng.intn(len(v))]
	if name, ok := s.podOf(key); ok {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.c.e.ns, Name: name}}
		if k8sClient.Delete(s.c.e.ctx, pod) == nil {
			s.runners[key].killed = "runner pod deleted"
			s.c.actions.add("pods-deleted")
		}
	}
}

// killJob deletes the runner Job of a random loading runner's generation.
func (s *chaosSim) killJob() {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.victims()
	if len(v) == 0 {
		return
	}
	if name, ok := s.podOf(v[s.c.rng.intn(len(v))]); ok {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: s.c.e.ns, Name: name[:strings.LastIndex(name[:strings.LastIndex(name, "-")], "-")]}}
		if k8sClient.Delete(s.c.e.ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)) == nil {
			s.c.actions.add("jobs-deleted")
		}
	}
}

// podOf is the pod name of runner key (uid/generation/index).
func (s *chaosSim) podOf(key string) (string, bool) {
	parts := strings.Split(key, "/")
	var list v1alpha1.BenchmarkRunList
	if len(parts) != 3 || k8sClient.List(s.c.e.ctx, &list, client.InNamespace(s.c.e.ns)) != nil {
		return "", false
	}
	for i := range list.Items {
		if run := &list.Items[i]; string(run.UID) == parts[0] {
			var gen int64
			_, _ = fmt.Sscan(parts[1], &gen)
			return fmt.Sprintf("%s-%s-x", runner.JobName(prefix(run, gen)), parts[2]), true
		}
	}
	return "", false
}

// report checks the outcome and prints the figures: every run ended within its deadlines,
// every stored document is merged in status.results or status.history (calls merged equal the
// calls stored, per generation).
func (c *chaos) report(wall time.Duration) {
	var list v1alpha1.BenchmarkRunList
	if err := k8sClient.List(c.e.ctx, &list, client.InNamespace(c.e.ns)); err != nil {
		c.t.Fatal(err)
	}
	s := c.sim
	s.mu.Lock()
	defer s.mu.Unlock()
	runsLost, resultsLost, generations, outcomes := 0, int64(0), 0, map[string]int{}
	for i := range list.Items {
		run := &list.Items[i]
		if !finished(run.Status.Phase) || run.Status.ObservedGeneration != run.Generation {
			runsLost++
			continue
		}
		outcome := string(run.Status.Phase)
		if c := apimeta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded); c != nil && c.Reason != outcome {
			outcome += "/" + c.Reason
		}
		outcomes[outcome]++
		c.checkDeadline(run)
		merged := map[int64]int64{run.Status.ObservedGeneration: sumCalls(run.Status.Results)}
		for _, h := range run.Status.History {
			merged[h.Generation] = sumCalls(h.Results)
		}
		for gen := int64(1); gen <= run.Generation; gen++ {
			generations++
			stored := s.stored[fmt.Sprintf("%s/%d", run.UID, gen)]
			if got := merged[gen]; got != stored {
				var docs []string
				for i := range 3 {
					docs = append(docs, s.perDoc[fmt.Sprintf("%s/%d/%d", run.UID, gen, i)])
				}
				c.t.Errorf("run %s generation %d: %d calls stored by its runners, %d merged (phase %s, reasons %q; stored %q; runners %+v; results %+v; conditions %+v)",
					run.Name, gen, stored, got, run.Status.Phase, run.Status.PartialReasons, docs, run.Status.Runners, run.Status.Results, run.Status.Conditions)
				for _, h := range run.Status.History {
					c.t.Logf("  history of %s: generation %d phase %s partial %v results %d report %+v", run.Name, h.Generation, h.Phase, h.Partial, len(h.Results), h.Report)
				}
				resultsLost += max(0, stored-got)
			}
		}
	}
	resultsLost += c.checkDeleted()
	phases := make([]string, 0, len(s.phases))
	for _, p := range []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseQueued, v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting,
		v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed} {
		phases = append(phases, fmt.Sprintf("%s=%d", p, len(s.phases[p])))
	}
	c.t.Logf("chaos: runs %d (generations %d; %v; %d deleted unfinished), documents stored %d", len(list.Items)+len(c.deleted),
		generations, outcomes, len(c.deleted), s.docs)
	c.t.Logf("chaos: runs seen in each phase: %s", strings.Join(phases, " "))
	c.t.Logf("chaos: API faults injected %d: %s", c.faultTotal(), c.faults)
	c.t.Logf("chaos: actions: %s", c.actions)
	c.t.Logf("chaos: SUMMARY runs=%d faults=%d manager-restarts=%d runs-lost=%d results-lost=%d wall=%s",
		len(list.Items)+len(c.deleted), c.faultTotal(), c.actions.get("manager-restarts"), runsLost, resultsLost, wall.Round(time.Second))
	if len(list.Items)+len(c.deleted) < len(c.created) || runsLost > 0 || resultsLost > 0 {
		c.t.Errorf("chaos: %d runs lost, %d calls lost", runsLost, resultsLost)
	}
}

// faultTotal is the number of API faults injected.
func (c *chaos) faultTotal() int {
	c.faults.mu.Lock()
	defer c.faults.mu.Unlock()
	n := 0
	for _, v := range c.faults.m {
		n += v
	}
	return n
}

// checkDeadline fails when a run's current generation took longer than its own bounds
// (timeouts.run plus the collect deadline) from its start.
func (c *chaos) checkDeadline(run *v1alpha1.BenchmarkRun) {
	st := run.Status
	if st.StartTime == nil || st.CompletionTime == nil {
		c.t.Errorf("run %s ended %s without start or completion time", run.Name, st.Phase)
		return
	}
	if took, bound := st.CompletionTime.Sub(st.StartTime.Time), lifecycle.RunTimeout(run)+collectTimeout; took > bound {
		c.t.Errorf("run %s took %s, over its bound %s", run.Name, took, bound)
	}
}

// sumCalls is the calls of every scenario result.
func sumCalls(rs []v1alpha1.ScenarioResult) int64 {
	var n int64
	for _, r := range rs {
		n += r.Calls
	}
	return n
}
