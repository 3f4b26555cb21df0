package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/lib"

	"github.com/benchrun/benchrun/internal/results"
)

// MaxOpenVUs bounds the workers (connections) of one runner's open-model scenario.
const MaxOpenVUs = 10000

// openShards is the most recorders an open loop's workers share (each behind a mutex): the
// memory stays bounded (each recorder holds two dense histograms, per step too) whatever maxVUs.
const openShards = 8

// OpenConfig is one runner's open-model scenario: the schedule, the worker pool and the command.
type OpenConfig struct {
	// Scenario and Type name the scenario the calls are recorded in.
	Scenario, Type string
	// Schedule says when each call is due.
	Schedule *Schedule
	// MaxVUs is the number of workers, each with its own connection.
	MaxVUs int
	// Args is the command template (renderTemplateData: __rand_int__, __data__).
	Args []string
	// KeySpace and DataSize fill the template's placeholders.
	KeySpace, DataSize int64
	// Redis is how each worker connects.
	Redis RedisOptions
	// Addrs, when set, spreads the workers round-robin over these addresses (else Redis.Addr
	// or Echo.Addr).
	Addrs []string
	// Echo, when set, makes the calls tcp.echo messages (Echo.Pipeline is ignored: one message
	// in flight per connection) instead of Redis commands.
	Echo *EchoOptions
	// Caller, when set, makes worker i's caller (its own connection) for any other workload
	// (ycsb, http, grpc, hetu); Args, Redis and Echo are then unused. It gets the address of
	// Addrs for worker i ("" when Addrs is empty).
	Caller func(worker int, addr string) OpenCaller
	// OpsByValue records each call also in the operation named by its return value (YCSB's
	// read, update, insert, read-modify-write).
	OpsByValue bool
	// Stop, when set, ends a saturation search early: see SearchStop.
	Stop *SearchStop
}

// OpenResult counts what an open loop did.
type OpenResult struct {
	Calls, Dropped int64
}

// openShard is a recorder shared by some workers, with one operation recorder per search step.
type openShard struct {
	mu    sync.Mutex
	rec   *results.Recorder
	steps map[int]*results.Recorder
	ops   map[string]*results.Recorder // by return value, with OpsByValue
	epoch int64                        // live-metrics epoch of the last published snapshot
}

// openLoop is one running open-model scenario.
type openLoop struct {
	cfg      OpenConfig
	ctx      context.Context
	start    time.Time
	next     atomic.Int64
	started  []atomic.Int64 // calls sent, per segment
	done     []atomic.Int64 // calls answered, per segment
	shards   []*openShard
	halt     chan struct{} // closed when a saturation search stops early (searchstop.go)
	over     chan struct{} // closed when every worker returned
	stopOff  time.Duration // offset of the early stop, set before halt is closed
	stopStep int           // the step after which it stopped
	stopWhy  string        // and why
}

// RunOpen runs an open-model scenario until its schedule ends or ctx is done: cfg.MaxVUs
// workers take the next call number, wait until it is due, send it on their own connection and
// record its corrected latency (from when it was due) and its service time (from when it was
// sent). A call that no worker started before its deadline (the schedule's end, or its step's
// end in a search) is dropped: counted, never sent.
func RunOpen(ctx context.Context, cfg OpenConfig) (OpenResult, error) {
	if cfg.Schedule == nil || cfg.MaxVUs < 1 || cfg.MaxVUs > MaxOpenVUs || (len(cfg.Args) == 0 && cfg.Echo == nil && cfg.Caller == nil) {
		return OpenResult{}, fmt.Errorf("open model: need a schedule, 1..%d maxVUs and a command", MaxOpenVUs)
	}
	n := len(cfg.Schedule.Segments())
	o := &openLoop{cfg: cfg, ctx: ctx, started: make([]atomic.Int64, n), done: make([]atomic.Int64, n),
		halt: make(chan struct{}), over: make(chan struct{})}
	if ss := lib.GetScenarioState(ctx); ss != nil {
		recorders.started(cfg.Scenario, ss.StartTime) // the fault windows count from it
	}
	for range min(cfg.MaxVUs, openShards) {
		o.shards = append(o.shards, &openShard{rec: recorders.add(cfg.Scenario, cfg.Type), steps: map[int]*results.Recorder{},
			ops: map[string]*results.Recorder{}})
	}
	// Every worker connects first; the schedule starts once all have tried, so no call's
	// latency holds a connection set-up (a worker whose dial failed retries on its first call).
	var wg, ready sync.WaitGroup
	begin := make(chan struct{})
	for w := range cfg.MaxVUs {
		countVU(cfg.Scenario)
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			ow := newOpenWorker(cfg, w)
			defer ow.close()
			ow.dial(ctx)
			ready.Done()
			<-begin
			o.worker(ow, o.shards[w%len(o.shards)])
		}()
	}
	ready.Wait()
	o.start = time.Now()
	close(begin)
	judged := make(chan struct{})
	go func() { defer close(judged); o.judge() }()
	wg.Wait()
	close(o.over)
	<-judged
	return o.finish(), nil
}

