// Package hetu is a HeTu game-server client speaking HeTu's real wire protocol (WebSocket
// binary frames, msgpack, zlib stream with the server's preset dictionary, X25519 +
// ChaCha20-Poly1305 session), and the k6 JS module k6/x/hetu built on it.
package hetu

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/benchrun/benchrun/k6ext/ctxwatch"
	"github.com/benchrun/benchrun/k6ext/fastsock"
)

// Layers names the packet layers a server is configured with.
type Layers int

// The layer stacks HeTu servers use (PACKET_LAYERS), applied in this order on send.
const (
	LayersMsgpack           Layers = iota // msgpack only
	LayersMsgpackZlib                     // msgpack + zlib
	LayersMsgpackZlibCrypto               // msgpack + zlib + crypto (HeTu's default, "full")
)

// ParseLayers parses "msgpack", "msgpack+zlib", "msgpack+zlib+crypto" or "full".
func ParseLayers(s string) (Layers, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "jsonb", "msgpack") {
	case "msgpack":
		return LayersMsgpack, nil
	case "msgpack+zlib", "zlib":
		return LayersMsgpackZlib, nil
	case "", "full", "msgpack+zlib+crypto":
		return LayersMsgpackZlibCrypto, nil
	}
	return 0, fmt.Errorf("hetu: unknown layers %q (msgpack, msgpack+zlib, msgpack+zlib+crypto)", s)
}

// Options configures a connection.
type Options struct {
	// Instance is the HeTu instance name, the last path element of ws://HOST:PORT/hetu/<instance>,
	// used when the URL has no /hetu/ path.
	Instance string
	// Layers must match the server's PACKET_LAYERS.
	Layers Layers
	// AuthKey signs the crypto hello when the server has an auth key (never logged).
	AuthKey []byte
	// HandshakeTimeout bounds dialling plus the handshake (default 10s).
	HandshakeTimeout time.Duration
}

// ServerError is a ["rej", name, code] or ["err", name, reason] reply.
type ServerError struct {
	Kind   string // "rej" or "err"
	Name   string
	Detail any
}

// Error describes the rejection.
func (e *ServerError) Error() string {
	return fmt.Sprintf("hetu: %s %s: %v", e.Kind, e.Name, e.Detail)
}

// Push is a server message that is not a reply (["updt", sub_id, rows]).
type Push []any

// Conn is one HeTu connection. It is not safe for concurrent use: replies carry no request
// id, so a connection has one outstanding call at a time.
type Conn struct {
	ws      *websocket.Conn
	deflate *deflater
	inflate *inflater
	crypt   *cryptoLayer
	fast    *fastsock.Conn // the plain TCP connection under ws (nil for wss): holds requests
	enc     []byte
	sealed  []byte
	opened  []byte
	// Pushes holds update pushes received while waiting for replies, oldest first.
	Pushes []Push
	// MaxPushes bounds Pushes (oldest dropped); 0 keeps the default 1000.
	MaxPushes int
	// DroppedPushes counts pushes dropped because Pushes was full.
	DroppedPushes   int64
	ctxwatch.Socket // watch, close and count the frame payload bytes
}

// URL returns the WebSocket URL of an instance: rawURL as given when it already has a
// /hetu/ path, else rawURL + "/hetu/" + instance. "host:port" gets "ws://".
func URL(rawURL, instance string) (string, error) {
	if !strings.Contains(rawURL, "://") {
		rawURL = "ws://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	if !strings.Contains(u.Path, "/hetu/") {
		if instance == "" {
			return "", errors.New("hetu: the URL has no /hetu/<instance> path and no instance is given")
		}
		u.Path = strings.TrimSuffix(u.Path, "/") + "/hetu/" + url.PathEscape(instance)
	}
	return u.String(), nil
}

