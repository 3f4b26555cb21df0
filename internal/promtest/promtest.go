// Package promtest runs a real Prometheus (the Debian package's /usr/bin/prometheus) for
// tests, on a free loopback port with the remote-write receiver on, and queries it.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Prometheus is a running Prometheus.
type Prometheus struct {
	// URL is its HTTP API root, e.g. http://127.0.0.1:41234.
	URL string
}

// RemoteWriteURL is its remote-write receiver.
func (p *Prometheus) RemoteWriteURL() string { return p.URL + "/api/v1/write" }

// Start runs Prometheus until the test ends, scraping scrapeTargets (host:port) every second,
// with the remote-write receiver enabled. It skips the test when there is no prometheus binary.
func Start(t testing.TB, scrapeTargets ...string) *Prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary (Debian package prometheus; .ci/run installs it)")
	}
	dir := t.TempDir()
	cfg := "global: {scrape_interval: 1s}\n"
	if len(scrapeTargets) > 0 {
		b, _ := json.Marshal(scrapeTargets)
		cfg += fmt.Sprintf("scrape_configs:\n- job_name: benchrun\n  static_configs: [{targets: %s}]\n", b)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--web.enable-remote-write-receiver", "--log.level=warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	p := &Prometheus{URL: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready after 30s", addr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Sample is one series of an instant-query result.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query now and returns its samples (an error for a failed query).
func (p *Prometheus) Query(q string) ([]Sample, error) { return p.QueryAt(q, time.Time{}) }

// QueryAt runs an instant query at t (now when zero) and returns its samples.
func (p *Prometheus) QueryAt(q string, t time.Time) ([]Sample, error) {
	u := p.URL + "/api/v1/query?query=" + url.QueryEscape(q)
	if !t.IsZero() {
		u += fmt.Sprintf("&time=%.3f", float64(t.UnixMilli())/1000)
	}
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, body.Error)
	}
	out := make([]Sample, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		var v float64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return nil, fmt.Errorf("query %s: value %q", q, s)
		}
		out = append(out, Sample{Metric: r.Metric, Value: v})
	}
	return out, nil
}

// Value runs an instant query that must return exactly one sample and returns its value.
func (p *Prometheus) Value(q string) (float64, error) {
	s, err := p.Query(q)
	if err != nil {
		return 0, err
	}
	if len(s) != 1 {
		return 0, fmt.Errorf("query %s: %d samples, want 1", q, len(s))
	}
	return s[0].Value, nil
}

// Point is one stored sample.
type Point struct {
	T time.Time
	V float64
}

// Points returns the raw samples of the single series a range-vector selector (e.g.
// metric{...}[5m]) selects, oldest first.
func (p *Prometheus) Points(selector string) ([]Point, error) {
	resp, err := http.Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(selector))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Data struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if len(body.Data.Result) != 1 {
		return nil, fmt.Errorf("%s: %d series, want 1", selector, len(body.Data.Result))
	}
	var out []Point
	for _, v := range body.Data.Result[0].Values {
		ts, _ := v[0].(float64)
		s, _ := v[1].(string)
		var f float64
		if _, err := fmt.Sscan(s, &f); err != nil {
			return nil, fmt.Errorf("%s: value %q", selector, s)
		}
		out = append(out, Point{T: time.UnixMilli(int64(ts * 1000)), V: f})
	}
	return out, nil
}
