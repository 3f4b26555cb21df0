package livemetrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/proto"
)

// decode is the receiver side of Encode.
func decode(t *testing.T, body []byte) *prompb.WriteRequest {
	t.Helper()
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		t.Fatal(err)
	}
	var req prompb.WriteRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

func TestEncodeSortsLabelsAndDropsEmpty(t *testing.T) {
	body, err := Encode(1234, []Series{{Name: "benchrun_calls_total", Value: 7,
		Labels: []Label{{"scenario", "get"}, {"benchmarkrun", "r"}, {"namespace", ""}}}})
	if err != nil {
		t.Fatal(err)
	}
	req := decode(t, body)
	ts := req.Timeseries[0]
	var names []string
	for _, l := range ts.Labels {
		names = append(names, l.Name)
	}
	if !slices.Equal(names, []string{"__name__", "benchmarkrun", "scenario"}) {
		t.Fatalf("labels %v", names)
	}
	if s := ts.Samples[0]; s.Value != 7 || s.Timestamp != 1234 {
		t.Fatalf("sample %v", s)
	}
}

func TestLatencyHistogramCumulative(t *testing.T) {
	// 10 calls of 100 µs, 5 of 1 ms, 1 of 30 s (beyond the last bound)
	series := LatencyHistogram(nil, [][2]int64{{100, 10}, {1000, 5}, {30_000_000, 1}}, 10*100+5*1000+30_000_000)
	get := func(name, le string) float64 {
		for _, s := range series {
			if s.Name == name && (le == "" || slices.Contains(s.Labels, Label{"le", le})) {
				return s.Value
			}
		}
		t.Fatalf("no %s le=%s", name, le)
		return 0
	}
	for le, want := range map[string]float64{"8e-05": 0, "0.0001": 10, "0.0008": 10, "0.001": 15, "10": 15, "+Inf": 16} {
		if got := get(MetricLatency+"_bucket", le); got != want {
			t.Errorf("le=%s: %v want %v", le, got, want)
		}
	}
	if get(MetricLatency+"_count", "") != 16 || get(MetricLatency+"_sum", "") != 30.006 {
		t.Errorf("count/sum wrong: %+v", series[len(series)-2:])
	}
	if len(LatencyBounds) != 61 || LatencyBounds[0] != 1e-5 || LatencyBounds[60] != 10 {
		t.Errorf("bounds %v", LatencyBounds)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, ok, err := ConfigFromEnv(env(nil)); ok || err != nil {
		t.Fatal("off without a URL")
	}
	cfg, ok, err := ConfigFromEnv(env(map[string]string{EnvURL: "https://p:9090/api/v1/write", EnvInterval: "2s",
		EnvBearerToken: "tok", EnvTLSInsecure: "true", EnvRun: "r1"}))
	if !ok || err != nil || cfg.Interval != 2*time.Second || cfg.TLS == nil || !cfg.TLS.InsecureSkipVerify || cfg.Run != "r1" {
		t.Fatalf("%+v %v %v", cfg, ok, err)
	}
	for _, bad := range []map[string]string{
		{EnvURL: "ftp://x/"},
		{EnvURL: "http://u:secretpw@x/"},
		{EnvURL: "http://x/", EnvInterval: "1ms"},
		{EnvURL: "http://x/", EnvBearerToken: "a", EnvPassword: "secretpw"},
		{EnvURL: "http://x/", EnvTLSCA: "not pem"},
	} {
		_, ok, err := ConfigFromEnv(env(bad))
		if ok || err == nil || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%v: ok %v err %v", bad, ok, err)
		}
	}
}

// The pusher authenticates, sends in order, and on backpressure drops the oldest pushes
// without ever blocking Push.
func TestPusherAuthOrderAndDropOldest(t *testing.T) {
	var mu sync.Mutex
	var got []string
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Header.Get("Authorization")+" "+r.Header.Get("Content-Encoding")+" "+string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	p := NewPusher(Config{URL: srv.URL, QueueLen: 2, Timeout: 5 * time.Second, Username: "u", Password: "pw"}, nil)
	start := time.Now()
	for _, b := range []string{"1", "2", "3", "4", "5"} {
		p.Push([]byte(b))
		time.Sleep(20 * time.Millisecond) // "1" is in flight, then the queue holds the newest two
	}
	if time.Since(start) > time.Second {
		t.Fatal("Push blocked")
	}
	close(release)
	st := p.Close(5 * time.Second)
	if st.Sent != 3 || st.Dropped != 2 || st.Failed != 0 {
		t.Fatalf("stats %+v", st)
	}
	want := []string{"Basic dTpwdw== snappy 1", "Basic dTpwdw== snappy 4", "Basic dTpwdw== snappy 5"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}

// Failures are counted and logged once; Close gives up after its timeout on a hanging endpoint.
func TestPusherFailuresLoggedOnce(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Prometheus-Remote-Write-Version") == "" {
			t.Error("no remote-write version header")
		}
		if string(mustRead(r)) == "hang" {
			<-hang
			return
		}
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer srv.Close()
	defer close(hang)
	var logs []string
	p := NewPusher(Config{URL: srv.URL, Timeout: 30 * time.Second, BearerToken: "tok"}, func(f string, a ...any) {
		logs = append(logs, f)
	})
	p.Push([]byte("a"))
	p.Push([]byte("b"))
	p.Push([]byte("hang"))
	start := time.Now()
	st := p.Close(500 * time.Millisecond)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if st.Failed != 3 || st.Sent != 0 || len(logs) != 1 {
		t.Fatalf("stats %+v logs %q", st, logs)
	}
}

func mustRead(r *http.Request) []byte { b, _ := io.ReadAll(r.Body); return b }