// Dial connects and performs the handshake.
func Dial(ctx context.Context, rawURL string, o Options) (*Conn, error) {
	u, err := URL(rawURL, o.Instance)
	if err != nil {
		return nil, err
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
	defer cancel()
	d := websocket.Dialer{HandshakeTimeout: o.HandshakeTimeout, ReadBufferSize: 16 << 10,
		WriteBufferSize: 16 << 10, NetDialContext: dialTCP}
	ws, resp, err := d.DialContext(ctx, u, http.Header{})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("hetu: dial %s: %w", u, err)
	}
	ws.SetReadLimit(64 << 20)
	c := &Conn{ws: ws}
	c.fast, _ = ws.NetConn().(*fastsock.Conn) // nil under TLS (wss)
	c.Attach(ws)
	if dl, ok := ctx.Deadline(); ok {
		_ = ws.SetReadDeadline(dl)
		_ = ws.SetWriteDeadline(dl)
	}
	if err := c.handshake(o); err != nil {
		_ = ws.Close()
		return nil, err
	}
	_ = ws.SetReadDeadline(time.Time{})
	_ = ws.SetWriteDeadline(time.Time{})
	return c, nil
}

// dialTCP dials the WebSocket's TCP connection as a fastsock.Conn (raw system calls; a
// request held until the read of its reply, see Request).
func dialTCP(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return fastsock.Wrap(nc), nil
}

// handshake sends one entry per layer that needs one (zlib: b"", crypto: the hello) as a
// plain msgpack list and sets the layers up from the server's answer.
func (c *Conn) handshake(o Options) error {
	hello := []any{}
	var priv *ecdh.PrivateKey
	if o.Layers >= LayersMsgpackZlib {
		hello = append(hello, []byte{})
	}
	if o.Layers >= LayersMsgpackZlibCrypto {
		var err error
		if priv, err = ecdh.X25519().GenerateKey(rand.Reader); err != nil {
			return err
		}
		h, err := clientHello(priv.PublicKey().Bytes(), o.AuthKey)
		if err != nil {
			return err
		}
		hello = append(hello, h)
	}
	msg, _ := appendMsgpack(nil, hello)
	if err := c.ws.WriteMessage(websocket.BinaryMessage, msg); err != nil {
		return fmt.Errorf("hetu: handshake: %w", err)
	}
	_, frame, err := c.ws.ReadMessage()
	if err != nil {
		return fmt.Errorf("hetu: handshake rejected (connection closed): %w", err)
	}
	v, err := unmarshalMsgpack(frame)
	if err != nil {
		return fmt.Errorf("hetu: handshake reply: %w", err)
	}
	reply, ok := v.([]any)
	if !ok || len(reply) != len(hello) {
		return fmt.Errorf("hetu: handshake rejected: server answered %d entries for %d layers "+
			"(layers or auth key do not match the server)", len(reply), len(hello))
	}
	if o.Layers >= LayersMsgpackZlib {
		dict, ok := reply[0].([]byte)
		if !ok {
			return errors.New("hetu: handshake: zlib dictionary is not bytes")
		}
		if c.deflate, err = newDeflater(dict); err != nil {
			return err
		}
		c.inflate = newInflater(dict)
	}
	if o.Layers >= LayersMsgpackZlibCrypto {
		pub, ok := reply[1].([]byte)
		if !ok {
			return errors.New("hetu: handshake: server public key is not bytes")
		}
		if c.crypt, err = newCryptoLayer(priv, pub); err != nil {
			return err
		}
	}
	return nil
}

// Send encodes one message through the layers and sends it as one binary frame.
func (c *Conn) Send(msg []any) error {
	var err error
	if c.enc, err = appendMsgpack(c.enc[:0], msg); err != nil {
		return err
	}
	data := c.enc
	if c.deflate != nil {
		if data, err = c.deflate.compress(data); err != nil {
			return err
		}
	}
	if c.crypt != nil {
		c.sealed = c.crypt.seal(c.sealed[:0], data)
		data = c.sealed
	}
	c.CountSent(len(data))
	return c.ws.WriteMessage(websocket.BinaryMessage, data)
}

