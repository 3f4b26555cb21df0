package controllers

import (
	"encoding/json"
	"fmt"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// maxStatusBytes bounds the status the manager writes, well under etcd's ~1.5 MiB object
// limit (the spec, metadata and managed fields share it).
var maxStatusBytes = 256 << 10

// fitStatus trims st until its JSON is at most maxStatusBytes, dropping what the report
// ConfigMaps keep first: the per-minute series and return values beyond the top 5 of history
// records, then of the current results, then history records from the oldest (their report
// ConfigMaps stay until the run is deleted), then partial reasons beyond 8. It returns what it
// trimmed, one line each.
func fitStatus(st *v1alpha1.BenchmarkRunStatus) []string {
	var trimmed []string
	steps := []struct {
		what string
		do   func() bool
	}{
		{"per-minute series of status.history (kept in their reports)", func() bool {
			did := false
			for i := range st.History {
				did = stripSeries(st.History[i].Results) || did
			}
			return did
		}},
		{"status.history[].results[].returnValues beyond the top 5 (kept in their reports)", func() bool {
			did := false
			for i := range st.History {
				did = topFive(st.History[i].Results) || did
			}
			return did
		}},
		{"status.results[].callsPerMinute (kept in the report)", func() bool { return stripSeries(st.Results) }},
		{"status.results[].returnValues beyond the top 5 (kept in the report)", func() bool { return topFive(st.Results) }},
		{"oldest status.history records (their reports are kept)", func() bool {
			if len(st.History) == 0 {
				return false
			}
			st.History = st.History[:len(st.History)-1]
			return true
		}},
		{"status.partialReasons beyond 8 (kept in the report)", func() bool {
			if len(st.PartialReasons) <= 8 {
				return false
			}
			st.PartialReasons = st.PartialReasons[:8]
			return true
		}},
	}
	for _, step := range steps {
		for statusSize(st) > maxStatusBytes && step.do() {
			if len(trimmed) == 0 || trimmed[len(trimmed)-1] != step.what {
				trimmed = append(trimmed, step.what)
			}
		}
	}
	if n := statusSize(st); n > maxStatusBytes {
		trimmed = append(trimmed, fmt.Sprintf("still %d KiB", n>>10))
	}
	return trimmed
}

// topFive cuts the return values of results to the 5 most frequent; it reports whether any
// was longer.
func topFive(rs []v1alpha1.ScenarioResult) bool {
	did := false
	for i := range rs {
		if rv := rs[i].ReturnValues; len(rv) > 5 {
			rs[i].ReturnValues, did = rv[:5], true
		}
	}
	return did
}

// stripSeries drops the per-minute series of results; it reports whether any was set.
func stripSeries(rs []v1alpha1.ScenarioResult) bool {
	did := false
	for i := range rs {
		if rs[i].CallsPerMinute != nil {
			rs[i].CallsPerMinute, did = nil, true
		}
	}
	return did
}

// statusSize is the size of st's JSON.
func statusSize(st *v1alpha1.BenchmarkRunStatus) int {
	b, err := json.Marshal(st)
	if err != nil {
		return 0
	}
	return len(b)
}
