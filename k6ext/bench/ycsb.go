package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"

	"github.com/benchrun/benchrun/internal/results"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// ycsbWorkload runs YCSB core-workload operations against Redis hashes, the way YCSB's
// Redis binding stores records: key PREFIX user<fnv(n)>, fields field0..fieldN-1.
type ycsbWorkload struct {
	rc                   *redisClient
	keyPrefix            string
	keys                 *KeyChooser
	fieldCount, fieldLen int
	read, update, rmw    float64 // cumulative proportions; the rest is insert
	fields               []string
	pool                 []byte     // random printable bytes values are cut from
	rng                  *rand.Rand // the VU's (an open-model worker has its own copy)
}

// ycsbOptions are the JS options of client.ycsb().
type ycsbOptions struct {
	recordCount             int64
	fieldCount, fieldLength int
	read, update, insert    float64
	rmw                     float64 // read-modify-write
	distribution, prefix    string
	runnerIndex, runnerCnt  int // this runner's slot for inserts (see NewRunnerKeyChooser)
}

// jsYCSB is client.ycsb(opts): a YCSB workload bound to this client, with
// load(start, end) and run(n). The runner slot (runnerIndex, runnerCount) defaults to
// __ENV.BENCHRUN_RUNNER_INDEX and BENCHRUN_RUNNER_COUNT.
func (rc *redisClient) jsYCSB(c sobek.FunctionCall) sobek.Value {
	rt := rc.m.vu.Runtime()
	o := ycsbOptions{recordCount: 1000, fieldCount: 10, fieldLength: 100, read: 0.95, update: 0.05,
		distribution: "zipfian", prefix: rc.prefix + "ycsb:"}
	var err error
	if o.runnerIndex, o.runnerCnt, err = runnerSlot(rt, c.Argument(0)); err != nil {
		common.Throw(rt, fmt.Errorf("ycsb: %w", err))
	}
	if m, ok := c.Argument(0).Export().(map[string]any); ok {
		if v := num(m["recordCount"]); v > 0 {
			o.recordCount = v
		}
		if v := num(m["fieldCount"]); v > 0 {
			o.fieldCount = int(v)
		}
		if v := num(m["fieldLength"]); v > 0 {
			o.fieldLength = int(v)
		}
		if v, ok := m["readProportion"]; ok {
			o.read = flt(v)
		}
		if v, ok := m["updateProportion"]; ok {
			o.update = flt(v)
		}
		if v, ok := m["insertProportion"]; ok {
			o.insert = flt(v)
		}
		if v, ok := m["readModifyWriteProportion"]; ok {
			o.rmw = flt(v)
		}
		if v := str(m["requestDistribution"]); v != "" {
			o.distribution = v
		}
		if v := str(m["prefix"]); v != "" {
			o.prefix = v
		}
	}
	total := o.read + o.update + o.insert + o.rmw
	if total <= 0 {
		common.Throw(rt, fmt.Errorf("ycsb: proportions must add up to more than 0"))
	}
	keys, err := NewRunnerKeyChooser(o.distribution, o.recordCount, o.prefix, o.runnerIndex, o.runnerCnt)
	if err != nil {
		common.Throw(rt, fmt.Errorf("ycsb: %w", err))
	}
	w := &ycsbWorkload{rc: rc, keyPrefix: o.prefix, keys: keys, fieldCount: o.fieldCount, fieldLen: o.fieldLength,
		read: o.read / total, update: (o.read + o.update) / total, rmw: (o.read + o.update + o.rmw) / total, rng: rc.m.rng}
	for i := range o.fieldCount {
		w.fields = append(w.fields, "field"+strconv.Itoa(i))
	}
	w.pool = make([]byte, 4096+o.fieldLength)
	for i := range w.pool {
		w.pool[i] = byte(' ' + rc.m.rng.IntN(95))
	}
	obj := rt.NewObject()
	_ = obj.Set("load", func(c sobek.FunctionCall) sobek.Value {
		n, err := w.load(c.Argument(0).ToInteger(), c.Argument(1).ToInteger())
		if err != nil {
			common.Throw(rt, fmt.Errorf("ycsb load: %w", err))
		}
		return rt.ToValue(n)
	})
	_ = obj.Set("run", func(c sobek.FunctionCall) sobek.Value {
		return rt.ToValue(w.run(c.Argument(0).ToInteger()))
	})
	_ = obj.Set("open", w.jsOpen)
	return obj
}

// key returns the Redis key of record n.
func (w *ycsbWorkload) key(prefix string, n int64) string {
	return prefix + "user" + strconv.FormatUint(fnv64(uint64(n)), 10)
}

// value returns a random field value.
func (w *ycsbWorkload) value() string {
	off := w.rng.IntN(len(w.pool) - w.fieldLen + 1)
	return string(w.pool[off : off+w.fieldLen])
}

// insertArgs returns the HSET command writing every field of record n.
func (w *ycsbWorkload) insertArgs(n int64) []string {
	args := make([]string, 0, 2+2*w.fieldCount)
	args = append(args, "HSET", w.key(w.keyPrefix, n))
	for _, f := range w.fields {
		args = append(args, f, w.value())
	}
	return args
}

// load writes records [start, end) with pipelined HSETs (not recorded) and returns how many.
func (w *ycsbWorkload) load(start, end int64) (int64, error) {
	conn, err := w.rc.connect(nil) // loading is not recorded
	if err != nil {
		return 0, err
	}
	const batch = 100
	for base := start; base < end; base += batch {
		last := min(base+batch, end)
		for n := base; n < last; n++ {
			conn.WriteCommand(w.insertArgs(n)...)
		}
		if err := conn.Flush(); err != nil {
			w.rc.drop()
			return base - start, err
		}
		for n := base; n < last; n++ {
			r, err := conn.SkipReply()
			if err == nil {
				err = r.Err()
			}
			if err != nil {
				w.rc.drop()
				return n - start, err
			}
		}
	}
	w.rc.recordBytes(nil)
	return end - start, nil
}

