package bench

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"

	"github.com/benchrun/benchrun/internal/results"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// randPlaceholder is replaced in loop() arguments by a random 12-digit key number, as
// redis-benchmark does with -r.
const randPlaceholder = "__rand_int__"

// dataPlaceholder is replaced in loop() arguments by dataSize random printable bytes, new
// for every call, as redis-benchmark's __data__ (which it fills with a fixed pattern).
const dataPlaceholder = "__data__"

// redisClient is the JS Redis client of one VU: one lazily dialled connection.
type redisClient struct {
	m        *Module
	opts     RedisOptions
	keyspace int64
	dataSize int64 // bytes of each __data__ value (default 3, as redis-benchmark's -d)
	pool     []byte
	prefix   string
	conn     *Conn
	// caches so that recording a reply does not allocate in steady state
	lastLine  []byte
	lastLineS string
	lastBulkN int64
	lastBulkS string
	upsert    upserter
}

func init() { registerHotPath("redis", (*Module).redis) }

// redis(opts) returns a Redis client. opts is "host:port" or {addr, password, username,
// db, keyspace, prefix}. The connection is opened on first use, from the VU.
func (m *Module) redis(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	rc := &redisClient{m: m, keyspace: 0, prefix: "benchrun:", lastBulkN: -2}
	arg := c.Argument(0)
	if obj, ok := arg.Export().(map[string]any); ok {
		rc.opts.Addr = str(obj["addr"])
		rc.opts.Password = str(obj["password"])
		rc.opts.Username = str(obj["username"])
		rc.opts.DB = int(num(obj["db"]))
		rc.keyspace = num(obj["keyspace"])
		rc.dataSize = num(obj["dataSize"])
		if b, _ := obj["tls"].(bool); b {
			cfg, err := TLSConfig(str(obj["tlsServerName"]), str(obj["tlsCA"]), obj["tlsInsecure"] == true)
			if err != nil {
				common.Throw(rt, err)
			}
			rc.opts.TLS = cfg
		}
		if p := str(obj["prefix"]); p != "" {
			rc.prefix = p
		}
	} else if !sobek.IsUndefined(arg) {
		rc.opts.Addr = arg.String()
	}
	if rc.opts.Addr == "" {
		rc.opts.Addr = "127.0.0.1:6379"
	}
	if rc.dataSize <= 0 {
		rc.dataSize = 3
	}
	rc.upsert = upserter{prefix: rc.prefix + "upsert:", keyspace: 30000}
	if rc.keyspace > 0 {
		rc.upsert.keyspace = rc.keyspace
	}
	o := rt.NewObject()
	set := func(name string, fn func(sobek.FunctionCall) sobek.Value) { _ = o.Set(name, fn) }
	set("get", func(c sobek.FunctionCall) sobek.Value {
		return rc.jsCall(c, string(v1alpha1.ScenarioRedisGet), "GET", c.Argument(0).String())
	})
	set("set", func(c sobek.FunctionCall) sobek.Value {
		return rc.jsCall(c, string(v1alpha1.ScenarioRedisSet), "SET", c.Argument(0).String(), c.Argument(1).String())
	})
	set("ping", func(c sobek.FunctionCall) sobek.Value {
		return rc.jsCall(c, string(v1alpha1.ScenarioRedisPing), "PING")
	})
	set("command", func(c sobek.FunctionCall) sobek.Value {
		args := make([]string, len(c.Arguments))
		for i, a := range c.Arguments {
			args[i] = a.String()
		}
		if len(args) == 0 {
			common.Throw(rt, errors.New("redis.command: missing command name"))
		}
		return rc.jsCall(c, "redis."+strings.ToLower(args[0]), args...)
	})
	set("commandStats", func(sobek.FunctionCall) sobek.Value {
		m, err := rc.commandStats()
		if err != nil {
			common.Throw(rt, fmt.Errorf("redis INFO commandstats %s: %w", rc.opts.Addr, err))
		}
		return rt.ToValue(m)
	})
	set("loop", rc.jsLoop)
	set("open", rc.jsOpen)
	set("upsert", rc.jsUpsert)
	set("upsertN", rc.jsUpsertN)
	set("ycsb", rc.jsYCSB)
	set("close", func(sobek.FunctionCall) sobek.Value {
		if rc.conn != nil {
			_ = rc.conn.Close()
			rc.conn = nil
		}
		return sobek.Undefined()
	})
	return o
}

// connect returns the connection, dialling it if needed, watching the VU's context; a failed
// dial is recorded into rec (when not nil) as a "connect" error.
func (rc *redisClient) connect(rec *results.Recorder) (*Conn, error) {
	ctx := rc.m.vu.Context()
	if rc.conn == nil {
		conn, err := DialRedis(ctx, rc.opts)
		if err != nil {
			if rec != nil {
				rec.Record(time.Now(), 0, "", "connect") // a failed connect counts as a failed call
			}
			return nil, err
		}
		rc.conn = conn
	}
	rc.conn.Watch(ctx)
	return rc.conn, nil
}

