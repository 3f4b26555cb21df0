package bench

import (
	"bufio"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"

	"github.com/benchrun/benchrun/internal/results"
)

// scenarioInfo is what the document says about a scenario besides its calls: its load shape
// (command, body size), the VUs that recorded in it and the target's own counts around it.
type scenarioInfo struct {
	command  string
	bodySize int64
	vus      int64
	before   map[string]int64 // server counts at the scenario's start
	after    map[string]int64 // and at its end
	budget   *atomic.Int64    // calls left of a fixed-count scenario (take)
}

// infos holds the scenario information of this process, by scenario name.
var infos = struct {
	mu sync.Mutex
	m  map[string]*scenarioInfo
}{m: map[string]*scenarioInfo{}}

// info returns the entry of a scenario, creating it; call with infos.mu held.
func info(name string) *scenarioInfo {
	i, ok := infos.m[name]
	if !ok {
		i = &scenarioInfo{}
		infos.m[name] = i
	}
	return i
}

// countVU notes one more VU recording in a scenario.
func countVU(name string) {
	infos.mu.Lock()
	info(name).vus++
	infos.mu.Unlock()
}

// applyInfo writes the scenario information into doc, adding empty scenarios for those that
// have server counts but no calls in this runner.
func applyInfo(doc *results.Document) {
	infos.mu.Lock()
	defer infos.mu.Unlock()
	have := map[string]int{}
	for i := range doc.Scenarios {
		have[doc.Scenarios[i].Name] = i
	}
	for name, in := range infos.m {
		delta := serverDelta(in.before, in.after)
		i, ok := have[name]
		if !ok {
			if delta == nil {
				continue
			}
			doc.Scenarios = append(doc.Scenarios, emptyScenario(name, recorders.typeOf(name)))
			i = len(doc.Scenarios) - 1
		}
		s := &doc.Scenarios[i]
		s.Command, s.BodySize, s.ServerCalls = in.command, in.bodySize, delta
		if in.vus > 0 {
			s.VUs = []int64{in.vus}
		}
	}
}

// emptyScenario is a scenario without calls.
func emptyScenario(name, typ string) results.Scenario {
	return results.NewRecorder(name, typ).Scenario()
}

// serverDelta is after - before, positive counts only, bounded to results.MaxDistinctValues
// keys (largest first; the rest under results.OtherValue); nil when either is missing.
func serverDelta(before, after map[string]int64) map[string]int64 {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]int64{}
	for k, n := range after {
		if d := n - before[k]; d > 0 && len(k) <= results.MaxValueLength {
			out[k] = d
		}
	}
	if len(out) > results.MaxDistinctValues {
		keys := make([]string, 0, len(out))
		for k := range out {
			keys = append(keys, k)
		}
		sortKeysByCount(keys, out)
		var other int64
		for _, k := range keys[results.MaxDistinctValues-1:] {
			other += out[k]
			delete(out, k)
		}
		out[results.OtherValue] += other
	}
	return out
}

// sortKeysByCount sorts keys by descending count, ties by key.
func sortKeysByCount(keys []string, m map[string]int64) {
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

// jsScenarioInfo is scenarioInfo(name, {type, command, keepCase, bodySize}): declares a
// scenario's type (as scenarioType), the command(s) it sends (lower case unless keepCase, as
// a gRPC method; comma-separated, compared with the target's counts) and its configured
// payload size.
func (m *Module) jsScenarioInfo(c sobek.FunctionCall) sobek.Value {
	name := c.Argument(0).String()
	o, _ := c.Argument(1).Export().(map[string]any)
	if t := str(o["type"]); t != "" {
		recorders.setType(name, t)
	}
	infos.mu.Lock()
	in := info(name)
	in.command = str(o["command"])
	if o["keepCase"] != true {
		in.command = strings.ToLower(in.command)
	}
	if len(in.command) > results.MaxValueLength {
		in.command = in.command[:results.MaxValueLength]
	}
	in.bodySize = max(num(o["bodySize"]), 0)
	infos.mu.Unlock()
	return sobek.Undefined()
}

// jsServerCounts is serverCounts(name, "before"|"after", counts): the target's command
// counts ({command: calls}) at a scenario's start or end; the document gets the difference.
func (m *Module) jsServerCounts(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	name, when := c.Argument(0).String(), c.Argument(1).String()
	counts := map[string]int64{}
	if o, ok := c.Argument(2).Export().(map[string]any); ok {
		for k, v := range o {
			counts[k] = num(v)
		}
	}
	infos.mu.Lock()
	defer infos.mu.Unlock()
	switch when {
	case "before":
		info(name).before = counts
	case "after":
		info(name).after = counts
	default:
		common.Throw(rt, fmt.Errorf("serverCounts: %q is neither before nor after", when))
	}
	return sobek.Undefined()
}

// jsTake is take(name, n, total): grants up to n calls of a fixed-count scenario whose
// budget in this process is total (set by the first call); returns how many, 0 once the
// budget is spent. VUs share the budget, so the calls made add up to total exactly.
func (m *Module) jsTake(c sobek.FunctionCall) sobek.Value {
	name, n, total := c.Argument(0).String(), c.Argument(1).ToInteger(), c.Argument(2).ToInteger()
	infos.mu.Lock()
	in := info(name)
	if in.budget == nil {
		in.budget = new(atomic.Int64)
		in.budget.Store(max(total, 0))
	}
	b := in.budget
	infos.mu.Unlock()
	return m.vu.Runtime().ToValue(take(b, n))
}

// take removes up to n from b and returns how much it removed.
func take(b *atomic.Int64, n int64) int64 {
	for {
		left := b.Load()
		if left <= 0 || n <= 0 {
			return 0
		}
		got := min(n, left)
		if b.CompareAndSwap(left, left-got) {
			return got
		}
	}
}

// commandStats returns INFO commandstats as {command: calls}, lower case (sub-commands such
// as "client|list" as Redis names them).
func (rc *redisClient) commandStats() (map[string]int64, error) {
	conn, err := rc.connect(nil)
	if err != nil {
		return nil, err
	}
	v, err := conn.Do("INFO", "commandstats")
	if err != nil {
		rc.drop()
		return nil, err
	}
	text, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("INFO commandstats: unexpected reply %T", v)
	}
	return parseCommandStats(text), nil
}

// parseCommandStats parses lines "cmdstat_get:calls=10,usec=..." into {get: 10}.
func parseCommandStats(text string) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, found := strings.CutPrefix(kv, "calls="); found {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					out[strings.ToLower(name)] = n
				}
			}
		}
	}
	return out
}
