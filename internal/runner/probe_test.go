package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/resp"
	"github.com/benchrun/benchrun/internal/results"
)

// TestProbeKillAndRestart runs the fault probe against a real redis-server (with a password)
// that is killed and restarted empty on the same address (no persistence, no replica): the
// probe sees one outage from the kill to the restart, and every marker acknowledged before
// the kill is lost, none after.
func TestProbeKillAndRestart(t *testing.T) {
	addr := redistest.FreeAddr(t)
	start := func() func() {
		cmd := redistest.Command(t, addr, "--requirepass", "s3 cret")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		redistest.WaitListening(t, addr)
		return func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	}
	kill := start()
	p := &Probe{Addr: addr, Password: "s3 cret", Key: "benchrun:fault-probe:t"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	time.Sleep(time.Second)
	killed := time.Now()
	kill()
	time.Sleep(500 * time.Millisecond)
	restarted := time.Now()
	start()
	time.Sleep(time.Second)
	cancel()
	<-done
	r := p.Finish(context.Background(), 5*time.Second)
	t.Logf("writes %d, acked %d, outages %+v, lost %d (kill at %d, restart at %d)", r.Writes, r.Acked, r.Outages, r.Lost, killed.UnixMilli(), restarted.UnixMilli())
	if len(r.Outages) != 1 {
		t.Fatalf("outages: %+v, want 1", r.Outages)
	}
	o := r.Outages[0]
	if o.FirstFailMs < killed.UnixMilli()-int64(ProbeInterval/time.Millisecond) || o.RecoveredMs < restarted.UnixMilli() || o.Failed < 1 {
		t.Errorf("outage %+v does not span the kill (%d) to the restart (%d)", o, killed.UnixMilli(), restarted.UnixMilli())
	}
	before := r.AckedBefore(killed.UnixMilli())
	if r.Lost < 1 || r.Lost != r.LostBefore(killed.UnixMilli()) || r.Lost != before || int64(len(r.LostAckMs)) != r.Lost {
		t.Errorf("lost %d (acked before the kill %d, lost of them %d): want every marker acked before the kill", r.Lost, before, r.LostBefore(killed.UnixMilli()))
	}
	if r.Acked-r.Lost < 1 {
		t.Errorf("acked %d, lost %d: want markers kept after the restart", r.Acked, r.Lost)
	}
	if n, err := resp.Do(context.Background(), addr, "s3 cret", "EXISTS", p.Key); err != nil || n != "0" {
		t.Errorf("marker list left on the target: %q %v", n, err)
	}
}

// TestProbeNotReadBack: a target gone for good after the load gives Lost -1 and the reason.
func TestProbeNotReadBack(t *testing.T) {
	addr := redistest.FreeAddr(t)
	cmd := redistest.Command(t, addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	redistest.WaitListening(t, addr)
	p := &Probe{Addr: addr, Key: "k"}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p.Run(ctx)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	r := p.Finish(context.Background(), 600*time.Millisecond)
	if r.Lost != -1 || !strings.Contains(r.ReadBackError, "reading the markers back") || r.Acked == 0 {
		t.Errorf("report %+v", r)
	}
}

// TestNewProbe: only an invocation with the probe key and a plain Redis endpoint gets one.
func TestNewProbe(t *testing.T) {
	env := map[string]string{plan.EnvFaultProbe: "k", plan.EnvTarget: `{"redis":{"addrs":["r:6379","r2:6379"]}}`}
	if p := NewProbe(ProbeInvocation{Env: env}); p == nil || p.Addr != "r:6379" || p.Key != "k" {
		t.Errorf("probe %+v", p)
	}
	for _, target := range []string{`{"hetu":{}}`, `{"redis":{"addrs":["r:6379"],"tls":true}}`, `not json`} {
		env[plan.EnvTarget] = target
		if p := NewProbe(ProbeInvocation{Env: env}); p != nil {
			t.Errorf("target %s: probe %+v", target, p)
		}
	}
	if p := NewProbe(ProbeInvocation{Env: map[string]string{plan.EnvTarget: `{"redis":{"addrs":["r:6379"]}}`}}); p != nil {
		t.Errorf("no probe key: probe %+v", p)
	}
}

// slowLoad is a scriptedLoad whose k6 runs for d once released.
type slowLoad struct {
	scriptedLoad
	d time.Duration
}

// Wait implements Load.
func (l *slowLoad) Wait() (int, error) {
	time.Sleep(l.d)
	return l.scriptedLoad.Wait()
}

// TestAgentStoresProbeReport: runner 0's agent, asked for the fault probe, probes a real
// redis-server while k6 runs and stores the report with its final state.
func TestAgentStoresProbeReport(t *testing.T) {
	addr := redistest.Start(t)
	c, a := setup(t, plan.Invocation{Script: "x.js", Env: map[string]string{
		plan.EnvFaultProbe: "benchrun:fault-probe:r", plan.EnvTarget: `{"redis":{"addrs":["` + addr + `"]}}`}})
	doc, _ := results.NewDocument("runner-0")
	a.Load = &slowLoad{scriptedLoad: scriptedLoad{path: a.ResultFile, doc: doc}, d: 700 * time.Millisecond}
	go func() { _, _ = release(c, 20*time.Millisecond) }()
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := state(t, c).Data[KeyFaultProbe]
	var r ProbeReport
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("probe report %q: %v", raw, err)
	}
	if r.Acked < 3 || r.Lost != 0 || len(r.Outages) != 0 || r.Writes != r.Acked {
		t.Errorf("probe report: %+v", r)
	}
}

// TestAckTimes: acknowledgement times survive the encoding exactly (a clock step backwards
// included); garbage counts nothing.
func TestAckTimes(t *testing.T) {
	ms := []int64{1_000_000, 1_000_050, 1_000_049, 1_000_200, 1_003_000}
	r := ProbeReport{AckTimes: EncodeAckTimes(ms)}
	for _, c := range []struct{ t, want int64 }{{1_000_000, 0}, {1_000_050, 2}, {1_000_051, 3}, {1_000_201, 4}, {2_000_000, 5}} {
		if got := r.AckedBefore(c.t); got != c.want {
			t.Errorf("acked before %d: %d, want %d", c.t, got, c.want)
		}
	}
	if got := (ProbeReport{AckTimes: "!!not base64"}).AckedBefore(2_000_000); got != 0 {
		t.Errorf("garbage: %d", got)
	}
}