// drop closes a connection after a transport error so the next call redials.
func (rc *redisClient) drop() {
	if rc.conn != nil {
		_ = rc.conn.Close()
		rc.conn = nil
	}
}

// recordBytes adds the connection's byte counts to rec.
func (rc *redisClient) recordBytes(rec *results.Recorder) {
	if rc.conn == nil {
		return
	}
	s, r := rc.conn.Bytes()
	if rec != nil {
		rec.AddBytes(s, r)
	}
}

// jsCall runs one command, records it and returns its reply to JS (throws on errors).
func (rc *redisClient) jsCall(_ sobek.FunctionCall, typ string, args ...string) sobek.Value {
	rt := rc.m.vu.Runtime()
	rec := rc.m.recs.Current(typ)
	conn, err := rc.connect(rec)
	if err != nil {
		common.Throw(rt, fmt.Errorf("redis connect %s: %w", rc.opts.Addr, err))
	}
	start := time.Now()
	conn.WriteCommand(args...)
	err = conn.Flush()
	var v any
	if err == nil {
		v, err = conn.ReadValue()
	}
	d := time.Since(start)
	var rerr RedisError
	if err == nil {
		if e, ok := v.(RedisError); ok {
			rerr, err = e, e
		}
	}
	if rec != nil {
		if err != nil {
			rec.Record(start, d, "", errKind(err))
		} else {
			rec.Record(start, d, rc.valueStr(v), "")
		}
	}
	rc.recordBytes(rec)
	if err != nil {
		if rerr == "" {
			rc.drop()
		}
		common.Throw(rt, fmt.Errorf("redis %s: %w", args[0], err))
	}
	return toJS(rt, v)
}

// valueStr is the recorded return value of a decoded reply: simple strings and integers as
// they are, nil as None, bulk strings as "bulk(N)", arrays as "array(N)".
func (rc *redisClient) valueStr(v any) string {
	switch x := v.(type) {
	case Status:
		return string(x)
	case string:
		return rc.bulkStr(int64(len(x)))
	case []any:
		return "array(" + strconv.Itoa(len(x)) + ")"
	}
	return PyStr(v)
}

// bulkStr returns "bulk(n)", cached for the last n.
func (rc *redisClient) bulkStr(n int64) string {
	if n != rc.lastBulkN {
		rc.lastBulkN, rc.lastBulkS = n, "bulk("+strconv.FormatInt(n, 10)+")"
	}
	return rc.lastBulkS
}

// replyStr is valueStr for a skipped reply; kind is the error kind of an error reply.
func (rc *redisClient) replyStr(r Reply) (val, kind string) {
	switch r.Type {
	case '+':
		if !bytes.Equal(r.Line, rc.lastLine) {
			rc.lastLine = append(rc.lastLine[:0], r.Line...)
			rc.lastLineS = string(r.Line)
		}
		return rc.lastLineS, ""
	case '-':
		return "", RedisError(string(r.Line)).Kind()
	case ':':
		return smallInt(r.Int), ""
	case '$':
		if r.Int < 0 {
			return "None", ""
		}
		return rc.bulkStr(r.Int), ""
	case '*':
		if r.Int < 0 {
			return "None", ""
		}
		return "array(" + strconv.FormatInt(r.Int, 10) + ")", ""
	}
	return "", "protocol"
}

// jsLoop is loop(n, cmd, ...args): n calls of the same command in a Go loop, each timed and
// recorded; "__rand_int__" in arguments becomes a random 12-digit number below keyspace.
// Returns the number of failed calls. Stops early when the VU is interrupted or the
// connection breaks.
func (rc *redisClient) jsLoop(c sobek.FunctionCall) sobek.Value {
	rt := rc.m.vu.Runtime()
	n := c.Argument(0).ToInteger()
	if len(c.Arguments) < 2 {
		common.Throw(rt, errors.New("redis.loop(n, cmd, ...args): missing command"))
	}
	args := make([]string, len(c.Arguments)-1)
	for i, a := range c.Arguments[1:] {
		args[i] = a.String()
	}
	return rt.ToValue(rc.loop(n, args))
}

