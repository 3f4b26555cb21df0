package hetu

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"

	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/k6ext/bench"
)

func init() {
	modules.Register("k6/x/hetu", new(RootModule))
}

// RootModule is the global k6/x/hetu module.
type RootModule struct{}

// NewModuleInstance returns the module instance of one VU.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &Module{vu: vu, recs: bench.NewVURecorders(vu)}
}

// Module is the k6/x/hetu instance of one VU.
type Module struct {
	vu   modules.VU
	recs *bench.VURecorders
}

// Exports lists the JS API: connect(url, {instance, layers, authKey}).
func (m *Module) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{"connect": m.connect}}
}

// jsClient is the JS object behind a connection; it reconnects lazily after a failure.
type jsClient struct {
	m    *Module
	url  string
	opts Options
	conn *Conn
}

// connect(url, opts) opens a connection synchronously (from VU code, not the init context).
func (m *Module) connect(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	if m.vu.State() == nil {
		common.Throw(rt, errors.New("hetu.connect must be called from VU code (setup or default), not the init context"))
	}
	jc := &jsClient{m: m, url: c.Argument(0).String()}
	if o, ok := c.Argument(1).Export().(map[string]any); ok {
		if v, ok := o["instance"].(string); ok {
			jc.opts.Instance = v
		}
		layers, _ := o["layers"].(string)
		l, err := ParseLayers(layers)
		if err != nil {
			common.Throw(rt, err)
		}
		jc.opts.Layers = l
		if v, ok := o["authKey"].(string); ok && v != "" {
			jc.opts.AuthKey = []byte(v)
		}
	} else {
		jc.opts.Layers = LayersMsgpackZlibCrypto
	}
	if len(jc.opts.AuthKey) > 0 && jc.opts.Layers != LayersMsgpackZlibCrypto {
		common.Throw(rt, errors.New("hetu.connect: an authKey needs the crypto layer"))
	}
	if _, err := jc.dial(); err != nil {
		common.Throw(rt, err)
	}
	obj := rt.NewObject()
	_ = obj.Set("call", jc.jsCall)
	_ = obj.Set("callN", jc.jsCallN)
	_ = obj.Set("open", jc.jsOpen)
	_ = obj.Set("subscribe", jc.jsSubscribe)
	_ = obj.Set("unsubscribe", jc.jsUnsubscribe)
	_ = obj.Set("pushes", jc.jsPushes)
	_ = obj.Set("close", func(sobek.FunctionCall) sobek.Value { jc.drop(); return sobek.Undefined() })
	return obj
}

// dial returns the connection, opening it if needed.
func (jc *jsClient) dial() (*Conn, error) {
	ctx := jc.m.vu.Context()
	if jc.conn == nil {
		c, err := Dial(ctx, jc.url, jc.opts)
		if err != nil {
			return nil, err
		}
		jc.conn = c
	}
	jc.conn.Watch(ctx)
	return jc.conn, nil
}

// drop closes the connection; the next call reconnects.
func (jc *jsClient) drop() {
	if jc.conn != nil {
		_ = jc.conn.Close()
		jc.conn = nil
	}
}

// call performs and records one call; the recorded value is str(payload[0]) for a
// one-element list payload (HeTu's ResponseToClient([x])), else str(payload).
func (jc *jsClient) call(rec *results.Recorder, name string, args []any) (any, error) {
	conn, err := jc.dial()
	if err != nil {
		if rec != nil {
			rec.Record(time.Now(), 0, "", "connect")
		}
		sleepCtx(jc, 100*time.Millisecond)
		return nil, err
	}
	start := time.Now()
	v, err := conn.Call(name, args...)
	d := time.Since(start)
	if rec != nil {
		if err != nil {
			rec.Record(start, d, "", errKind(err))
		} else {
			rec.Record(start, d, returnStr(v), "")
		}
		rec.AddBytes(conn.Bytes())
	}
	if err != nil {
		var se *ServerError
		if !errors.As(err, &se) || se.Kind != "rej" {
			jc.drop() // transport failures and "err" replies: the server closes or may have
		}
		return nil, err
	}
	return v, nil
}

// sleepCtx waits d or until the VU is interrupted.
func sleepCtx(jc *jsClient, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-jc.m.vu.Context().Done():
	case <-t.C:
	}
}

// returnStr is the recorded return value of a payload.
func returnStr(v any) string {
	if l, ok := v.([]any); ok && len(l) == 1 {
		v = l[0]
	}
	switch x := v.(type) {
	case []any, map[string]any:
		return fmt.Sprint(x)
	}
	return bench.PyStr(v)
}