// ycsbOps are one run's recorders: the scenario's and each operation's own.
type ycsbOps struct {
	all, read, update, insert, rmw *results.Recorder
}

// run performs n operations, each timed and recorded with its operation name as the
// return value, in the scenario and in its operation's own histogram; returns the number of
// failures.
func (w *ycsbWorkload) run(n int64) int64 {
	rc := w.rc
	var recs ycsbOps
	if recs.all = rc.m.recs.Current(string(v1alpha1.ScenarioYCSB)); recs.all != nil {
		// only the operations the mix can choose (each recorder holds ~190 KiB of histogram)
		op := func(name string, p float64) *results.Recorder {
			if p > 1e-9 { // not a float remainder of the others
				return recs.all.Op(name)
			}
			return nil
		}
		recs.read, recs.update = op("read", w.read), op("update", w.update-w.read)
		recs.rmw, recs.insert = op("read-modify-write", w.rmw-w.update), op("insert", 1-w.rmw)
	}
	ctx := rc.m.vu.Context()
	conn, err := rc.connect(recs.all)
	if err != nil {
		sleepCtx(ctx, 100*time.Millisecond)
		return 1
	}
	var failed int64
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		start := time.Now()
		op, opRec, err := w.issue(conn, &recs)
		if err == nil {
			err = w.readReply(conn)
		}
		d := time.Since(start)
		kind := ""
		if err != nil {
			kind = errKind(err)
			failed++
		}
		if recs.all != nil {
			recs.all.Record(start, d, op, kind)
			if opRec != nil {
				opRec.Record(start, d, op, kind)
			}
		}
		if err != nil && !isRedisError(err) {
			rc.drop()
			break
		}
	}
	rc.recordBytes(recs.all)
	return failed
}

// issue buffers the command of one random operation; a read-modify-write first reads the
// record (waiting for the reply) and buffers the write.
func (w *ycsbWorkload) issue(conn *Conn, recs *ycsbOps) (string, *results.Recorder, error) {
	rng := w.rng
	p := rng.Float64()
	switch {
	case p < w.read:
		conn.WriteCommand("HGETALL", w.key(w.keyPrefix, w.keys.Next(rng)))
		return "read", recs.read, nil
	case p < w.update:
		conn.WriteCommand("HSET", w.key(w.keyPrefix, w.keys.Next(rng)), w.fields[rng.IntN(len(w.fields))], w.value())
		return "update", recs.update, nil
	case p < w.rmw:
		key := w.key(w.keyPrefix, w.keys.Next(rng))
		conn.WriteCommand("HGETALL", key)
		if err := w.readReply(conn); err != nil {
			return "read-modify-write", recs.rmw, err
		}
		conn.WriteCommand("HSET", key, w.fields[rng.IntN(len(w.fields))], w.value())
		return "read-modify-write", recs.rmw, nil
	default:
		conn.WriteCommand(w.insertArgs(w.keys.NextInsert())...)
		return "insert", recs.insert, nil
	}
}

// readReply flushes the buffered command and reads its reply, an error reply as an error.
func (w *ycsbWorkload) readReply(conn *Conn) error {
	if err := conn.Flush(); err != nil {
		return err
	}
	r, err := conn.SkipReply()
	if err != nil {
		return err
	}
	return r.Err()
}

// isRedisError reports whether err is an error reply (the connection is still usable).
func isRedisError(err error) bool {
	var re RedisError
	return errors.As(err, &re)
}

// flt returns v as a float (0 when absent or not a number).
func flt(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

// Environment variables naming a runner's slot among the runners of a run (set by benchrun
// for every runner, locally and in the cluster).
const (
	envRunnerIndex = "BENCHRUN_RUNNER_INDEX"
	envRunnerCount = "BENCHRUN_RUNNER_COUNT"
)

// runnerSlot returns the runner index and count of a key chooser: opts.runnerIndex and
// opts.runnerCount when given, else __ENV.BENCHRUN_RUNNER_INDEX and BENCHRUN_RUNNER_COUNT,
// else 0 of 1.
func runnerSlot(rt *sobek.Runtime, opts sobek.Value) (index, count int, err error) {
	get := func(opt, env string, def int) (int, error) {
		if o, ok := opts.(*sobek.Object); ok {
			if v := o.Get(opt); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
				n, err := strconv.Atoi(v.String())
				if err != nil {
					return 0, fmt.Errorf("%s %q is not an integer", opt, v.String())
				}
				return n, nil
			}
		}
		if e, ok := rt.Get("__ENV").(*sobek.Object); ok {
			if v := e.Get(env); v != nil && !sobek.IsUndefined(v) && v.String() != "" {
				n, err := strconv.Atoi(v.String())
				if err != nil {
					return 0, fmt.Errorf("%s %q is not an integer", env, v.String())
				}
				return n, nil
			}
		}
		return def, nil
	}
	if index, err = get("runnerIndex", envRunnerIndex, 0); err != nil {
		return 0, 0, err
	}
	if count, err = get("runnerCount", envRunnerCount, 1); err != nil {
		return 0, 0, err
	}
	if count < 1 || index < 0 || index >= count {
		return 0, 0, fmt.Errorf("runner %d of %d: want 0 <= runnerIndex < runnerCount", index, count)
	}
	return index, count, nil
}
