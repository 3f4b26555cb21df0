package runner

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/resp"
)

// KeyFaultProbe is the state ConfigMap key holding runner 0's fault probe report (JSON
// ProbeReport) when the run declares faults on a target with a Redis write endpoint.
const KeyFaultProbe = "faultProbe.json"

// Probe bounds.
const (
	// ProbeInterval is how often the probe writes a marker.
	ProbeInterval = 50 * time.Millisecond
	// MaxProbeMarkers bounds the markers written (about 83 minutes at ProbeInterval).
	MaxProbeMarkers = 100_000
	// MaxProbeOutages bounds ProbeReport.Outages.
	MaxProbeOutages = 256
	// MaxProbeLost bounds ProbeReport.LostAckMs.
	MaxProbeLost = 1024
)

// Outage is one run of consecutive failed marker writes.
type Outage struct {
	// FirstFailMs is when the first failed write of the run started (Unix ms).
	FirstFailMs int64 `json:"firstFailMs"`
	// RecoveredMs is when the next successful write was acknowledged (Unix ms; 0: never).
	RecoveredMs int64 `json:"recoveredMs,omitempty"`
	// Failed counts the failed writes.
	Failed int64 `json:"failed"`
}

// ProbeReport is what the fault probe measured: outages of the write path and the
// acknowledged markers missing when read back after the load.
type ProbeReport struct {
	// StartMs and EndMs bound the probe (Unix ms).
	StartMs int64 `json:"startMs"`
	// EndMs is when the probe stopped writing.
	EndMs int64 `json:"endMs"`
	// Writes counts markers written (acknowledged or not).
	Writes int64 `json:"writes"`
	// Acked counts acknowledged markers.
	Acked int64 `json:"acked"`
	// AckTimes are the acknowledgement times of the acknowledged markers, in order: base64 of
	// signed varints, the first the Unix ms, each next the difference in ms from the one
	// before (EncodeAckTimes; a few bytes per marker).
	AckTimes string `json:"ackTimes,omitempty"`
	// Outages are the runs of failed writes, oldest first (at most MaxProbeOutages).
	Outages []Outage `json:"outages,omitempty"`
	// OutagesDropped counts outages beyond MaxProbeOutages.
	OutagesDropped int64 `json:"outagesDropped,omitempty"`
	// Lost counts acknowledged markers missing on read-back (-1: not read back).
	Lost int64 `json:"lost"`
	// LostAckMs are the acknowledgement times of lost markers (Unix ms, at most MaxProbeLost).
	LostAckMs []int64 `json:"lostAckMs,omitempty"`
	// ReadBackError says why the markers could not be read back.
	ReadBackError string `json:"readBackError,omitempty"`
}

// probeAck is one acknowledged marker.
type probeAck struct {
	seq   int64
	ackMs int64
}

// Probe writes a numbered marker (RPUSH key seq) through the target's write endpoint every
// ProbeInterval while the load runs, one connection per write (so every write goes through
// the Service to whichever server holds the role now), and afterwards reads the list back.
type Probe struct {
	// Addr is the Redis write endpoint (host:port).
	Addr string
	// Password authenticates (empty: none).
	Password string
	// Key is the list the markers are appended to.
	Key string
	// Now tells the time (default time.Now).
	Now func() time.Time

	mu     sync.Mutex
	report ProbeReport
	acks   []probeAck
	open   *Outage
}

// NewProbe is the probe of an invocation, or nil when it asks for none.
func NewProbe(inv ProbeInvocation) *Probe {
	key := inv.Env[plan.EnvFaultProbe]
	if key == "" {
		return nil
	}
	return ProbeFor(inv.Env, key, os.Getenv(plan.EnvRedisPassword))
}

// ProbeFor is a probe appending to key through the Redis write endpoint of an invocation's
// target (env: its environment) with password, or nil when the target has no plain-text Redis
// write endpoint. `benchrun run` runs it in its own process.
func ProbeFor(env map[string]string, key, password string) *Probe {
	var t plan.Target
	if err := json.Unmarshal([]byte(env[plan.EnvTarget]), &t); err != nil || t.Redis == nil || len(t.Redis.Addrs) == 0 || t.Redis.TLS {
		return nil
	}
	return &Probe{Addr: t.Redis.Addrs[0], Password: password, Key: key}
}

// ProbeInvocation is the part of a plan.Invocation the probe reads.
type ProbeInvocation struct {
	// Env is the invocation's environment.
	Env map[string]string
}

