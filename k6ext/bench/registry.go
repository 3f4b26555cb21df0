package bench

import (
	"os"
	"sync"

	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/lib"

	"github.com/benchrun/benchrun/internal/results"
)

// registry holds every Recorder created in this process, in creation order. The lock is
// taken only when a VU meets a scenario for the first time and when the document is built.
type registry struct {
	mu   sync.Mutex
	recs []*results.Recorder
}

// recorders is the process-wide registry shared by every VU and the output.
var recorders = &registry{}

// add creates and registers a new Recorder.
func (g *registry) add(name, scenarioType string) *results.Recorder {
	r := results.NewRecorder(name, scenarioType)
	g.mu.Lock()
	g.recs = append(g.recs, r)
	g.mu.Unlock()
	return r
}

// document merges every recorder into one runner document. It must be called once the VUs
// stopped recording (the k6 output's Stop runs after the last iteration returned).
func (g *registry) document(runner string) (*results.Document, error) {
	g.mu.Lock()
	recs := append([]*results.Recorder(nil), g.recs...)
	g.mu.Unlock()
	docs := make([]*results.Document, 0, len(recs))
	for _, r := range recs {
		docs = append(docs, &results.Document{
			SchemaVersion: results.SchemaVersion,
			Runners:       []string{runner},
			Scenarios:     []results.Scenario{r.Scenario()},
		})
	}
	doc, err := results.Merge(docs...)
	if err != nil {
		return nil, err
	}
	doc.Runners = []string{runner}
	return doc, nil
}

// VURecorders is one VU's recorders, one per k6 scenario. It is used only from its VU's
// goroutine, so it takes no lock.
type VURecorders struct {
	vu     modules.VU
	byName map[string]*results.Recorder
	lastSS *lib.ScenarioState
	last   *results.Recorder
}

// NewVURecorders returns the recorder set of one VU.
func NewVURecorders(vu modules.VU) *VURecorders {
	return &VURecorders{vu: vu, byName: map[string]*results.Recorder{}}
}

// Current returns the recorder of the scenario the VU is running, created with
// scenarioType on first use, or nil outside a scenario (init, setup, teardown): such calls
// are not recorded.
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
	r, ok := v.byName[ss.Name]
	if !ok {
		r = recorders.add(ss.Name, scenarioType)
		v.byName[ss.Name] = r
	}
	v.lastSS, v.last = ss, r
	return r
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
