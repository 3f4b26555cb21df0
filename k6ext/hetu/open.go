package hetu

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"

	"github.com/benchrun/benchrun/k6ext/bench"
)

// nameChars are the characters of __rand_str__ (and benchrun.js's rnd3).
const nameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// ArgTemplate is one RPC argument of an open-model HeTu scenario, made anew for every call
// (hetu.call's templates, as benchrun.js's hetuArg): __rand_int__ is a random integer in
// [1, keySpace], __rand_str__ 8 random letters and digits, __rand_str3__ 3 of them (the seeds'
// exchange_data names); a result that is a decimal integer of at most 15 digits goes as a
// number, anything else as a string; '...' in single quotes is always a string.
type ArgTemplate struct {
	tmpl   string
	quoted bool
}

// ParseArgTemplate reads one argument template.
func ParseArgTemplate(s string) ArgTemplate {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return ArgTemplate{tmpl: s[1 : len(s)-1], quoted: true}
	}
	return ArgTemplate{tmpl: s}
}

// Value makes the argument of one call.
func (a ArgTemplate) Value(rng *rand.Rand, keySpace int64) any {
	v := a.tmpl
	if strings.Contains(v, "__rand_") {
		v = strings.ReplaceAll(v, "__rand_str3__", "\x00s3")
		v = expand(v, "__rand_int__", func() string { return strconv.FormatInt(1+rng.Int64N(max(keySpace, 1)), 10) })
		v = expand(v, "__rand_str__", func() string { return randStr(rng, 8) })
		v = expand(v, "\x00s3", func() string { return randStr(rng, 3) })
	}
	if !a.quoted && isSmallInt(v) {
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return v
}

// expand replaces each occurrence of ph in s with a new f().
func expand(s, ph string, f func() string) string {
	if !strings.Contains(s, ph) {
		return s
	}
	parts := strings.Split(s, ph)
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(f())
		}
		b.WriteString(p)
	}
	return b.String()
}

// randStr is n random letters and digits.
func randStr(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = nameChars[rng.IntN(len(nameChars))]
	}
	return string(b)
}

// isSmallInt tells whether s matches ^-?[0-9]{1,15}$.
func isSmallInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if len(d) < 1 || len(d) > 15 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// openCaller makes one RPC per call on its own HeTu connection.
type openCaller struct {
	url      string
	opts     Options
	rpc      string
	args     []ArgTemplate
	keySpace int64
	rng      *rand.Rand
	conn     *Conn
}

// Dial connects (with the handshake) unless connected.
func (o *openCaller) Dial(ctx context.Context) bool {
	if o.conn == nil {
		c, err := Dial(ctx, o.url, o.opts)
		if err != nil {
			return false
		}
		o.conn = c
		c.Watch(ctx)
	}
	return true
}

// Call makes one RPC: the recorded value is as callN's, the error kind as errKind's.
func (o *openCaller) Call(ctx context.Context) (val, kind string) {
	if !o.Dial(ctx) {
		return "", "connect"
	}
	args := make([]any, len(o.args))
	for i, a := range o.args {
		args[i] = a.Value(o.rng, o.keySpace)
	}
	v, err := o.conn.Call(o.rpc, args...)
	if err != nil {
		var se *ServerError
		if !errors.As(err, &se) || se.Kind != "rej" {
			o.Close() // transport failures and "err" replies: the server closes or may have
		}
		return "", errKind(err)
	}
	return returnStr(v), ""
}

// Bytes returns and resets the bytes moved.
func (o *openCaller) Bytes() (sent, recv int64) {
	if o.conn == nil {
		return 0, 0
	}
	return o.conn.Bytes()
}

// Close closes the connection.
func (o *openCaller) Close() {
	if o.conn != nil {
		_ = o.conn.Close()
		o.conn = nil
	}
}

// jsOpen is open({rpc, args, keySpace, segments, maxVUs, addrs, type, stop}): runs the VU's
// current scenario as an open model, maxVUs workers each with its own connection (with this
// client's instance, layers and key; spread over addrs when given, else this client's
// address) calling rpc with the argument templates (ArgTemplate). Returns {calls, dropped}.
func (jc *jsClient) jsOpen(c sobek.FunctionCall) sobek.Value {
	rt := jc.m.vu.Runtime()
	cfg, obj, err := bench.ParseOpen(jc.m.vu, c.Argument(0))
	if err != nil {
		common.Throw(rt, err)
	}
	rpc, _ := obj["rpc"].(string)
	if rpc == "" {
		common.Throw(rt, errors.New("hetu open: rpc missing"))
	}
	var args []ArgTemplate
	if a, ok := obj["args"].([]any); ok {
		for _, x := range a {
			s, _ := x.(string)
			args = append(args, ParseArgTemplate(s))
		}
	}
	var keySpace int64
	switch v := obj["keySpace"].(type) {
	case int64:
		keySpace = v
	case float64:
		keySpace = int64(v)
	}
	if cfg.Type == "" {
		cfg.Type = "hetu." + rpc
	}
	cfg.Caller = func(_ int, addr string) bench.OpenCaller {
		if addr == "" {
			addr = jc.url
		}
		return &openCaller{url: addr, opts: jc.opts, rpc: rpc, args: args, keySpace: keySpace,
			rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	}
	res, err := bench.RunOpen(jc.m.vu.Context(), cfg)
	if err != nil {
		common.Throw(rt, err)
	}
	return rt.ToValue(map[string]any{"calls": res.Calls, "dropped": res.Dropped})
}