// openGrace is how long after its deadline a late call may still start: the timer slack of a
// busy machine, so a call due in the last instant of a step is not dropped for waking late.
const openGrace = 100 * time.Millisecond

// deadline is the offset by which a call of segment k must have started: its search step's
// end, else the schedule's end, plus openGrace.
func (o *openLoop) deadline(k int) time.Duration {
	s := o.cfg.Schedule
	if s.Segments()[k].Step > 0 {
		return s.SegmentEnd(k) + openGrace
	}
	return s.Duration() + openGrace
}

// worker sends calls until the schedule ends, the context is done or a deadline passes.
func (o *openLoop) worker(w *openWorker, sh *openShard) {
	for o.ctx.Err() == nil && !o.halted() {
		i := o.next.Add(1) - 1
		off, k, ok := o.cfg.Schedule.At(i)
		if !ok {
			return
		}
		due := o.start.Add(off)
		if d := time.Until(due); d > 0 && !w.sleep(o.ctx, o.halt, d) {
			return
		}
		if time.Since(o.start) >= o.deadline(k) {
			if o.cfg.Schedule.Segments()[k].Step == 0 {
				return // past the scenario's end: what is left is dropped
			}
			continue // past its step's end: dropped, take the next call
		}
		o.started[k].Add(1)
		sent := time.Now()
		val, kind := w.call(o.ctx)
		end := time.Now()
		sh.record(o.cfg.Schedule.Segments()[k].Step, due, sent, end, val, kind, w, o.cfg.OpsByValue)
		o.done[k].Add(1)
	}
}

// halted tells whether a saturation search stopped early.
func (o *openLoop) halted() bool {
	select {
	case <-o.halt:
		return true
	default:
		return false
	}
}

// record counts one call in the shard's recorder and its step's.
func (sh *openShard) record(step int, due, sent, end time.Time, val, kind string, w *openWorker, byValue bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.rec.RecordOpen(due, sent, end, val, kind)
	if byValue && val != "" {
		op, ok := sh.ops[val]
		if !ok {
			op = sh.rec.Op(val)
			sh.ops[val] = op
		}
		op.RecordOpen(due, sent, end, val, kind)
	}
	sh.rec.AddBytes(w.c.Bytes())
	if step > 0 {
		sh.step(step).RecordOpen(due, sent, end, val, kind)
	}
	if e := recorders.epoch.Load(); e != 0 && e != sh.epoch { // live metrics: once per push interval
		sh.epoch = e
		recorders.publish(sh.rec, e)
	}
}

// step returns the shard's recorder of search step i; call with mu held.
func (sh *openShard) step(i int) *results.Recorder {
	r, ok := sh.steps[i]
	if !ok {
		r = sh.rec.Op(results.StepName(i))
		sh.steps[i] = r
	}
	return r
}

