package gatewayd

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// connPool is the gateway's http.RoundTripper to its endpoints: HTTP/1.1
// over pooled keep-alive connections, each exchange written and read on
// the calling goroutine. net/http's Transport hands every request to a
// writer goroutine and every response from a reader goroutine; on a
// loaded machine those hand-offs, not the bytes, were most of what the
// gateway added to a request (docs/gateway.md#performance). Requests
// through a proxy (HTTP_PROXY and friends) and other schemes go to the
// standard Transport.
type connPool struct {
	dialer   net.Dialer
	tls      *tls.Config
	fallback http.RoundTripper
	// maxIdle is the idle connections kept per endpoint host; idleTime
	// how long one may rest before it is closed rather than reused.
	maxIdle  int
	idleTime time.Duration

	mu   sync.Mutex
	idle map[string][]*pconn
}

type pconn struct {
	c     net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	key   string
	since time.Time
	// raw is c's descriptor when c is a plain TCP connection: the lean
	// path then sends a request as it waits for the answer, and reads
	// through it (sendThenRead).
	raw syscall.RawConn
	// pending is what is still to be written of the request the lean
	// path sends on raw (in bw's free buffer).
	pending []byte
	send    sendState
	// deadlined: the lean path left a deadline on c, which get clears
	// before net/http's exchange, which sets none.
	deadlined bool
	// watch, when not nil, is begun by a read that reaches c's deadline
	// before until, the exchange's own deadline (leanExchange).
	watch *watcher
	until time.Time
}

func newConnPool(fallback http.RoundTripper) *connPool {
	return &connPool{
		dialer:   net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		tls:      &tls.Config{NextProtos: []string{"http/1.1"}},
		fallback: fallback,
		maxIdle:  256,
		idleTime: 60 * time.Second,
		idle:     map[string][]*pconn{},
	}
}

// RoundTrip sends req on an idle connection to its host, or a new one. A
// reused connection the endpoint had closed meanwhile is retried once on
// a new one when the body can be sent again.
func (p *connPool) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		return p.fallback.RoundTrip(req)
	}
	if proxy, err := http.ProxyFromEnvironment(req); err != nil || proxy != nil {
		return p.fallback.RoundTrip(req)
	}
	key := u.Scheme + "://" + hostPort(u)
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		pc, reused, err := p.get(ctx, key, u.Scheme, u.Hostname())
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { pc.c.Close() })
		resp, err := pc.exchange(req)
		if err == nil {
			resp.Body = &pooledBody{rc: resp.Body, pc: pc, pool: p, stop: stop, keep: !resp.Close && !req.Close}
			return resp, nil
		}
		stop()
		pc.c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !reused || attempt > 0 || req.GetBody == nil {
			return nil, err
		}
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		r2 := *req
		r2.Body = body
		req = &r2
	}
}

// exchange writes req and reads the response head.
func (pc *pconn) exchange(req *http.Request) (*http.Response, error) {
	if err := writeRequest(pc.bw, req); err != nil {
		return nil, err
	}
	if err := pc.bw.Flush(); err != nil {
		return nil, err
	}
	return http.ReadResponse(pc.br, req)
}

// get takes an idle connection to key or dials one.
func (p *connPool) get(ctx context.Context, key, scheme, host string) (*pconn, bool, error) {
	if pc := p.takeIdle(key, time.Now()); pc != nil {
		if pc.deadlined {
			pc.c.SetDeadline(time.Time{})
			pc.deadlined = false
		}
		return pc, true, nil
	}
	pc, err := p.dial(ctx, key, scheme, host)
	return pc, false, err
}

// takeIdle takes the most recently rested idle connection to key, closing
// those that rested too long by now; nil when there is none.
func (p *connPool) takeIdle(key string, now time.Time) *pconn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for q := p.idle[key]; len(q) > 0; q = p.idle[key] {
		pc := q[len(q)-1]
		q[len(q)-1] = nil
		p.idle[key] = q[:len(q)-1]
		if now.Sub(pc.since) < p.idleTime {
			return pc
		}
		pc.c.Close()
	}
	return nil
}