// loop implements jsLoop.
func (rc *redisClient) loop(n int64, args []string) int64 {
	rec := rc.m.recs.Current("redis." + strings.ToLower(args[0]))
	ctx := rc.m.vu.Context()
	conn, err := rc.connect(rec)
	if err != nil {
		sleepCtx(ctx, 100*time.Millisecond)
		return 1
	}
	cmd, holes, dataHoles := renderTemplateData(args, rc.keyspace > 0, int(rc.dataSize))
	if len(dataHoles) > 0 && rc.pool == nil {
		rc.pool = make([]byte, 4096+rc.dataSize)
		for i := range rc.pool {
			rc.pool[i] = byte(' ' + rc.m.rng.IntN(95))
		}
	}
	var failed int64
	for i := int64(0); i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		for _, h := range holes {
			putDigits(cmd[h:h+len(randPlaceholder)], rc.m.rng.Uint64N(uint64(rc.keyspace)))
		}
		for _, h := range dataHoles {
			off := rc.m.rng.IntN(len(rc.pool) - int(rc.dataSize) + 1)
			copy(cmd[h:h+int(rc.dataSize)], rc.pool[off:])
		}
		start := time.Now()
		r, err := conn.Call(cmd)
		d := time.Since(start)
		val, kind := "", ""
		if err != nil {
			kind = errKind(err)
		} else {
			val, kind = rc.replyStr(r)
		}
		if kind != "" {
			failed++
		}
		if rec != nil {
			rec.Record(start, d, val, kind)
		}
		if err != nil {
			rc.recordBytes(rec)
			rc.drop()
			return failed
		}
	}
	rc.recordBytes(rec)
	return failed
}

// renderTemplate encodes a command in RESP once and returns the offsets of the random
// placeholders in it (none when replace is false).
func renderTemplate(args []string, replace bool) ([]byte, []int) {
	b, holes, _ := renderTemplateData(args, replace, 0)
	return b, holes
}

// renderTemplateData is renderTemplate that also expands each __data__ to dataSize bytes
// (when dataSize > 0) and returns their offsets, to be filled before each call.
func renderTemplateData(args []string, replace bool, dataSize int) (b []byte, holes, dataHoles []int) {
	b = appendHeader(nil, '*', len(args))
	for _, a := range args {
		var rel []int // offsets of the data values within the expanded argument
		if dataSize > 0 && strings.Contains(a, dataPlaceholder) {
			var e strings.Builder
			for {
				i := strings.Index(a, dataPlaceholder)
				if i < 0 {
					break
				}
				e.WriteString(a[:i])
				rel = append(rel, e.Len())
				e.WriteString(strings.Repeat("x", dataSize))
				a = a[i+len(dataPlaceholder):]
			}
			e.WriteString(a)
			a = e.String()
		}
		b = appendHeader(b, '$', len(a))
		base := len(b)
		b = append(b, a...)
		for _, r := range rel {
			dataHoles = append(dataHoles, base+r)
		}
		for off := 0; replace; {
			i := strings.Index(a[off:], randPlaceholder)
			if i < 0 {
				break
			}
			holes = append(holes, base+off+i)
			off += i + len(randPlaceholder)
		}
		b = append(b, '\r', '\n')
	}
	return b, holes, dataHoles
}

// putDigits writes v as zero-padded decimal into dst (12 bytes).
func putDigits(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}

// jsUpsert is upsert(number?): one HeTu-style upsert, recorded; returns the attempts.
func (rc *redisClient) jsUpsert(c sobek.FunctionCall) sobek.Value {
	rt := rc.m.vu.Runtime()
	number := c.Argument(0).ToInteger()
	attempts, err := rc.upsertOnce(number)
	if err != nil {
		common.Throw(rt, fmt.Errorf("redis upsert: %w", err))
	}
	return rt.ToValue(attempts)
}

// jsUpsertN is upsertN(n): n upserts of random numbers in a Go loop; returns the failures.
func (rc *redisClient) jsUpsertN(c sobek.FunctionCall) sobek.Value {
	n := c.Argument(0).ToInteger()
	ctx := rc.m.vu.Context()
	var failed int64
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		if _, err := rc.upsertOnce(0); err != nil {
			failed++
			sleepCtx(ctx, 10*time.Millisecond)
		}
	}
	return rc.m.vu.Runtime().ToValue(failed)
}

// upsertOnce runs and records one upsert of number (random in [1, keyspace] when 0).
func (rc *redisClient) upsertOnce(number int64) (int64, error) {
	rec := rc.m.recs.Current(string(v1alpha1.ScenarioRedisUpsert))
	if number <= 0 {
		number = 1 + rc.m.rng.Int64N(rc.upsert.keyspace)
	}
	conn, err := rc.connect(rec)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	attempts, err := rc.upsert.run(conn, rc.m.rng, number)
	d := time.Since(start)
	if rec != nil {
		if err != nil {
			rec.Record(start, d, "", errKind(err))
		} else {
			rec.Record(start, d, smallInt(attempts), "")
		}
	}
	rc.recordBytes(rec)
	if err != nil {
		var re RedisError
		if !errors.As(err, &re) {
			rc.drop()
		}
	}
	return attempts, err
}

// toJS converts a decoded reply for JS.
func toJS(rt *sobek.Runtime, v any) sobek.Value {
	switch x := v.(type) {
	case nil:
		return sobek.Null()
	case Status:
		return rt.ToValue(string(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJS(rt, e)
		}
		return rt.NewArray(out...)
	}
	return rt.ToValue(v)
}

// str returns v as a string ("" for nil).
func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// num returns v as an integer (0 when absent or not a number).
func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}
