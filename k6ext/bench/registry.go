package bench

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/lib"

	"github.com/benchrun/benchrun/internal/results"
)

// registry holds every Recorder created in this process. The lock is taken only when a VU
// meets a scenario for the first time, when it leaves one, and when the document is built.
type registry struct {
	mu      sync.Mutex
	recs    map[*results.Recorder]struct{} // live recorders
	done    map[string][]results.Scenario  // snapshots of retired recorders by scenario, compacted
	merging int                            // compactions of done under way
	merged  *sync.Cond                     // signalled (on mu) when one ends
	types   map[string]string              // scenario name -> type, one per scenario

	// Live metrics (remote write): 0 when off. The pusher bumps epoch every interval; a VU
	// seeing a new epoch publishes a snapshot of its recorder into live (off the hot path:
	// one atomic load per call).
	epoch    atomic.Int64
	live     map[*results.Recorder]liveSnap
	doneLive map[string]*liveStats // retired recorders' figures by scenario, for live metrics
	starts   map[string]time.Time  // scenario name -> k6's start time of the scenario, for live progress
}

// liveSnap is a VU's last published figures and the epoch they were published in.
type liveSnap struct {
	stats *liveStats
	epoch int64
}

// newRegistry returns an empty registry.
func newRegistry() *registry {
	g := &registry{recs: map[*results.Recorder]struct{}{}, types: map[string]string{}, done: map[string][]results.Scenario{},
		live: map[*results.Recorder]liveSnap{}, doneLive: map[string]*liveStats{}, starts: map[string]time.Time{}}
	g.merged = sync.NewCond(&g.mu)
	return g
}

// recorders is the process-wide registry shared by every VU and the output.
var recorders = newRegistry()

// setType fixes the type of a scenario unless it is already known; it reports the type.
func (g *registry) setType(name, scenarioType string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.types[name]; ok {
		return t
	}
	g.types[name] = scenarioType
	return scenarioType
}

// add creates and registers a new Recorder. A scenario has one type in the whole process
// (documents with different types for one scenario do not merge): the type declared with
// benchrun.scenarioType, else the type of the first call recorded in it.
func (g *registry) add(name, scenarioType string) *results.Recorder {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.types[name]; ok {
		scenarioType = t
	} else {
		g.types[name] = scenarioType
	}
	r := results.NewRecorder(name, scenarioType)
	if offs := faultOffsets()[name]; len(offs) > 0 {
		start := g.starts[name] // when k6 started the scenario; else now, as the first VU meets it
		if start.IsZero() {
			start = time.Now()
		}
		r.SetWindows(results.FaultWindows(start, offs))
	}
	g.recs[r] = struct{}{}
	return r
}

// faultOffsets are the run's faults' offsets by scenario (results.FaultWindowsEnv), read once;
// a malformed value is no faults (the per-second figures are then missing, nothing else).
var faultOffsets = sync.OnceValue(func() map[string][]time.Duration {
	m, _ := results.ParseFaultOffsets(os.Getenv(results.FaultWindowsEnv))
	return m
})

// started notes when k6 started a scenario (the earliest time given), for live progress.
func (g *registry) started(name string, t time.Time) {
	if t.IsZero() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.starts[name]; !ok || t.Before(s) {
		g.starts[name] = t
	}
}

// startOf returns when k6 started a scenario (zero when unknown).
func (g *registry) startOf(name string) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.starts[name]
}

// typeOf returns the type of a scenario ("" when unknown).
func (g *registry) typeOf(name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.types[name]
}

// compactAt is how many retired snapshots of one scenario are merged into one.
const compactAt = 32

// retire replaces a recorder its VU no longer uses by its snapshot, so a VU holds one
// Recorder (about 190 KiB of histogram) at a time however many scenarios it runs. Every
// compactAt snapshots of a scenario are merged into one off the VU's path (compact), so a
// runner of thousands of VUs holds a few snapshots per scenario, not one per VU (each up to
// ~100 KiB with its latency timeline).
func (g *registry) retire(r *results.Recorder) {
	s := r.Scenario()
	live := g.epoch.Load() != 0
	var ls *liveStats
	if live {
		ls = statsOf(&s)
	}
	g.mu.Lock()
	delete(g.recs, r)
	delete(g.live, r)
	g.done[s.Name] = append(g.done[s.Name], s)
	if batch := g.done[s.Name]; len(batch) >= compactAt {
		g.done[s.Name] = nil
		g.merging++
		go g.compact(s.Name, batch)
	}
	if live {
		if d := g.doneLive[s.Name]; d != nil {
			d.add(ls)
		} else {
			g.doneLive[s.Name] = ls
		}
	}
	g.mu.Unlock()
}

// publish stores a live snapshot of r, taken by its VU, for the remote-write pusher.
func (g *registry) publish(r *results.Recorder, epoch int64) {
	s := r.LiveScenario()
	ls := statsOf(&s) // a VU keeps ~600 bytes, not its HDR buckets
	g.mu.Lock()
	if _, ok := g.recs[r]; ok {
		g.live[r] = liveSnap{stats: ls, epoch: epoch}
	}
	g.mu.Unlock()
}

