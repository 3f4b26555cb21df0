package main

import (
	"bytes"
	"strings"
	"testing"
)

// stream is `go test -json` of two parallel tests (one with a failing subtest) interleaving.
const stream = `{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Output":"TestMain says hello\n"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"p","Test":"TestA/sub","Output":"    a_test.go:9: phase Running\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: fine\n"}
{"Action":"output","Package":"p","Test":"TestA/sub","Output":"    a_test.go:12: a 1 s pause left no gap\n"}
{"Action":"output","Package":"p","Test":"TestA/sub","Output":"    --- FAIL: TestA/sub (1.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA/sub"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (1.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- PASS: TestB (0.50s)\n"}
{"Action":"pass","Package":"p","Test":"TestB"}
not json: a build error
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"fail","Package":"p"}
`

func TestRunRepeatsFailuresAtTheEnd(t *testing.T) {
	var out bytes.Buffer
	failed, err := run(strings.NewReader(stream), &out)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v", failed, err)
	}
	got := out.String()
	live, summary, ok := strings.Cut(got, "==== 2 failed tests")
	if !ok {
		t.Fatalf("no summary:\n%s", got)
	}
	for _, want := range []string{"TestMain says hello\n", "    b_test.go:3: fine\n", "not json: a build error\n", "FAIL\n"} {
		if !strings.Contains(live, want) {
			t.Errorf("live output lacks %q:\n%s", want, live)
		}
	}
	wantSummary := "---- TestA/sub\n    a_test.go:9: phase Running\n    a_test.go:12: a 1 s pause left no gap\n    --- FAIL: TestA/sub (1.00s)\n"
	if !strings.Contains(summary, wantSummary) || strings.Contains(summary, "fine") {
		t.Errorf("summary:\n%s\nwant it to contain:\n%s", summary, wantSummary)
	}
	if !strings.HasSuffix(summary, "==== failed: TestA/sub TestA\n") {
		t.Errorf("summary does not end with the failed names:\n%s", summary)
	}
}

func TestRunPassing(t *testing.T) {
	var out bytes.Buffer
	in := `{"Action":"output","Package":"p","Test":"T","Output":"ok\n"}` + "\n" + `{"Action":"pass","Package":"p"}` + "\n"
	if failed, err := run(strings.NewReader(in), &out); failed || err != nil || out.String() != "ok\n" {
		t.Errorf("failed=%v err=%v out=%q", failed, err, out.String())
	}
}

func TestAppendTailKeepsTheLast(t *testing.T) {
	var tail []string
	for i := range keep + 5 {
		tail = appendTail(tail, strings.Repeat("x", i)+"\n")
	}
	if len(tail) != keep || tail[0] != strings.Repeat("x", 5) {
		t.Errorf("tail of %d, first %q", len(tail), tail[0])
	}
}
