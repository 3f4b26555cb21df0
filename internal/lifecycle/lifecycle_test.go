package lifecycle

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

func TestTimeouts(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{}
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "a"}, {Name: "b", Duration: &metav1.Duration{Duration: 2 * time.Minute}}}
	run.Spec.Load.Duration.Duration = time.Minute
	if got := RunTimeout(run); got != 23*time.Minute {
		t.Errorf("RunTimeout %s", got)
	}
	run.Spec.Timeouts.TargetReady = &metav1.Duration{Duration: time.Minute}
	if got := TargetReadyTimeout(run); got != time.Minute {
		t.Errorf("TargetReadyTimeout %s", got)
	}
	if got := RunTimeout(run); got != 14*time.Minute {
		t.Errorf("RunTimeout with targetReady %s", got)
	}
	run.Spec.Timeouts.Run = &metav1.Duration{Duration: time.Hour}
	if got := RunTimeout(run); got != time.Hour {
		t.Errorf("RunTimeout explicit %s", got)
	}
}

func TestScriptSources(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{}
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "get"}, {Name: "mine", Type: v1alpha1.ScenarioScript,
		Script: &v1alpha1.ScriptSource{ConfigMapName: "cm"}}}
	data := map[string]map[string]string{"cm": {"script.js": "src"}}
	lookup := func(name string) (map[string]string, bool, error) { d, ok := data[name]; return d, ok, nil }
	if got, err := ScriptSources(run, lookup); err != nil || !reflect.DeepEqual(got, map[string]string{"mine": "src"}) {
		t.Fatalf("%v %v", got, err)
	}
	run.Spec.Load.Scenarios[1].Script.Key = "other.js"
	if _, err := ScriptSources(run, lookup); !IsScriptError(err) || err.Error() != `scenario "mine": ConfigMap "cm" has no data key "other.js"` {
		t.Fatalf("missing key: %v", err)
	}
	delete(data, "cm")
	if _, err := ScriptSources(run, lookup); !IsScriptError(err) || err.Error() != `scenario "mine": ConfigMap "cm" not found` {
		t.Fatalf("missing ConfigMap: %v", err)
	}
	run.Spec.Load.Scenarios[1].Script = nil
	if _, err := ScriptSources(run, lookup); !IsScriptError(err) || err.Error() != `scenario "mine": type script needs script.configMapName` {
		t.Fatalf("no source: %v", err)
	}
	run.Spec.Load.Scenarios[1].Script = &v1alpha1.ScriptSource{ConfigMapName: "cm"}
	boom := errors.New("apiserver down")
	if _, err := ScriptSources(run, func(string) (map[string]string, bool, error) { return nil, false, boom }); !errors.Is(err, boom) || IsScriptError(err) {
		t.Fatalf("lookup error: %v", err)
	}
}

// doc is a valid result document of one runner with one call.
func doc(t *testing.T, runner string) *results.Document {
	t.Helper()
	rec := results.NewRecorder("get", "redis-get")
	rec.Record(time.Unix(1700000000, 0), time.Millisecond, "ok", "")
	d, err := results.NewDocument(runner, rec.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMergePartialReasons(t *testing.T) {
	if _, _, err := Merge([]Runner{{Name: "runner-0", Missing: "no result stored"}}, false); !errors.Is(err, ErrNoResults) || !strings.Contains(err.Error(), "runner-0: no result stored") {
		t.Fatalf("no documents: %v", err)
	}
	got, n, err := Merge([]Runner{{Name: "runner-0", Doc: doc(t, "runner-0")}, {Name: "runner-1", Doc: doc(t, "runner-1")}}, false)
	if err != nil || n != 2 || got.Partial {
		t.Fatalf("complete: %d %+v %v", n, got, err)
	}
	got, n, err = Merge([]Runner{{Name: "runner-0", Doc: doc(t, "runner-0"), Failed: "k6 exit code 3"}, {Name: "runner-1", Missing: "no result stored (evicted)"}}, false)
	if err != nil || n != 1 || !got.Partial || !reflect.DeepEqual(got.PartialReasons, []string{"runner-0: k6 exit code 3", "runner-1: no result stored (evicted)"}) {
		t.Fatalf("partial: %d %+v %v", n, got, err)
	}
	got, _, err = Merge([]Runner{{Name: "runner-0", Doc: doc(t, "runner-0")}}, true)
	if err != nil || !got.Partial || !reflect.DeepEqual(got.PartialReasons, []string{"run stopped before its end"}) {
		t.Fatalf("stopped: %+v %v", got, err)
	}
}

// tables are the report files but the charts.
func tables(files map[string][]byte) []string {
	var out []string
	for name := range files {
		if !IsChart(name) {
			out = append(out, name)
		}
	}
	return out
}

func TestReports(t *testing.T) {
	d := doc(t, "runner-0")
	files, err := Reports("title", results.Summarize(d, results.Options{}), d, "\nextra\n")
	if err != nil || len(tables(files)) != 3 || len(files[ChartCPS]) == 0 || !strings.HasSuffix(string(files[ReportMarkdown]), "\nextra\n") || len(files[ReportJSON]) == 0 {
		t.Fatalf("%v %v", files, err)
	}
	if back, err := results.Decode(strings.NewReader(string(files[ReportMerged]))); err != nil || back.Runners[0] != "runner-0" {
		t.Fatalf("merged.json: %v", err)
	}
	if files, _ := Reports("title", results.Summarize(d, results.Options{}), nil, ""); len(tables(files)) != 2 || len(files[ChartPercentiles]) == 0 {
		t.Fatalf("without document: %v", files)
	}
	sum := results.Summarize(d, results.Options{})
	sum.Scenarios[0].Type = results.GRPCScenarioType // a grpc scenario adds the Grpc protocol table's CSV
	files, err = Reports("title", sum, nil, "")
	if csv := string(files[ReportGRPCProtocolCSV]); err != nil || !strings.HasPrefix(csv, "PROTO,REQUEST,WORKERS,BODYSIZE,") ||
		!strings.Contains(string(files[ReportMarkdown]), "Grpc protocol table") {
		t.Fatalf("grpc: %q %v", csv, err)
	}
}

func TestK6Args(t *testing.T) {
	inv := plan.Invocation{Args: []string{"--quiet"}}
	got := K6Args(inv, true, "127.0.0.1:6565", "/r.json", "/s.js")
	want := []string{"run", "--paused", "--address", "127.0.0.1:6565", "--out", "benchrun=/r.json", "--quiet", "/s.js"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q", got)
	}
}