// finish writes the target rates and dropped calls (into the first shard, so merges add them
// once), retires the recorders and returns the totals.
func (o *openLoop) finish() OpenResult {
	s := o.cfg.Schedule
	elapsed := min(time.Since(o.start), s.Duration()) // calls due after an interruption are not dropped
	if o.halted() {
		elapsed = min(elapsed, o.stopOff)
	}
	sh := o.shards[0]
	var res OpenResult
	sh.mu.Lock()
	sh.rec.SetTargetRate(s.MeanRate())
	if o.halted() { // the mean rate of what was scheduled before the stop
		var due int64
		for k := range s.Segments() {
			due += s.DueBefore(k, elapsed)
		}
		sh.rec.SetTargetRate(float64(due) / max(elapsed.Seconds(), 1e-3))
		sh.rec.SetSearchStop(o.stopStep, o.stopWhy)
	}
	for k, g := range s.Segments() {
		if k > 0 && s.SegmentEnd(k-1) >= elapsed && o.halted() {
			break // never begun: the search stopped before
		}
		started := o.started[k].Load()
		dropped := max(s.DueBefore(k, elapsed)-started, 0)
		res.Calls += started
		res.Dropped += dropped
		if g.Step > 0 {
			op := sh.step(g.Step)
			op.SetTargetRate(g.From)
			op.AddDropped(dropped)
		}
	}
	sh.rec.AddDropped(res.Dropped)
	sh.mu.Unlock()
	for _, x := range o.shards {
		recorders.retire(x.rec)
	}
	return res
}

// OpenCaller is a worker's connection to the target (Redis commands, echo messages, HTTP
// requests, gRPC calls, YCSB operations, HeTu RPCs). Each worker has its own: no method is
// called concurrently.
type OpenCaller interface {
	// Dial connects unless connected and reports whether it is.
	Dial(ctx context.Context) bool
	// Call makes one call: the recorded return value, or the error kind.
	Call(ctx context.Context) (val, kind string)
	// Bytes returns (and resets) the bytes sent and received since the last call.
	Bytes() (sent, recv int64)
	// Close closes the connection; Call reconnects.
	Close()
}

// openWorker is one worker: its connection and its timer.
type openWorker struct {
	c     OpenCaller
	timer *time.Timer // reused by sleep
}

// newOpenWorker prepares worker i, to its address of cfg.Addrs (else the configured one).
func newOpenWorker(cfg OpenConfig, i int) *openWorker {
	addr := ""
	if len(cfg.Addrs) > 0 {
		addr = cfg.Addrs[i%len(cfg.Addrs)]
	}
	if cfg.Caller != nil {
		return &openWorker{c: cfg.Caller(i, addr)}
	}
	if cfg.Echo != nil {
		o := *cfg.Echo
		o.Pipeline = 1
		if addr != "" {
			o.Addr = addr
		}
		return &openWorker{c: &echoCaller{opts: o}}
	}
	if addr != "" {
		cfg.Redis.Addr = addr
	}
	return &openWorker{c: newRedisCaller(cfg)}
}

// dial connects the worker unless it is connected.
func (w *openWorker) dial(ctx context.Context) bool { return w.c.Dial(ctx) }

// call makes one call.
func (w *openWorker) call(ctx context.Context) (val, kind string) { return w.c.Call(ctx) }

// close closes the worker's connection.
func (w *openWorker) close() { w.c.Close() }

// sleep waits d on the worker's own timer (no allocation per call); false when ctx ended or
// halt was closed.
func (w *openWorker) sleep(ctx context.Context, halt <-chan struct{}, d time.Duration) bool {
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d) // Go >= 1.23: no stale value can be received after Reset
	}
	select {
	case <-ctx.Done():
		w.timer.Stop()
		return false
	case <-halt:
		w.timer.Stop()
		return false
	case <-w.timer.C:
		return true
	}
}

// redisCaller sends one Redis command template per call.
type redisCaller struct {
	cfg       OpenConfig
	conn      *Conn
	rng       *rand.Rand
	cmd       []byte
	holes     []int
	dataHoles []int
	pool      []byte
	vals      redisClient // per-worker reply-string caches (replyStr)
}

