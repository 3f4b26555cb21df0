// Package suite expands a BenchmarkSuite into its child BenchmarkRun specs (variants × sweep
// points × repetitions, interleaved) and computes the statistics over repeated runs that its
// tables and verdict use: mean, spread, a 95 % confidence interval and a significance test.
// It is pure: the controller and the bench feed it specs and results.
package suite

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// Labels put on a suite's child runs.
const (
	// LabelSuite is the suite's name.
	LabelSuite = "bench.benchrun.io/suite"
	// LabelVariant is the child's variant.
	LabelVariant = "bench.benchrun.io/variant"
	// LabelRepetition is the child's repetition (from 1).
	LabelRepetition = "bench.benchrun.io/repetition"
)

// SweepValue is one sweep field's value at a sweep point.
type SweepValue struct {
	// Field is the swept field.
	Field v1alpha1.SweepField
	// Value is its value.
	Value int64
}

// Child is one child run: its name, place in the suite and spec.
type Child struct {
	// Name is the BenchmarkRun's name, <suite>-<variant>[-<sweep values>]-r<k> (DNS-safe).
	Name string
	// Variant is the variant's name.
	Variant string
	// Point is the sweep point (empty without sweeps).
	Point []SweepValue
	// Repetition counts from 1.
	Repetition int32
	// Spec is the child's spec: the template with the variant and the sweep point applied.
	Spec v1alpha1.BenchmarkRunSpec
}

// Distinct is one child per variant and sweep point, in order: repetitions share their spec,
// so checking these checks every child.
func Distinct(children []Child) []*Child {
	seen := map[string]bool{}
	var out []*Child
	for i := range children {
		c := &children[i]
		if !seen[c.Variant+"/"+c.Sweep()] {
			seen[c.Variant+"/"+c.Sweep()] = true
			out = append(out, c)
		}
	}
	return out
}

// Sweep is the sweep point as text, such as "workers=8,bodySize=1024" ("" without sweeps).
func (c *Child) Sweep() string { return PointString(c.Point) }

// PointString renders a sweep point as field=value pairs joined by commas.
func PointString(p []SweepValue) string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = fmt.Sprintf("%s=%d", v.Field, v.Value)
	}
	return strings.Join(parts, ",")
}

// nameTag is a sweep field's short form in child names.
var nameTag = map[v1alpha1.SweepField]string{
	v1alpha1.SweepWorkers: "w", v1alpha1.SweepTasksPerWorker: "t", v1alpha1.SweepBodySize: "b", v1alpha1.SweepRate: "rate",
}

// ChildName is a child's predictable name: <suite>-<variant>[-<tag><value>...]-r<k>, cut to
// a DNS label with a hash when long (naming.Name).
func ChildName(suite, variant string, point []SweepValue, rep int32) string {
	parts := []string{variant}
	for _, v := range point {
		parts = append(parts, nameTag[v.Field]+strconv.FormatInt(v.Value, 10))
	}
	parts = append(parts, "r"+strconv.Itoa(int(rep)))
	return naming.Name(suite, strings.Join(parts, "-"))
}

// Reference is the suite's reference variant: spec.reference, else the first variant.
func Reference(spec *v1alpha1.BenchmarkSuiteSpec) string {
	if spec.Reference != "" {
		return spec.Reference
	}
	if len(spec.Variants) > 0 {
		return spec.Variants[0].Name
	}
	return ""
}

