package results

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A search's early stop survives encoding, merges as the earliest runner's stop, is refused
// when malformed, and makes the summary mark later steps cut (never the best rate).
func TestSearchStopMergeAndSummary(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stopped := func(runner string, after int, why string) *Document {
		d := openRunner(t, runner, t0, 0, 0)
		d.Scenarios[0].SearchStop = &SearchStop{AfterStep: after, Reason: why}
		return d
	}
	a, b, c := stopped("a", 2, "step-02: late"), stopped("b", 1, "step-01: p99 12 ms > 10ms"), openRunner(t, "c", t0, 0, 0)
	var buf bytes.Buffer
	if err := Encode(&buf, a); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil || back.Scenarios[0].SearchStop == nil || *back.Scenarios[0].SearchStop != *a.Scenarios[0].SearchStop {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	m, err := Merge(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Scenarios[0].SearchStop; st == nil || st.AfterStep != 1 || st.Reason != "step-01: p99 12 ms > 10ms" {
		t.Fatalf("merged stop %+v, want runner b's (the earliest)", st)
	}
	if a.Scenarios[0].SearchStop.AfterStep != 2 {
		t.Error("the merge changed an input document")
	}
	opts := DefaultOptions()
	opts.Search = map[string]SearchRule{"search": {MaxP99: 10 * time.Millisecond}}
	s := Summarize(m, opts).Scenarios[0].Open.Search
	if s.StoppedAfter != 1 || len(s.Steps) != 2 || !s.Steps[0].Passed || !s.Steps[1].Cut || s.Steps[1].Passed || s.BestRate != 300 {
		t.Errorf("summary %+v: want step-01 passed, step-02 cut, best 300/s (3 runners × 100/s)", s)
	}
	var md strings.Builder
	if err := RenderMarkdown(&md, "", Summarize(m, opts)); err != nil || !strings.Contains(md.String(), "The search stopped after step-01 (step-01: p99 12 ms > 10ms)") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
	for _, bad := range []SearchStop{{AfterStep: 0, Reason: "x"}, {AfterStep: 1, Reason: strings.Repeat("x", MaxValueLength+1)}} {
		d := openRunner(t, "a", t0, 0, 0)
		d.Scenarios[0].SearchStop = &bad
		buf.Reset()
		err := Encode(&buf, d) // refused when written, and when read
		if err == nil {
			_, err = Decode(&buf)
		}
		if err == nil || !strings.Contains(err.Error(), "searchStop") {
			t.Errorf("%+v accepted: %v", bad, err)
		}
	}
	closed := NewRecorder("closed", "redis.get")
	closed.Record(t0, time.Millisecond, "OK", "")
	cs := closed.Scenario()
	cs.SearchStop = &SearchStop{AfterStep: 1, Reason: "x"}
	if err := cs.validateOpen(); err == nil {
		t.Error("a closed-model scenario with a searchStop accepted")
	}
}
