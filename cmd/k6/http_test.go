package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
)

// TestHTTPMatchesServerCount runs our k6 (benchrun.js, the Go HTTP hot path) against a real
// net/http server on loopback with three scenarios (GET over HTTP/1.1, POST of 256-byte
// bodies over h2c, GET of a missing page): the server's own request and body counts equal
// what benchrun recorded, status codes are the return values (404 as errors).
func TestHTTPMatchesServerCount(t *testing.T) {
	var byPath = map[string]*atomic.Int64{"/": {}, "/items": {}, "/missing": {}}
	var bodyBytes, h2 atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		bodyBytes.Add(n)
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		if c, ok := byPath[r.URL.Path]; ok {
			c.Add(1)
		}
		if r.URL.Path == "/missing" || r.Header.Get("X-Bench") != "yes" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	body := int32(256)
	hdr := map[string]string{"X-Bench": "yes"}
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalHTTP,
				Addresses: []string{strings.TrimPrefix(srv.URL, "http://")}}},
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 4, Duration: metav1.Duration{Duration: 2 * time.Second},
				Scenarios: []v1alpha1.Scenario{
					{Name: "get", Type: v1alpha1.ScenarioHTTP, HTTP: &v1alpha1.HTTPSpec{Headers: hdr}},
					{Name: "post_h2c", Type: v1alpha1.ScenarioHTTP, BodySize: &body,
						HTTP: &v1alpha1.HTTPSpec{Method: "POST", Path: "/items?id=1", Headers: hdr, Protocol: v1alpha1.HTTP2}},
					{Name: "missing", Type: v1alpha1.ScenarioHTTP, HTTP: &v1alpha1.HTTPSpec{Path: "/missing", Headers: hdr}},
				}},
		},
	}
	inv, err := plan.ForRunnerIn(filepath.Join(repoRoot, "scripts", "k6"), run, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	cmd, out := k6Command(t, inv, inv.Script)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6 run: %v\n%s", err, b)
	}
	doc := readDoc(t, out)
	got := map[string]int64{}
	for _, s := range doc.Scenarios {
		got[s.Name] = s.Calls
		t.Logf("%-9s %d calls, %.0f/s, values %v, errors %v, bytes %d/%d", s.Name, s.Calls,
			float64(s.Calls)/s.LastEnd.Sub(s.FirstStart).Seconds(), s.ReturnValues, s.ErrorKinds, s.BytesSent, s.BytesReceived)
		if s.Type != "http" || s.Calls < 100 || s.BytesSent == 0 || s.BytesReceived == 0 {
			t.Errorf("%s: type %s, %d calls, bytes %d/%d", s.Name, s.Type, s.Calls, s.BytesSent, s.BytesReceived)
		}
		switch s.Name {
		case "missing":
			if s.Errors != s.Calls || s.ErrorKinds["404"] != s.Calls {
				t.Errorf("missing: %d errors of %d, kinds %v", s.Errors, s.Calls, s.ErrorKinds)
			}
		default:
			if s.Errors != 0 || s.ReturnValues["200"] != s.Calls {
				t.Errorf("%s: %d errors, values %v, kinds %v", s.Name, s.Errors, s.ReturnValues, s.ErrorKinds)
			}
		}
	}
	for name, path := range map[string]string{"get": "/", "post_h2c": "/items", "missing": "/missing"} {
		if n := byPath[path].Load(); n != got[name] {
			t.Errorf("%s: the server answered %d requests on %s, benchrun recorded %d", name, n, path, got[name])
		}
	}
	if bodyBytes.Load() != got["post_h2c"]*256 || h2.Load() != got["post_h2c"] {
		t.Errorf("server: %d body bytes and %d HTTP/2 requests for %d POSTs of 256 bytes", bodyBytes.Load(), h2.Load(), got["post_h2c"])
	}
}