// Points is the sweeps' product in order (the last sweep varies fastest); one empty point
// without sweeps.
func Points(sweeps []v1alpha1.SuiteSweep) [][]SweepValue {
	points := [][]SweepValue{nil}
	for _, sw := range sweeps {
		var next [][]SweepValue
		for _, p := range points {
			for _, v := range sw.Values {
				q := append(append([]SweepValue(nil), p...), SweepValue{Field: sw.Field, Value: v})
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// Expand returns the suite's child runs in run order: repetition by repetition, each sweep
// point in turn, every variant at each point (A B A B ...), so drift over time hits every
// variant alike. An error names the variant that cannot be applied to the template.
func Expand(s *v1alpha1.BenchmarkSuite) ([]Child, error) {
	repeat := s.Spec.Repeat
	if repeat < 1 {
		repeat = 1
	}
	points := Points(s.Spec.Sweeps)
	if n := int(repeat) * len(points) * len(s.Spec.Variants); n > v1alpha1.MaxSuiteRuns {
		return nil, fmt.Errorf("spec: the suite expands to %d runs, more than %d", n, v1alpha1.MaxSuiteRuns)
	}
	var out []Child
	for rep := int32(1); rep <= repeat; rep++ {
		for _, p := range points {
			for i := range s.Spec.Variants {
				v := &s.Spec.Variants[i]
				spec, err := Apply(&s.Spec.Template, v, p)
				if err != nil {
					return nil, fmt.Errorf("spec.variants[%d] (%s): %w", i, v.Name, err)
				}
				out = append(out, Child{
					Name: ChildName(s.Name, v.Name, p, rep), Variant: v.Name, Point: p,
					Repetition: rep, Spec: spec,
				})
			}
		}
	}
	return out, nil
}

// Apply returns the template with the variant's changes and the sweep point applied (a deep
// copy: the template is not changed).
func Apply(template *v1alpha1.BenchmarkRunSpec, v *v1alpha1.SuiteVariant, point []SweepValue) (v1alpha1.BenchmarkRunSpec, error) {
	spec := *template.DeepCopy()
	if v.Target != nil {
		t := v.Target.DeepCopy().TargetSpec()
		spec.Target = t
	}
	if v.Redis != nil {
		if err := applyRedis(&spec.Target, v.Redis); err != nil {
			return spec, err
		}
	}
	if l := v.Load; l != nil {
		if l.Workers != nil {
			spec.Load.Workers = *l.Workers
		}
		if l.TasksPerWorker != nil {
			spec.Load.TasksPerWorker = *l.TasksPerWorker
		}
		if l.Parallelism != nil {
			spec.Load.Runners.Parallelism = *l.Parallelism
		}
	}
	for name, params := range v.ScenarioParams {
		sc := scenario(&spec, name)
		if sc == nil {
			return spec, fmt.Errorf("scenarioParams: no scenario %q in spec.template.load.scenarios", name)
		}
		if sc.Params == nil {
			sc.Params = map[string]v1alpha1.ParamValue{}
		}
		for k, val := range params {
			sc.Params[k] = v1alpha1.ParamValue(val)
		}
	}
	return spec, applyPoint(&spec, point)
}

// scenario is the spec's scenario of that name, or nil.
func scenario(spec *v1alpha1.BenchmarkRunSpec, name string) *v1alpha1.Scenario {
	for i := range spec.Load.Scenarios {
		if spec.Load.Scenarios[i].Name == name {
			return &spec.Load.Scenarios[i]
		}
	}
	return nil
}

// applyRedis changes the Redis benchrun deploys: target.redis or target.hetu.backend.redis.
func applyRedis(t *v1alpha1.TargetSpec, r *v1alpha1.VariantRedis) error {
	red := t.Redis
	if red == nil && t.HeTu != nil {
		red = t.HeTu.Backend.Redis
	}
	if red == nil {
		return fmt.Errorf("redis: the target has no Redis benchrun deploys (target.redis or target.hetu.backend.redis)")
	}
	if r.Engine != "" {
		red.Engine = r.Engine
	}
	if r.Image != "" {
		red.Image, red.Version = r.Image, ""
	}
	if r.Version != "" {
		red.Version, red.Image = r.Version, ""
	}
	if len(r.Config) > 0 {
		if red.Config == nil {
			red.Config = map[string]v1alpha1.RedisConfigValue{}
		}
		maps.Copy(red.Config, r.Config)
	}
	return nil
}

// applyPoint sets the swept fields.
func applyPoint(spec *v1alpha1.BenchmarkRunSpec, point []SweepValue) error {
	for _, p := range point {
		switch p.Field {
		case v1alpha1.SweepWorkers:
			spec.Load.Workers = int32(p.Value)
		case v1alpha1.SweepTasksPerWorker:
			spec.Load.TasksPerWorker = int32(p.Value)
		case v1alpha1.SweepBodySize:
			for i := range spec.Load.Scenarios {
				b := int32(p.Value)
				spec.Load.Scenarios[i].BodySize = &b
			}
		case v1alpha1.SweepRate:
			for i := range spec.Load.Scenarios {
				sc := &spec.Load.Scenarios[i]
				if sc.Arrival == nil || sc.Arrival.Rate == nil {
					return fmt.Errorf("sweeps: rate needs arrival.rate on scenario %s", sc.Name)
				}
				r := p.Value
				sc.Arrival.Rate = &r
			}
		default:
			return fmt.Errorf("sweeps: field %q cannot be swept (use workers, tasksPerWorker, bodySize or rate)", p.Field)
		}
	}
	return nil
}
