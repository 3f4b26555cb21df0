// Package bench is benchrun's k6 extension: the JS module k6/x/benchrun (per-VU result
// recorders, synchronous Redis hot paths, YCSB key generators) and the k6 output "benchrun"
// that writes the result document when the test ends.
package bench

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/output"
)

func init() {
	modules.Register("k6/x/benchrun", new(RootModule))
	output.RegisterExtension(OutputName, NewOutput)
}

// RootModule is the global k6/x/benchrun module.
type RootModule struct{}

// NewModuleInstance returns the module instance of one VU.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &Module{vu: vu, recs: NewVURecorders(vu), rng: newRand()}
}

// Module is the k6/x/benchrun instance of one VU.
type Module struct {
	vu   modules.VU
	recs *VURecorders
	rng  *rand.Rand
}

// newRand returns a fast unsynchronised random source seeded from the global one.
func newRand() *rand.Rand { return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) }

// Exports lists the JS API: the functions of this file and scenarioinfo.go, then every hot
// path registered by its own file (registerHotPath).
func (m *Module) Exports() modules.Exports {
	named := map[string]any{
		"record":       m.record,
		"time":         m.time,
		"randint":      m.randint,
		"keys":         m.keys,
		"scenarioType": m.scenarioType,
		"scenarioInfo": m.jsScenarioInfo,
		"serverCounts": m.jsServerCounts,
		"take":         m.jsTake,
	}
	for name, fn := range hotPaths {
		named[name] = func(c sobek.FunctionCall) sobek.Value { return fn(m, c) }
	}
	return modules.Exports{Named: named}
}

// hotPaths are the JS functions of k6/x/benchrun that open a workload's Go client (redis,
// echo, http, grpc), by name: each file registers its own in init (registerHotPath), so a new
// protocol's hot path is a new file and no edit here.
var hotPaths = map[string]func(*Module, sobek.FunctionCall) sobek.Value{}

// registerHotPath adds the JS function name of k6/x/benchrun, fn called on the VU's Module;
// it panics when name is taken (two files registering one name).
func registerHotPath(name string, fn func(*Module, sobek.FunctionCall) sobek.Value) {
	if _, ok := hotPaths[name]; ok {
		panic("k6/x/benchrun: hot path " + name + " registered twice")
	}
	hotPaths[name] = fn
}

// scenarioType(name, type) declares the type of a scenario (e.g. "redis.mixed") before
// anything is recorded in it, for scenarios whose calls are of several kinds; otherwise
// the type of the first recorded call is used. Returns the type in effect.
func (m *Module) scenarioType(c sobek.FunctionCall) sobek.Value {
	return m.vu.Runtime().ToValue(recorders.setType(c.Argument(0).String(), c.Argument(1).String()))
}

// record(durationMs, returnValue?, errKind?, scenarioType?) records one call that just ended.
func (m *Module) record(c sobek.FunctionCall) sobek.Value {
	d := time.Duration(c.Argument(0).ToFloat() * float64(time.Millisecond))
	typ := "custom"
	if a := c.Argument(3); !sobek.IsUndefined(a) && !sobek.IsNull(a) {
		typ = a.String()
	}
	if r := m.recs.Current(typ); r != nil {
		errKind := ""
		if a := c.Argument(2); !sobek.IsUndefined(a) && !sobek.IsNull(a) {
			errKind = a.String()
		}
		r.Record(time.Now().Add(-d), d, jsStr(c.Argument(1)), errKind)
	}
	return sobek.Undefined()
}

// time(fn, scenarioType?) calls fn, records its duration and str(result) (or the exception
// as errKind "exception", rethrown) and returns its result.
func (m *Module) time(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	fn, ok := sobek.AssertFunction(c.Argument(0))
	if !ok {
		common.Throw(rt, errors.New("benchrun.time: argument must be a function"))
	}
	typ := "custom"
	if a := c.Argument(1); !sobek.IsUndefined(a) {
		typ = a.String()
	}
	start := time.Now()
	v, err := fn(sobek.Undefined())
	d := time.Since(start)
	if r := m.recs.Current(typ); r != nil {
		if err != nil {
			r.Record(start, d, "", "exception")
		} else {
			r.Record(start, d, jsStr(v), "")
		}
	}
	if err != nil {
		var exc *sobek.Exception
		if errors.As(err, &exc) {
			panic(exc.Value())
		}
		panic(rt.NewGoError(err))
	}
	return v
}

// randint(a, b) returns a uniform integer in [a, b], like Python's random.randint.
func (m *Module) randint(c sobek.FunctionCall) sobek.Value {
	a, b := c.Argument(0).ToInteger(), c.Argument(1).ToInteger()
	if b < a {
		a, b = b, a
	}
	return m.vu.Runtime().ToValue(a + m.rng.Int64N(b-a+1))
}

// jsStr formats a JS value like Python's str() would format the same value.
func jsStr(v sobek.Value) string {
	switch {
	case v == nil || sobek.IsUndefined(v) || sobek.IsNull(v):
		return "None"
	}
	switch x := v.Export().(type) {
	case bool, int64, float64, string:
		return PyStr(x)
	}
	return v.String()
}

// keys(distribution, recordCount, prefix?, {runnerIndex, runnerCount}?) returns a YCSB key
// chooser with next() and nextInsert() for scripts that issue their own commands; the runner
// slot defaults to __ENV.BENCHRUN_RUNNER_INDEX and BENCHRUN_RUNNER_COUNT.
func (m *Module) keys(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	prefix := "benchrun:keys:"
	if a := c.Argument(2); !sobek.IsUndefined(a) && !sobek.IsNull(a) {
		prefix = a.String()
	}
	index, count, err := runnerSlot(rt, c.Argument(3))
	if err != nil {
		common.Throw(rt, err)
	}
	k, err := NewRunnerKeyChooser(c.Argument(0).String(), c.Argument(1).ToInteger(), prefix, index, count)
	if err != nil {
		common.Throw(rt, err)
	}
	o := rt.NewObject()
	_ = o.Set("next", func(sobek.FunctionCall) sobek.Value { return rt.ToValue(k.Next(m.rng)) })
	_ = o.Set("nextInsert", func(sobek.FunctionCall) sobek.Value { return rt.ToValue(k.NextInsert()) })
	return o
}