// errKind maps a call error to the short kind recorded in results.
func errKind(err error) string {
	var se *ServerError
	var ne net.Error
	switch {
	case errors.As(err, &se):
		return se.Kind
	case websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway,
		websocket.CloseAbnormalClosure, websocket.CloseInternalServerErr, websocket.ClosePolicyViolation):
		return "closed"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "io"
}

// jsArgs exports JS call arguments for msgpack.
func jsArgs(vals []sobek.Value) []any {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v.Export()
	}
	return args
}

// jsCall is call(name, ...args): one synchronous call, recorded, returning the payload.
func (jc *jsClient) jsCall(c sobek.FunctionCall) sobek.Value {
	rt := jc.m.vu.Runtime()
	name := c.Argument(0).String()
	rec := jc.m.recs.Current("hetu." + name)
	v, err := jc.call(rec, name, jsArgs(c.Arguments[min(1, len(c.Arguments)):]))
	if err != nil {
		common.Throw(rt, err)
	}
	return toJS(rt, v)
}

// jsCallN is callN(name, n, argsFn?): n calls in a Go loop, each recorded; argsFn() returns
// the argument array of each call. Returns the number of failed calls; stops at the first
// transport failure or when the VU is interrupted.
func (jc *jsClient) jsCallN(c sobek.FunctionCall) sobek.Value {
	rt := jc.m.vu.Runtime()
	name := c.Argument(0).String()
	n := c.Argument(1).ToInteger()
	argsFn, hasFn := sobek.AssertFunction(c.Argument(2))
	rec := jc.m.recs.Current("hetu." + name)
	ctx := jc.m.vu.Context()
	var failed int64
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		var args []any
		if hasFn {
			v, err := argsFn(sobek.Undefined())
			if err != nil {
				var exc *sobek.Exception
				if errors.As(err, &exc) {
					panic(exc.Value())
				}
				common.Throw(rt, err)
			}
			if a, ok := v.Export().([]any); ok {
				args = a
			}
		}
		if _, err := jc.call(rec, name, args); err != nil {
			failed++
			if jc.conn == nil {
				break
			}
		}
	}
	return rt.ToValue(failed)
}

// jsSubscribe is subscribe(component, "get", index, value) or
// subscribe(component, "range", index, left, right, limit, desc): returns {id, rows}.
func (jc *jsClient) jsSubscribe(c sobek.FunctionCall) sobek.Value {
	rt := jc.m.vu.Runtime()
	conn, err := jc.dial()
	if err != nil {
		common.Throw(rt, err)
	}
	args := jsArgs(c.Arguments)
	if len(args) < 2 {
		common.Throw(rt, errors.New("hetu subscribe(component, mode, ...args)"))
	}
	comp, _ := args[0].(string)
	mode, _ := args[1].(string)
	id, rows, err := conn.Subscribe(comp, mode, args[2:]...)
	if err != nil {
		jc.drop()
		common.Throw(rt, err)
	}
	o := rt.NewObject()
	_ = o.Set("id", toJS(rt, id))
	_ = o.Set("rows", toJS(rt, rows))
	return o
}

// jsUnsubscribe is unsubscribe(id).
func (jc *jsClient) jsUnsubscribe(c sobek.FunctionCall) sobek.Value {
	if jc.conn != nil {
		if err := jc.conn.Unsubscribe(c.Argument(0).Export()); err != nil {
			jc.drop()
			common.Throw(jc.m.vu.Runtime(), err)
		}
	}
	return sobek.Undefined()
}

// jsPushes is pushes(): the update pushes received so far (["updt", id, rows] each), cleared.
func (jc *jsClient) jsPushes(sobek.FunctionCall) sobek.Value {
	rt := jc.m.vu.Runtime()
	if jc.conn == nil {
		return rt.NewArray()
	}
	out := make([]any, len(jc.conn.Pushes))
	for i, p := range jc.conn.Pushes {
		out[i] = toJS(rt, []any(p))
	}
	jc.conn.Pushes = jc.conn.Pushes[:0]
	return rt.NewArray(out...)
}

// toJS converts a decoded msgpack value for JS (bin becomes an ArrayBuffer).
func toJS(rt *sobek.Runtime, v any) sobek.Value {
	switch x := v.(type) {
	case nil:
		return sobek.Null()
	case []byte:
		return rt.ToValue(rt.NewArrayBuffer(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJS(rt, e)
		}
		return rt.NewArray(out...)
	case map[string]any:
		o := rt.NewObject()
		for k, e := range x {
			_ = o.Set(k, toJS(rt, e))
		}
		return o
	}
	return rt.ToValue(v)
}