// dial opens a new connection to key.
func (p *connPool) dial(ctx context.Context, key, scheme, host string) (*pconn, error) {
	addr := key[len(scheme)+3:]
	c, err := p.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if scheme == "https" {
		cfg := p.tls.Clone()
		cfg.ServerName = host
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	pc := &pconn{c: c, bw: bufio.NewWriterSize(c, 16<<10), key: key}
	var r io.Reader = c
	if tc, ok := c.(*net.TCPConn); ok && rawSend {
		if raw, err := tc.SyscallConn(); err == nil {
			pc.raw = raw
			r = (*sendThenRead)(pc)
		}
	}
	pc.br = bufio.NewReaderSize(r, 16<<10)
	return pc, nil
}

// getUntil is get for the lean path at now: an idle connection to key,
// or (always when fresh) a new one dialled before deadline.
func (p *connPool) getUntil(key, scheme, host string, now, deadline time.Time, fresh bool) (*pconn, bool, error) {
	if !fresh {
		if pc := p.takeIdle(key, now); pc != nil {
			return pc, true, nil
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	pc, err := p.dial(ctx, key, scheme, host)
	return pc, false, err
}

// put keeps a connection whose exchange ended cleanly for the next
// request, or closes it when enough are idle.
func (p *connPool) put(pc *pconn) {
	pc.since = time.Now()
	p.mu.Lock()
	if q := p.idle[pc.key]; len(q) < p.maxIdle {
		p.idle[pc.key] = append(q, pc)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	pc.c.Close()
}

// CloseIdleConnections closes every idle connection.
func (p *connPool) CloseIdleConnections() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[string][]*pconn{}
	p.mu.Unlock()
	for _, q := range idle {
		for _, pc := range q {
			pc.c.Close()
		}
	}
	if f, ok := p.fallback.(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// pooledBody is a response body that gives its connection back to the
// pool when it was read to the end, and closes it otherwise.
type pooledBody struct {
	rc   io.ReadCloser
	pc   *pconn
	pool *connPool
	stop func() bool
	keep bool
	eof  bool
	done bool
	mu   sync.Mutex
}

func (b *pooledBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *pooledBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	b.rc.Close()
	// stop reports false when the request's context already closed the
	// connection.
	if b.stop() && b.eof && b.keep && b.pc.br.Buffered() == 0 {
		b.pool.put(b.pc)
		return nil
	}
	b.pc.c.Close()
	return nil
}

// hostPort is the URL's host and port, the scheme's default port when
// it has none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// writeRequest writes req's head and body into bw. A body of known
// length goes into the same buffer as the head, so a small request is
// one write to the socket (Request.Write flushes the head first for any
// body type it does not know). Other requests use Request.Write.
func writeRequest(bw *bufio.Writer, req *http.Request) error {
	if req.ContentLength < 0 || (req.ContentLength > 0 && req.Body == nil) || len(req.TransferEncoding) > 0 || req.Close {
		return req.Write(bw)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	bw.WriteString(req.Method)
	bw.WriteByte(' ')
	bw.WriteString(req.URL.RequestURI())
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\nUser-Agent: forge-lsp-gateway\r\nContent-Length: ")
	bw.WriteString(strconv.FormatInt(req.ContentLength, 10))
	bw.WriteString("\r\n")
	for k, vs := range req.Header {
		if !validHeaderName(k) || k == "Host" || k == "Content-Length" || k == "User-Agent" {
			continue
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return errors.New("invalid header value for " + k)
			}
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("\r\n")
	if req.Body == nil {
		return nil
	}
	n, err := io.Copy(bw, req.Body)
	req.Body.Close()
	if err == nil && n != req.ContentLength {
		err = errors.New("request body length differs from its Content-Length")
	}
	return err
}

// validHeaderName is a header name of token characters (RFC 9110).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue is a header value without line breaks or NUL.
func validHeaderValue(v string) bool {
	return strings.IndexAny(v, "\r\n\x00") < 0
}
