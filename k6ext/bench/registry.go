package bench

import (
	"os"
	"sync"

	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/lib"

	"github.com/benchrun/benchrun/internal/results"
)

// registry holds every Recorder created in this process. The lock is taken only when a VU
// meets a scenario for the first time, when it leaves one, and when the document is built.
type registry struct {
	mu    sync.Mutex
	recs  map[*results.Recorder]struct{} // live recorders
	done  []results.Scenario             // snapshots of retired recorders
	types map[string]string              // scenario name -> type, one per scenario
}

// recorders is the process-wide registry shared by every VU and the output.
var recorders = &registry{recs: map[*results.Recorder]struct{}{}, types: map[string]string{}}

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
	g.recs[r] = struct{}{}
	return r
}

// typeOf returns the type of a scenario ("" when unknown).
func (g *registry) typeOf(name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.types[name]
}

// retire replaces a recorder its VU no longer uses by its (small) snapshot, so a VU holds
// one Recorder (about 190 KiB of histogram) at a time however many scenarios it runs.
func (g *registry) retire(r *results.Recorder) {
	s := r.Scenario()
	g.mu.Lock()
	delete(g.recs, r)
	g.done = append(g.done, s)
	g.mu.Unlock()
}

// document merges every recorder into one runner document. It must be called once the VUs
// stopped recording (the k6 output's Stop runs after the last iteration returned).
func (g *registry) document(runner string) (*results.Document, error) {
	g.mu.Lock()
	scenarios := append([]results.Scenario(nil), g.done...)
	for r := range g.recs {
		scenarios = append(scenarios, r.Scenario())
	}
	g.mu.Unlock()
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
}

// NewVURecorders returns the recorder set of one VU.
func NewVURecorders(vu modules.VU) *VURecorders {
	return &VURecorders{vu: vu}
}

// Current returns the recorder of the scenario the VU is running, created with
// scenarioType on first use, or nil outside a scenario (init, setup, teardown): such calls
// are not recorded. When the VU moves to another scenario, the previous recorder is retired.
func (v *VURecorders) Current(scenarioType string) *results.Recorder {
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