// newRedisCaller renders the command template once (it connects on dial).
func newRedisCaller(cfg OpenConfig) *redisCaller {
	w := &redisCaller{cfg: cfg, rng: newRand(), vals: redisClient{lastBulkN: -2}}
	w.cmd, w.holes, w.dataHoles = renderTemplateData(cfg.Args, cfg.KeySpace > 0, int(max(cfg.DataSize, 1)))
	if len(w.dataHoles) > 0 {
		w.pool = make([]byte, 4096+max(cfg.DataSize, 1))
		for i := range w.pool {
			w.pool[i] = byte(' ' + w.rng.IntN(95))
		}
	}
	return w
}

// Dial connects unless connected.
func (w *redisCaller) Dial(ctx context.Context) bool {
	if w.conn == nil {
		c, err := DialRedis(ctx, w.cfg.Redis)
		if err != nil {
			return false
		}
		w.conn = c
		c.Watch(ctx)
	}
	return true
}

// Call makes one call.
func (w *redisCaller) Call(ctx context.Context) (val, kind string) {
	if !w.Dial(ctx) {
		return "", "connect"
	}
	for _, h := range w.holes {
		putDigits(w.cmd[h:h+len(randPlaceholder)], w.rng.Uint64N(uint64(w.cfg.KeySpace)))
	}
	for _, h := range w.dataHoles {
		n := int(max(w.cfg.DataSize, 1))
		off := w.rng.IntN(len(w.pool) - n + 1)
		copy(w.cmd[h:h+n], w.pool[off:])
	}
	_, _ = w.conn.w.Write(w.cmd)
	err := w.conn.Flush()
	var r Reply
	if err == nil {
		r, err = w.conn.SkipReply()
	}
	if err != nil {
		w.Close() // redial on the next call
		return "", errKind(err)
	}
	return w.vals.replyStr(r)
}

// Bytes returns and resets the bytes moved.
func (w *redisCaller) Bytes() (sent, recv int64) {
	if w.conn == nil {
		return 0, 0
	}
	return w.conn.Bytes()
}

// Close closes the connection.
func (w *redisCaller) Close() {
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}

// echoCaller sends one echo message per call and reads it back.
type echoCaller struct {
	opts EchoOptions
	conn *EchoConn
}

// Dial connects unless connected.
func (e *echoCaller) Dial(ctx context.Context) bool {
	if e.conn == nil {
		c, err := DialEcho(ctx, e.opts)
		if err != nil {
			return false
		}
		e.conn = c
		c.Watch(ctx)
	}
	return true
}

// Call makes one call.
func (e *echoCaller) Call(ctx context.Context) (val, kind string) {
	if !e.Dial(ctx) {
		return "", "connect"
	}
	c := e.conn
	_, err := c.conn.Write(c.msg)
	if err == nil {
		c.CountSent(len(c.msg))
		var n int
		n, err = io.ReadFull(c.r, c.reply)
		c.CountRecv(n)
		if err == nil && !bytes.Equal(c.reply, c.msg) {
			err = errMismatch
		}
	}
	if err != nil {
		e.Close()
		return "", echoErrKind(err)
	}
	return c.value, ""
}

// Bytes returns and resets the bytes moved.
func (e *echoCaller) Bytes() (sent, recv int64) {
	if e.conn == nil {
		return 0, 0
	}
	return e.conn.Bytes()
}

// Close closes the connection.
func (e *echoCaller) Close() {
	if e.conn != nil {
		_ = e.conn.Close()
		e.conn = nil
	}
}

