package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/document_v2.json")

// sampleDoc returns a small realistic document: two scenarios of a HeTu run, with errors.
func sampleDoc() *Document {
	rng := rand.New(rand.NewPCG(7, 7))
	hello := NewRecorder("benchmark_hello_world", "hetu.hello_world")
	get := NewRecorder("benchmark_get", "hetu.get")
	start := t0
	for i := range 600 {
		d := time.Duration(200+rng.IntN(3000)) * time.Microsecond
		hello.Record(start, d, "世界收到", "")
		kind, value := "", "0"
		if i%500 == 0 {
			kind = "timeout"
		} else if i%7 == 0 {
			value = "1"
		}
		get.Record(start, 3*d, value, kind)
		start = start.Add(5 * time.Millisecond)
	}
	hello.AddBytes(600*40, 600*30)
	return &Document{
		SchemaVersion: SchemaVersion,
		Runners:       []string{"run-1-runner-0"},
		Scenarios:     []Scenario{hello.Scenario(), get.Scenario()},
	}
}

// TestVersion1Document: documents of schema version 1 (before 2-figure histograms) are
// still read.
func TestVersion1Document(t *testing.T) {
	doc, err := DecodeFile("testdata/document_v1.json")
	if err != nil || doc.SchemaVersion != 1 {
		t.Fatalf("version 1 document: %v", err)
	}
	if m, err := Merge(doc, sampleDoc()); err != nil || m.SchemaVersion != SchemaVersion {
		t.Fatalf("merging versions 1 and %d: %v", SchemaVersion, err)
	}
}