// Receive reads one frame and decodes it through the layers. Text frames (the motd) are
// returned as a string.
func (c *Conn) Receive() (any, error) {
	typ, frame, err := c.ws.ReadMessage()
	if err != nil {
		return nil, err
	}
	c.CountRecv(len(frame))
	if typ == websocket.TextMessage {
		return string(frame), nil
	}
	if c.crypt != nil {
		if c.opened, err = c.crypt.open(c.opened[:0], frame); err != nil {
			return nil, err
		}
		frame = c.opened
	}
	if c.inflate != nil {
		if frame, err = c.inflate.decompress(frame); err != nil {
			return nil, err
		}
	}
	return unmarshalMsgpack(frame)
}

// Request sends msg and returns the next message that is not an update push (pushes are
// queued in Pushes).
func (c *Conn) Request(msg []any) ([]any, error) {
	if c.fast != nil {
		c.fast.HoldWrites() // the request frame is written by the read that waits for the reply
	}
	if err := c.Send(msg); err != nil {
		if c.fast != nil {
			_ = c.fast.ReleaseWrites() // nothing was held: Send failed before writing
		}
		return nil, err
	}
	for {
		v, err := c.Receive()
		if err != nil {
			return nil, err
		}
		m, ok := v.([]any)
		if !ok || len(m) == 0 {
			return nil, fmt.Errorf("hetu: unexpected message %T", v)
		}
		if kind, _ := m[0].(string); kind == "updt" {
			c.queuePush(m)
			continue
		}
		return m, nil
	}
}

// queuePush keeps a push, dropping the oldest beyond MaxPushes.
func (c *Conn) queuePush(m []any) {
	limit := c.MaxPushes
	if limit == 0 {
		limit = 1000
	}
	if len(c.Pushes) >= limit {
		c.Pushes = c.Pushes[1:]
		c.DroppedPushes++
	}
	c.Pushes = append(c.Pushes, Push(m))
}

// Call calls a server system or endpoint and returns the payload of its ["rsp", payload]
// reply; ["rej", ...] and ["err", ...] replies are returned as *ServerError.
func (c *Conn) Call(name string, args ...any) (any, error) {
	msg := make([]any, 0, 2+len(args))
	msg = append(msg, "rpc", name)
	msg = append(msg, args...)
	reply, err := c.Request(msg)
	if err != nil {
		return nil, err
	}
	return replyPayload(name, reply)
}

// replyPayload interprets a reply to a call.
func replyPayload(name string, reply []any) (any, error) {
	kind, _ := reply[0].(string)
	switch kind {
	case "rsp":
		if len(reply) < 2 {
			return nil, nil
		}
		return reply[1], nil
	case "rej", "err":
		e := &ServerError{Kind: kind, Name: name}
		if len(reply) > 2 {
			e.Detail = reply[2]
		}
		return nil, e
	}
	return nil, fmt.Errorf("hetu: unexpected reply %q to %s", kind, name)
}

// Subscribe sends ["sub", component, mode, args...] ("get": index, value; "range": index,
// left, right, limit, desc) and returns the subscription id (nil when nothing matched) and
// the initial rows.
func (c *Conn) Subscribe(component, mode string, args ...any) (id any, rows any, err error) {
	msg := append([]any{"sub", component, mode}, args...)
	reply, err := c.Request(msg)
	if err != nil {
		return nil, nil, err
	}
	kind, _ := reply[0].(string)
	if kind != "sub" {
		_, err := replyPayload("sub "+component, reply)
		if err == nil {
			err = fmt.Errorf("hetu: unexpected reply %q to sub", kind)
		}
		return nil, nil, err
	}
	if len(reply) > 1 {
		id = reply[1]
	}
	if len(reply) > 2 {
		rows = reply[2]
	}
	return id, rows, nil
}

// Unsubscribe sends ["unsub", id]; the server does not answer.
func (c *Conn) Unsubscribe(id any) error { return c.Send([]any{"unsub", id}) }
