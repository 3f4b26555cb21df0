package progress

import (
	"strings"
	"testing"

	benchv1 "github.com/benchrun/benchrun/api/v1alpha1"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	d := Doc{Scenarios: []Scenario{{Name: "get", Calls: 100, Errors: 2, ElapsedSeconds: 10,
		LatencyMs: benchv1.LatencyMs{Mean: 1, P50: 1, P90: 2, P99: 3, P999: 4, Max: 5}}}}
	b, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(string(b))
	if err != nil || len(got.Scenarios) != 1 || got.Scenarios[0].Calls != 100 || got.Scenarios[0].LatencyMs.P99 != 3 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
}

func TestDecodeRefusesBadInput(t *testing.T) {
	for name, s := range map[string]string{
		"oversized": `{"scenarios":[` + strings.Repeat(" ", MaxBytes) + `]}`,
		"garbage":   "\x00not json",
		"negative":  `{"scenarios":[{"name":"a","calls":-1,"elapsedSeconds":1,"latencyMs":{}}]}`,
		"noname":    `{"scenarios":[{"calls":1,"elapsedSeconds":1,"latencyMs":{}}]}`,
		"badlat":    `{"scenarios":[{"name":"a","calls":1,"elapsedSeconds":1,"latencyMs":{"p99":-2}}]}`,
	} {
		if _, err := Decode(s); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestMerge(t *testing.T) {
	a := Doc{Scenarios: []Scenario{{Name: "get", Calls: 100, ElapsedSeconds: 10, LatencyMs: benchv1.LatencyMs{Mean: 1, P99: 3, Max: 5}}}}
	b := Doc{Scenarios: []Scenario{{Name: "get", Calls: 300, Errors: 3, ElapsedSeconds: 10, LatencyMs: benchv1.LatencyMs{Mean: 2, P99: 4, Max: 4}}}}
	m := Merge([]Doc{a, b})
	if len(m) != 1 {
		t.Fatalf("merge: %+v", m)
	}
	r := m[0]
	if r.Calls != 400 || r.Errors != 3 || r.CPS != 40 || r.LatencyMs.P99 != 4 || r.LatencyMs.Max != 5 || r.LatencyMs.Mean != 1.75 {
		t.Fatalf("merge: %+v", r)
	}
}
