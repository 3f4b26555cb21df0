package lifecycle

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/results/resultstest"
)

// honestDoc is a runner's valid document of scenario_00 and scenario_01.
func honestDoc(t *testing.T, runner string, seed uint64) *results.Document {
	t.Helper()
	doc, err := resultstest.Document(resultstest.Spec{Runner: runner, Scenarios: 2, Duration: time.Minute,
		CallsPerMinute: 6000, Samples: 2000, Seed: seed, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// hostileName fakes a heading, a passed verdict and a script tag.
const hostileName = "x |\n\n## All thresholds passed\n<script>alert(1)</script>"

// TestMergeKeepsSpecScenariosOnly: a runner's scenarios whose names the spec does not hold
// (Markdown, HTML, newlines) and operations with such names are dropped and named, escaped,
// in one partial reason; report.md and the partial reasons carry nothing raw; the honest
// runner's results are all kept. On main the names reached status and report.md as written.
func TestMergeKeepsSpecScenariosOnly(t *testing.T) {
	bad := honestDoc(t, "runner-1", 2)
	evil := bad.Scenarios[0]
	evil.Name = hostileName
	bad.Scenarios = append(bad.Scenarios, evil)
	op := bad.Scenarios[1]
	op.Name, op.Type, op.Operations, op.VUs, op.Command, op.BodySize, op.ServerCalls, op.FaultSeconds =
		"<img src=x onerror=alert(1)>", bad.Scenarios[1].Type, nil, nil, "", 0, nil, nil
	bad.Scenarios[1].Operations = []results.Scenario{op}
	bad.PartialReasons, bad.Partial = []string{"evicted\n# PASSED\r\n<b>"}, true
	runners := []Runner{{Name: "runner-0", Doc: honestDoc(t, "runner-0", 1)}, {Name: "runner-1", Doc: bad}}
	doc, n, err := Merge(runners, false, "scenario_00", "scenario_01")
	if err != nil || n != 2 {
		t.Fatalf("merged %d: %v", n, err)
	}
	var names []string
	for _, s := range doc.Scenarios {
		names = append(names, s.Name)
		if len(s.Operations) != 0 {
			t.Errorf("scenario %s keeps operations %v", s.Name, s.Operations[0].Name)
		}
	}
	if strings.Join(names, ",") != "scenario_00,scenario_01" {
		t.Errorf("scenarios %q, want the spec's only", names)
	}
	if c := doc.Scenarios[0].Calls; c != runners[0].Doc.Scenarios[0].Calls+bad.Scenarios[0].Calls {
		t.Errorf("scenario_00 has %d calls: the runners' calls were not all kept", c)
	}
	for _, r := range doc.PartialReasons {
		if strings.ContainsAny(r, "\n\r") || len(r) > results.MaxReasonLength {
			t.Errorf("partial reason not one bounded line: %q", r)
		}
	}
	if !strings.Contains(strings.Join(doc.PartialReasons, ";"), "runner-1: 2 not in the spec dropped") {
		t.Errorf("partial reasons %q do not say what was dropped", doc.PartialReasons)
	}
	var md bytes.Buffer
	if err := results.RenderMarkdown(&md, "run", results.Summarize(doc, results.Options{})); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<script>", "<img", "<b>", "\n## All", "\n# PASSED"} {
		if strings.Contains(md.String(), raw) {
			t.Errorf("report.md carries %q raw:\n%s", raw, md.String())
		}
	}
}

// TestMergeKeepsOthersWhenOneDoesNotMerge: a runner whose document does not merge (another
// type for a scenario; counters that would overflow int64) is that runner's missing result;
// the others are merged. On main the whole collection failed (MergeFailed, nothing kept).
func TestMergeKeepsOthersWhenOneDoesNotMerge(t *testing.T) {
	retyped := honestDoc(t, "runner-1", 2)
	retyped.Scenarios[0].Type = "redis.set"
	overflow := honestDoc(t, "runner-2", 3)
	overflow.Scenarios[0].BytesSent = math.MaxInt64
	runners := []Runner{{Name: "runner-0", Doc: honestDoc(t, "runner-0", 1)}, {Name: "runner-1", Doc: retyped},
		{Name: "runner-2", Doc: overflow}, {Name: "runner-3", Doc: honestDoc(t, "runner-3", 4)}}
	doc, n, err := Merge(runners, false, "scenario_00", "scenario_01")
	if err != nil {
		t.Fatalf("collection failed: %v", err)
	}
	if n != 2 || !doc.Partial || len(doc.PartialReasons) != 2 {
		t.Fatalf("merged %d, reasons %q; want runner-0 and runner-3 merged, 2 reasons", n, doc.PartialReasons)
	}
	got := strings.Join(doc.PartialReasons, "\n")
	if !strings.Contains(got, "runner-1: result not merged") || !strings.Contains(got, "runner-2: result not merged") {
		t.Errorf("reasons %q, want runner-1 (type) and runner-2 (overflow) named", got)
	}
	if !strings.Contains(got, "counter overflow") {
		t.Errorf("reasons %q, want the overflow named", got)
	}
}