// jsOpen is client.open({segments: [{from, to, durationMs, step}], maxVUs, args, type, addrs}):
// runs the VU's current scenario as an open model with this client's connection settings (one
// connection per worker, spread over addrs when given) and returns {calls, dropped}. It blocks until the schedule ends.
func (rc *redisClient) jsOpen(c sobek.FunctionCall) sobek.Value {
	rt := rc.m.vu.Runtime()
	cfg, err := rc.openConfig(c.Argument(0))
	if err != nil {
		common.Throw(rt, err)
	}
	res, err := RunOpen(rc.m.vu.Context(), cfg)
	if err != nil {
		common.Throw(rt, err)
	}
	return rt.ToValue(map[string]any{"calls": res.Calls, "dropped": res.Dropped})
}

// openConfig reads a redis client's open() argument.
func (rc *redisClient) openConfig(arg sobek.Value) (OpenConfig, error) {
	cfg, obj, err := ParseOpen(rc.m.vu, arg)
	if err != nil {
		return cfg, err
	}
	cfg.KeySpace, cfg.DataSize, cfg.Redis = rc.keyspace, rc.dataSize, rc.opts
	if a, ok := obj["args"].([]any); ok {
		for _, x := range a {
			cfg.Args = append(cfg.Args, str(x))
		}
	}
	if len(cfg.Args) == 0 {
		return cfg, errors.New("redis.open: args (the command) missing")
	}
	if cfg.Type == "" {
		cfg.Type = "redis." + strings.ToLower(cfg.Args[0])
	}
	return cfg, nil
}

// ParseOpen reads what every client's open() takes: {segments: [{from, to, durationMs, step}],
// maxVUs, type, addrs, stop}; the scenario is the VU's current one. It returns the argument
// as a map too, for the client's own keys.
func ParseOpen(vu modules.VU, arg sobek.Value) (OpenConfig, map[string]any, error) {
	ss := lib.GetScenarioState(vu.Context())
	if ss == nil || vu.State() == nil {
		return OpenConfig{}, nil, errors.New("open: call it from a scenario's function")
	}
	obj, _ := arg.Export().(map[string]any)
	cfg := OpenConfig{Scenario: ss.Name, MaxVUs: int(num(obj["maxVUs"])), Type: str(obj["type"])}
	if a, ok := obj["addrs"].([]any); ok {
		for _, x := range a {
			if addr := str(x); addr != "" {
				cfg.Addrs = append(cfg.Addrs, addr)
			}
		}
	}
	segs, _ := obj["segments"].([]any)
	var plan []Segment
	for _, x := range segs {
		g, _ := x.(map[string]any)
		plan = append(plan, Segment{From: flt(g["from"]), To: flt(g["to"]),
			Duration: time.Duration(num(g["durationMs"])) * time.Millisecond, Step: int(num(g["step"]))})
	}
	s, err := NewSchedule(plan)
	cfg.Schedule = s
	cfg.Stop = parseStop(obj["stop"])
	return cfg, obj, err
}

// parseStop reads open()'s stop: {maxP99Ms, maxErrorPercent, after} (nil when absent or after < 1).
func parseStop(v any) *SearchStop {
	m, _ := v.(map[string]any)
	if m == nil || num(m["after"]) < 1 {
		return nil
	}
	st := &SearchStop{After: int(num(m["after"]))}
	st.Rule.MaxP99 = time.Duration(flt(m["maxP99Ms"]) * float64(time.Millisecond))
	if e, ok := m["maxErrorPercent"]; ok && e != nil {
		p := flt(e)
		st.Rule.MaxErrorPercent = &p
	}
	return st
}

// jsOpen is an echo client's open({segments, maxVUs, addrs}): client.open of Redis, sending
// one message per call on each worker's own connection (no pipelining).
func (ec *echoClient) jsOpen(c sobek.FunctionCall) sobek.Value {
	rt := ec.m.vu.Runtime()
	cfg, _, err := ParseOpen(ec.m.vu, c.Argument(0))
	if err != nil {
		common.Throw(rt, err)
	}
	cfg.Type, cfg.Echo = EchoScenarioType, &ec.opts
	res, err := RunOpen(ec.m.vu.Context(), cfg)
	if err != nil {
		common.Throw(rt, err)
	}
	return rt.ToValue(map[string]any{"calls": res.Calls, "dropped": res.Dropped})
}