func TestExampleDocument(t *testing.T) {
	const path = "testdata/document_v2.json"
	if *update {
		var buf bytes.Buffer
		if err := Encode(&buf, sampleDoc()); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, doc); err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(b) {
		t.Errorf("re-encoding %s changes it", path)
	}
	want := &bytes.Buffer{}
	if err := Encode(want, sampleDoc()); err != nil {
		t.Fatal(err)
	}
	if want.String() != string(b) {
		t.Errorf("%s is stale: run go test -run TestExampleDocument -update", path)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(d map[string]any)
	}{
		{"version", "schemaVersion: unsupported version 3", func(d map[string]any) { d["schemaVersion"] = SchemaVersion + 1 }},
		{"old version", "schemaVersion: unsupported version 0", func(d map[string]any) { d["schemaVersion"] = 0 }},
		{"2 figures in version 1", "latency.sigFigs: 2 needs schemaVersion 2", func(d map[string]any) {
			d["schemaVersion"] = 1
			sc(d)["latency"].(map[string]any)["sigFigs"] = 2
		}},
		{"unknown field", `unknown field "extra"`, func(d map[string]any) { d["extra"] = 1 }},
		{"negative calls", "calls: negative", func(d map[string]any) { sc(d)["calls"] = -1 }},
		{"errors above calls", "errors: 601 is more than calls", func(d map[string]any) { sc(d)["errors"] = 601 }},
		{"bucket order", "latency.buckets[1]: value 200 not ascending", func(d map[string]any) { bucket(d, 1)[0] = 200.0 }},
		{"bucket boundary", "latency.buckets[0]: value 2049 is not a bucket boundary", func(d map[string]any) {
			bucket(d, 0)[0] = 2049.0
		}},
		{"bucket range", "latency.buckets[0]: value 0 outside", func(d map[string]any) { bucket(d, 0)[0] = 0.0 }},
		{"bucket count", "latency.buckets[0]: count -1 is not positive", func(d map[string]any) { bucket(d, 0)[1] = -1.0 }},
		{"bucket sum", "latency.buckets: counts add up to 601, calls is 600", func(d map[string]any) {
			b := bucket(d, 0)
			b[1] = b[1].(float64) + 1
		}},
		{"unit", `latency.unit: "ms"`, func(d map[string]any) { lat(d)["unit"] = "ms" }},
		{"min", "latency.min: 5 is not in the first bucket", func(d map[string]any) { lat(d)["min"] = 5 }},
		{"sum", "latency.sum:", func(d map[string]any) { lat(d)["sum"] = 1 }},
		{"timeline sum", "starts.counts: add up to", func(d map[string]any) { starts(d)["counts"] = []int{1, 2} }},
		{"timeline align", "starts.startUnixMs: 1 is not a multiple of bucketMs", func(d map[string]any) { starts(d)["startUnixMs"] = 1 }},
		{"timeline zero bucket", "starts.bucketMs: 0 outside", func(d map[string]any) { starts(d)["bucketMs"] = 0 }},
		{"timeline first", "starts.startUnixMs: first bucket", func(d map[string]any) {
			starts(d)["startUnixMs"] = starts(d)["startUnixMs"].(float64) - 1000
		}},
		{"value sum", "returnValues: counts add up to 599 (calls-errors is 600)", func(d map[string]any) {
			sc(d)["returnValues"].(map[string]any)["世界收到"] = 599
		}},
		{"value count", `returnValues: ["世界收到"]: count 0 is not positive`, func(d map[string]any) {
			sc(d)["returnValues"].(map[string]any)["世界收到"] = 0
		}},
		{"error kinds", "errorKinds: empty (errors is 1)", func(d map[string]any) { sc(d)["errors"] = 1 }},
		{"lastEnd", "lastEnd:", func(d map[string]any) { sc(d)["lastEnd"] = "2000-01-01T00:00:00Z" }},
		{"firstStart range", "firstStart: 1960-01-01T00:00:00Z missing or outside [1970, 2262)", func(d map[string]any) {
			sc(d)["firstStart"] = "1960-01-01T00:00:00Z"
		}},
		{"timeline span", "starts.counts: 367 buckets of 86400000 ms: more than", func(d map[string]any) {
			st := starts(d)
			st["bucketMs"], st["startUnixMs"], st["counts"] = 86400000, 0, make([]int, 367)
		}},
		{"duplicate", "scenarios[1].name: duplicate scenario", func(d map[string]any) {
			d["scenarios"].([]any)[1].(map[string]any)["name"] = "benchmark_hello_world"
		}},
		{"partial reasons", "partialReasons: set but partial is false", func(d map[string]any) { d["partialReasons"] = []string{"x"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, sampleDoc()); err != nil {
				t.Fatal(err)
			}
			var d map[string]any
			if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			c.edit(d)
			b, _ := json.Marshal(d)
			_, err := Decode(bytes.NewReader(b))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := Decode(strings.NewReader(`{"schemaVersion":1,"runners":[],"scenarios":[]} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
	if _, err := Decode(strings.NewReader(`{"schemaVersion":1,"runners":[],"scenarios":[]}`)); err != nil {
		t.Errorf("empty document rejected: %v", err)
	}
}

// sc returns the first scenario of a generic document.
func sc(d map[string]any) map[string]any { return d["scenarios"].([]any)[0].(map[string]any) }

// lat returns the latency histogram of the first scenario.
func lat(d map[string]any) map[string]any { return sc(d)["latency"].(map[string]any) }

// starts returns the start timeline of the first scenario.
func starts(d map[string]any) map[string]any { return sc(d)["starts"].(map[string]any) }

// bucket returns bucket i of the first scenario's histogram.
func bucket(d map[string]any, i int) []any { return lat(d)["buckets"].([]any)[i].([]any) }

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	if err := Encode(&buf, sampleDoc()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	if b, err := os.ReadFile("testdata/document_v1.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"schemaVersion":1,"runners":[],"scenarios":[]}`))
	f.Add([]byte(`{"schemaVersion":1,"runners":["a"],"partial":true,"partialReasons":["x"],"scenarios":[{"name":"s","calls":1,"errors":0,` +
		`"firstStart":"2026-01-01T00:00:00.5Z","lastEnd":"2026-01-01T00:00:01Z","returnValues":{"0":1},` +
		`"latency":{"unit":"us","sigFigs":3,"min":3000,"max":3000,"sum":3000,"sumSquares":9e6,"buckets":[[3000,1]]},` +
		`"starts":{"startUnixMs":1767225600000,"bucketMs":1000,"counts":[1]}}]}`))
	f.Add([]byte(`{"schemaVersion":2,"runners":["a"],"scenarios":[{"name":"s","calls":2,"errors":0,` +
		`"firstStart":"2026-01-01T00:00:00.5Z","lastEnd":"2026-01-01T00:00:01.1Z","returnValues":{"0":2},` +
		`"latency":{"unit":"us","sigFigs":3,"min":3000,"max":3000,"sum":6000,"sumSquares":1.8e7,"buckets":[[3000,2]]},` +
		`"starts":{"startUnixMs":1767225600000,"bucketMs":1000,"counts":[1,1]},` +
		`"latencyTimeline":{"startUnixMs":1767225600000,"bucketMs":1000,"intervals":[[3000,75,1],[3000,75,1]]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		var first bytes.Buffer
		if err := Encode(&first, doc); err != nil {
			t.Fatalf("decoded document does not encode: %v", err)
		}
		again, err := Decode(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("re-encoded document does not decode: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := Encode(&second, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("round trip changed the document:\n%s\n%s", first.Bytes(), second.Bytes())
		}
		// A valid document must also merge and summarize without trouble.
		if _, err := Merge(doc, again); err != nil && !strings.Contains(err.Error(), "overflow") {
			t.Fatalf("merging a valid document with itself: %v", err)
		}
		if _, err := json.Marshal(Summarize(doc, DefaultOptions())); err != nil {
			t.Fatalf("summary does not encode: %v", err)
		}
	})
}