func (p *Probe) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Run writes markers until ctx ends or MaxProbeMarkers were written.
func (p *Probe) Run(ctx context.Context) {
	p.mu.Lock()
	p.report.StartMs = p.now().UnixMilli()
	p.mu.Unlock()
	tick := time.NewTicker(ProbeInterval)
	defer tick.Stop()
	for seq := int64(1); seq <= MaxProbeMarkers; seq++ {
		start := p.now()
		_, err := resp.Do(ctx, p.Addr, p.Password, "RPUSH", p.Key, strconv.FormatInt(seq, 10))
		if ctx.Err() != nil {
			break // the write was cut by the end of the load: neither acked nor failed
		}
		p.record(seq, start, p.now(), err)
		select {
		case <-ctx.Done():
			seq = MaxProbeMarkers
		case <-tick.C:
		}
	}
	p.mu.Lock()
	p.report.EndMs = p.now().UnixMilli()
	p.mu.Unlock()
}

// record counts one write: an ack closes an open outage, a failure opens or extends one.
func (p *Probe) record(seq int64, start, end time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &p.report
	r.Writes++
	if err == nil {
		r.Acked++
		p.acks = append(p.acks, probeAck{seq: seq, ackMs: end.UnixMilli()})
		if p.open != nil {
			p.open.RecoveredMs = end.UnixMilli()
			p.closeOutage()
		}
		return
	}
	if p.open == nil {
		p.open = &Outage{FirstFailMs: start.UnixMilli()}
	}
	p.open.Failed++
}

// closeOutage moves the open outage into the report (bounded).
func (p *Probe) closeOutage() {
	if len(p.report.Outages) < MaxProbeOutages {
		p.report.Outages = append(p.report.Outages, *p.open)
	} else {
		p.report.OutagesDropped++
	}
	p.open = nil
}

// Finish reads the markers back (retrying for up to wait while the target recovers), counts
// the acknowledged ones that are missing, removes the list and returns the report.
func (p *Probe) Finish(ctx context.Context, wait time.Duration) ProbeReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open != nil {
		p.closeOutage() // never recovered while the load ran
	}
	r := p.report
	r.Lost = -1
	ms := make([]int64, len(p.acks))
	for i, a := range p.acks {
		ms[i] = a.ackMs
	}
	r.AckTimes = EncodeAckTimes(ms)
	deadline := p.now().Add(wait)
	var list string
	var err error
	for {
		if list, err = resp.Do(ctx, p.Addr, p.Password, "LRANGE", p.Key, "0", "-1"); err == nil || !p.now().Before(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err != nil {
		r.ReadBackError = boundText(fmt.Sprintf("reading the markers back from %s: %v", p.Addr, err), 512)
		return r
	}
	present := make(map[int64]bool, len(p.acks))
	for _, f := range strings.Split(list, "\n") {
		if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil {
			present[n] = true
		}
	}
	r.Lost = 0
	for _, a := range p.acks {
		if !present[a.seq] {
			r.Lost++
			if len(r.LostAckMs) < MaxProbeLost {
				r.LostAckMs = append(r.LostAckMs, a.ackMs)
			}
		}
	}
	_, _ = resp.Do(ctx, p.Addr, p.Password, "DEL", p.Key)
	return r
}

// EncodeAckTimes encodes acknowledgement times (Unix ms, in order) as ProbeReport.AckTimes.
func EncodeAckTimes(ms []int64) string {
	buf := make([]byte, 0, len(ms)*2)
	var prev int64
	for _, m := range ms {
		buf = binary.AppendVarint(buf, m-prev)
		prev = m
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// AckedBefore counts the markers acknowledged before t (Unix ms), reading at most
// MaxProbeMarkers times from AckTimes (a runner's data: never trusted to be well formed).
func (r ProbeReport) AckedBefore(t int64) int64 {
	buf, err := base64.StdEncoding.DecodeString(r.AckTimes)
	if err != nil {
		return 0
	}
	var n, ms int64
	for k := 0; k < MaxProbeMarkers && len(buf) > 0; k++ {
		d, size := binary.Varint(buf)
		if size <= 0 {
			break
		}
		buf, ms = buf[size:], ms+d
		if ms < t {
			n++
		}
	}
	return n
}

// LostBefore counts the lost markers acknowledged before t (Unix ms); exact while no more than
// MaxProbeLost were lost.
func (r ProbeReport) LostBefore(t int64) int64 {
	var n int64
	for _, ms := range r.LostAckMs {
		if ms < t {
			n++
		}
	}
	return n
}

// probeReadBackWait is how long the probe retries reading its markers back after the load
// (a failover still in progress).
const probeReadBackWait = 30 * time.Second

// startProbe starts the fault probe when the invocation asks for one; the returned function
// stops it after the load, reads the markers back and keeps the report for finish.
func (a *Agent) startProbe(ctx context.Context, inv plan.Invocation) func() {
	p := NewProbe(ProbeInvocation{Env: inv.Env})
	if p == nil {
		return func() {}
	}
	p.Now = a.Now
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(pctx)
	}()
	return func() {
		cancel()
		<-done
		rctx, rcancel := context.WithTimeout(context.Background(), probeReadBackWait+5*time.Second)
		defer rcancel()
		b, err := json.Marshal(p.Finish(rctx, probeReadBackWait))
		if err == nil {
			a.probeReport = string(b)
		}
	}
}
