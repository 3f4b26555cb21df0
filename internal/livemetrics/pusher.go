package livemetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Stats counts what a Pusher did.
type Stats struct {
	// Sent pushes were accepted (2xx).
	Sent int64
	// Failed pushes got an error or a non-2xx answer (dropped, not retried: the counters
	// are cumulative, so the next push carries the totals).
	Failed int64
	// Dropped pushes were discarded unsent because the queue was full or time ran out.
	Dropped int64
	// LastError is the last failure, one line of at most MaxErrorBytes, the endpoint's
	// credentials removed ("" when none failed).
	LastError string
}

// MaxErrorBytes bounds Stats.LastError.
const MaxErrorBytes = 256

// ErrorLine is err as Stats.LastError: the URL's user information (user name and password)
// and any bearer token replaced by "***", one line, at most MaxErrorBytes (cut on a rune).
func ErrorLine(err error, cfg Config) string {
	msg := err.Error()
	for _, secret := range []string{cfg.Password, cfg.BearerToken, urlUserinfo(cfg.URL)} {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "***")
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > MaxErrorBytes {
		cut := MaxErrorBytes - len("…")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// urlUserinfo is the "user:password" part of a URL ("" without one or when it does not parse).
func urlUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	return u.User.String()
}

// Stats returns the counts so far (safe while pushing).
func (p *Pusher) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Pusher sends encoded pushes in order from a bounded queue on its own goroutine. Push never
// blocks: on backpressure the oldest waiting push is dropped. The first failure is logged
// once; Close reports the counts.
type Pusher struct {
	cfg    Config
	client *http.Client
	logf   func(format string, args ...any)

	mu        sync.Mutex
	queue     [][]byte
	stats     Stats
	closed    bool
	logged    bool
	wake      chan struct{}
	done      chan struct{}
	ctx       context.Context
	cancel    context.CancelFunc
	userAgent string
}

// NewPusher starts a pusher; logf (may be nil) receives the once-only failure message.
func NewPusher(cfg Config, logf func(format string, args ...any)) *Pusher {
	if cfg.QueueLen < 1 {
		cfg.QueueLen = 12
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	tr.MaxIdleConnsPerHost = 1
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pusher{cfg: cfg, client: &http.Client{Transport: tr, Timeout: cfg.Timeout}, logf: logf,
		wake: make(chan struct{}, 1), done: make(chan struct{}), ctx: ctx, cancel: cancel,
		userAgent: "benchrun-k6/remote-write"}
	go p.loop()
	return p
}

// Push queues one encoded WriteRequest, dropping the oldest waiting one when the queue is full.
func (p *Pusher) Push(body []byte) {
	p.mu.Lock()
	if p.closed {
		p.stats.Dropped++
		p.mu.Unlock()
		return
	}
	if len(p.queue) >= p.cfg.QueueLen {
		p.queue = p.queue[1:]
		p.stats.Dropped++
	}
	p.queue = append(p.queue, body)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Close sends what is queued within timeout, then stops; it returns the counts.
func (p *Pusher) Close(timeout time.Duration) Stats {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cancel()
		<-p.done
	}
	p.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Dropped += int64(len(p.queue))
	p.queue = nil
	return p.stats
}

// loop sends queued pushes one at a time until closed and drained (or cancelled).
func (p *Pusher) loop() {
	defer close(p.done)
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-p.wake:
			case <-p.ctx.Done():
				return
			}
			continue
		}
		body := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		if p.ctx.Err() != nil {
			return
		}
		err := p.send(body)
		p.mu.Lock()
		if err == nil {
			p.stats.Sent++
		} else {
			p.stats.Failed++
			p.stats.LastError = ErrorLine(err, p.cfg)
			if !p.logged && p.logf != nil {
				p.logged = true
				p.logf("remote write to %s failed (further failures are only counted; the load goes on): %s", redactedURL(p.cfg.URL), p.stats.LastError)
			}
		}
		p.mu.Unlock()
	}
}

// redactedURL is raw without its user information.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}

// send posts one WriteRequest.
func (p *Pusher) send(body []byte) error {
	req, err := http.NewRequestWithContext(p.ctx, http.MethodPost, p.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", p.userAgent)
	switch {
	case p.cfg.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+p.cfg.BearerToken)
	case p.cfg.Username != "" || p.cfg.Password != "":
		req.SetBasicAuth(p.cfg.Username, p.cfg.Password)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			return ue.Unwrap() // without the url.Error's "Post <url>:" prefix
		}
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return nil
}