// newEpoch asks every VU to publish a fresh snapshot at its next call and returns the
// previous epoch.
func (g *registry) newEpoch() int64 { return g.epoch.Add(1) - 1 }

// unpublished counts the live recorders whose VU has not published in epoch e yet.
func (g *registry) unpublished(e int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for r := range g.recs {
		if g.live[r].epoch < e {
			n++
		}
	}
	return n
}

// liveStatsByScenario sums the retired recorders' and the VUs' latest published figures per
// scenario and counts per scenario the VUs that published since epoch since (made calls since
// then). Call it shortly after newEpoch: busy VUs have published by then, so the figures are
// fresh; a VU blocked in a long call contributes its previous snapshot.
func (g *registry) liveStatsByScenario(since int64) (map[string]*liveStats, map[string]int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]*liveStats, len(g.doneLive))
	add := func(name string, ls *liveStats) {
		if sum := out[name]; sum != nil {
			sum.add(ls)
		} else {
			out[name] = ls.clone()
		}
	}
	for name, ls := range g.doneLive {
		add(name, ls)
	}
	vus := map[string]int{}
	for _, s := range g.live {
		add(s.stats.name, s.stats)
		if s.epoch >= since {
			vus[s.stats.name]++
		}
	}
	return out, vus
}

// compact merges a batch of retired snapshots of scenario name into one and puts it back
// (exactly what document's merge would make of them; on an error the batch is put back as it
// was, and document reports the error).
func (g *registry) compact(name string, batch []results.Scenario) {
	docs := make([]*results.Document, len(batch))
	for i := range batch {
		docs[i] = &results.Document{SchemaVersion: results.SchemaVersion, Scenarios: batch[i : i+1]}
	}
	if doc, err := results.Merge(docs...); err == nil && len(doc.Scenarios) == 1 {
		batch = doc.Scenarios
	}
	g.mu.Lock()
	g.done[name] = append(g.done[name], batch...)
	g.merging--
	g.merged.Broadcast()
	g.mu.Unlock()
}

// document merges every recorder into one runner document. It must be called once the VUs
// stopped recording (the k6 output's Stop runs after the last iteration returned).
func (g *registry) document(runner string) (*results.Document, error) {
	g.mu.Lock()
	for g.merging > 0 {
		g.merged.Wait()
	}
	var scenarios []results.Scenario
	for _, done := range g.done {
		scenarios = append(scenarios, done...)
	}
	for r := range g.recs {
		scenarios = append(scenarios, r.Scenario())
	}
	g.mu.Unlock()
	return mergeScenarios(runner, scenarios)
}

// mergeScenarios merges scenario snapshots into one document of runner.
func mergeScenarios(runner string, scenarios []results.Scenario) (*results.Document, error) {
	docs := make([]*results.Document, 0, len(scenarios))
	for _, s := range scenarios {
		docs = append(docs, &results.Document{
			SchemaVersion: results.SchemaVersion,
			Runners:       []string{runner},
			Scenarios:     []results.Scenario{s},
		})
	}
	doc, err := results.Merge(docs...)
	if err != nil {
		return nil, err
	}
	doc.Runners = []string{runner}
	applyInfo(doc)
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return doc, nil
}

// VURecorders is one VU's recorder for the scenario it runs. It is used only from its VU's
// goroutine, so it takes no lock on the hot path.
type VURecorders struct {
	vu     modules.VU
	lastSS *lib.ScenarioState
	last   *results.Recorder
	epoch  int64 // live-metrics epoch of the last published snapshot
}

// NewVURecorders returns the recorder set of one VU.
func NewVURecorders(vu modules.VU) *VURecorders {
	return &VURecorders{vu: vu}
}

// Current returns the recorder of the scenario the VU is running, created with
// scenarioType on first use, or nil outside a scenario (init, setup, teardown): such calls
// are not recorded. When the VU moves to another scenario, the previous recorder is retired.
// With live metrics on, the VU publishes a snapshot of the recorder once per push interval.
func (v *VURecorders) Current(scenarioType string) *results.Recorder {
	r := v.current(scenarioType)
	if e := recorders.epoch.Load(); e != v.epoch && r != nil && e != 0 {
		v.epoch = e
		recorders.publish(r, e)
	}
	return r
}

// current is Current without the live publishing.
func (v *VURecorders) current(scenarioType string) *results.Recorder {
	if v.vu.State() == nil {
		return nil
	}
	ss := lib.GetScenarioState(v.vu.Context())
	if ss == nil {
		return nil
	}
	if ss == v.lastSS {
		return v.last
	}
	if v.last != nil {
		if v.lastSS.Name == ss.Name {
			v.lastSS = ss
			return v.last
		}
		recorders.retire(v.last)
	}
	recorders.started(ss.Name, ss.StartTime) // first: add places the fault windows from it
	v.lastSS, v.last = ss, recorders.add(ss.Name, scenarioType)
	countVU(ss.Name)
	return v.last
}

// runnerName returns BENCHRUN_RUNNER from env, else the host name.
func runnerName(env map[string]string) string {
	if n := env["BENCHRUN_RUNNER"]; n != "" {
		return n
	}
	if n := os.Getenv("BENCHRUN_RUNNER"); n != "" {
		return n
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "runner"
}
