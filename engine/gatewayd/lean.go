package gatewayd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves a Gateway on a listener with a lean path for the common
// request: a chat request over HTTP/1.1 with a Content-Length body, not
// streamed, to an endpoint with a free slot, is read, routed, sent and
// answered on its connection's goroutine by hand-written HTTP/1.1 code,
// with pooled buffers and pooled endpoint connections. Every other
// request (other routes and methods, chunked or malformed requests,
// Expect, upgrades, streams, a request that must wait in the queue, a
// gateway with tracing) hands its connection to the fallback
// http.Server, which serves it from then on exactly as without the lean
// path (docs/gateway.md#performance).
type Server struct {
	g        *Gateway
	fallback *http.Server
	lim      ServerLimits
	hand     *handoff
	active   atomic.Int64
	closing  atomic.Bool
	// served counts the requests the lean path answered (tests check
	// which path a request took).
	served atomic.Int64

	mu    sync.Mutex
	ln    net.Listener
	conns map[*leanConn]struct{}
}

// ServerLimits bound the lean path's clients as the fallback's bound
// theirs; a zero field takes the default.
type ServerLimits struct {
	// HeaderTimeout bounds reading a request's head (default 10 s).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body (default 30 s).
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request
	// (default 2 min).
	IdleTimeout time.Duration
}

// watchAfter is how long an endpoint exchange runs before the caller's
// connection is watched for the caller going away; a fast answer never
// pays for the watch.
const watchAfter = 50 * time.Millisecond

// NewServer serves g: the lean path itself, everything else through
// fallback, whose Handler (g when nil) is wrapped to count requests in
// flight.
func NewServer(g *Gateway, fallback *http.Server, lim ServerLimits) *Server {
	if lim.HeaderTimeout <= 0 {
		lim.HeaderTimeout = 10 * time.Second
	}
	if lim.BodyTimeout <= 0 {
		lim.BodyTimeout = 30 * time.Second
	}
	if lim.IdleTimeout <= 0 {
		lim.IdleTimeout = 2 * time.Minute
	}
	s := &Server{g: g, fallback: fallback, lim: lim, conns: map[*leanConn]struct{}{},
		hand: &handoff{ch: make(chan net.Conn), done: make(chan struct{})}}
	h := fallback.Handler
	if h == nil {
		h = g
	}
	fallback.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Add(-1)
		h.ServeHTTP(w, r)
	})
	return s
}

// Active is how many requests are being served.
func (s *Server) Active() int64 { return s.active.Load() }

// Serve accepts connections on ln until Shutdown or Close (then it
// returns http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	go s.fallback.Serve(s.hand)
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				return http.ErrServerClosed
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		go s.serveConn(c)
	}
}

// Shutdown stops accepting, closes idle connections and lets requests in
// flight finish; connections close after their request. It returns when
// the fallback's connections are done or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.mu.Lock()
	ln := s.ln
	for lc := range s.conns {
		if lc.idle.Load() {
			lc.c.SetReadDeadline(aLongTimeAgo)
		}
	}
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	return s.fallback.Shutdown(ctx)
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.closing.Store(true)
	s.mu.Lock()
	ln := s.ln
	for lc := range s.conns {
		lc.c.Close()
	}
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	s.hand.Close()
	return s.fallback.Close()
}

var aLongTimeAgo = time.Unix(1, 0)

// leanConn is a client connection on the lean path, with its buffers and
// the watch on its caller; pooled between connections.
type leanConn struct {
	c net.Conn
	// io is what br and bw read and write: c, through its descriptor
	// when it is a plain TCP connection.
	io    rawIO
	br    *bufio.Reader
	bw    *bufio.Writer
	idle  atomic.Bool
	watch watcher
}

var leanConns = sync.Pool{New: func() any {
	lc := &leanConn{br: bufio.NewReaderSize(nil, 8<<10), bw: bufio.NewWriterSize(nil, 8<<10)}
	lc.io.bind()
	lc.watch.done = make(chan struct{}, 1)
	lc.watch.lc = lc
	lc.watch.t = time.AfterFunc(time.Hour, lc.watch.fire)
	lc.watch.t.Stop()
	return lc
}}

func (s *Server) serveConn(c net.Conn) {
	lc := leanConns.Get().(*leanConn)
	lc.c = c
	lc.io.reset(c)
	lc.br.Reset(&lc.io)
	lc.bw.Reset(&lc.io)
	s.mu.Lock()
	s.conns[lc] = struct{}{}
	s.mu.Unlock()
	handed := s.loop(lc)
	s.mu.Lock()
	delete(s.conns, lc)
	s.mu.Unlock()
	if !handed {
		c.Close()
	}
	lc.c = nil
	lc.io.reset(nil)
	lc.br.Reset(nil)
	lc.bw.Reset(nil)
	leanConns.Put(lc)
}

// loop serves requests on lc until it closes (handed false) or is handed
// to the fallback (handed true).
func (s *Server) loop(lc *leanConn) (handed bool) {
	c, br := lc.c, lc.br
	for {
		lc.idle.Store(true)
		if s.closing.Load() {
			return false
		}
		c.SetReadDeadline(time.Now().Add(s.lim.IdleTimeout))
		if _, err := br.Peek(1); err != nil {
			return false
		}
		lc.idle.Store(false)
		start := time.Now()
		head, err := peekHead(br, func() { c.SetReadDeadline(start.Add(s.lim.HeaderTimeout)) })
		if err != nil && err != errOddHead {
			return false
		}
		req, ok := leanHead(head)
		if err == errOddHead || !ok || s.g.tracer != nil {
			return s.handoff(lc, nil)
		}
		s.active.Add(1)
		keep, handed := s.chat(lc, req, start)
		s.active.Add(-1)
		if handed || !keep {
			return handed
		}
	}
}

// chat serves one chat request whose head is buffered, as Gateway.chat
// does. keep is whether the connection serves another request.
func (s *Server) chat(lc *leanConn, req leanRequest, start time.Time) (keep, handed bool) {
	g := s.g
	st := g.state.Load()
	if !st.authorizedBytes(req.auth) {
		// As the fallback does: answered, and the connection closed
		// without reading the body (docs/security.md#network-servers).
		s.answerError(lc, errUnauthorized(), true, start)
		lingerClose(lc.c)
		return false, false
	}
	need := req.n + int(req.contentLength)
	if lc.br.Buffered() < need {
		lc.c.SetReadDeadline(time.Now().Add(s.lim.BodyTimeout))
	}
	in := getBuffer()
	defer putBuffer(in)
	in.Grow(need)
	raw := in.AvailableBuffer()[:need]
	if _, err := io.ReadFull(lc.br, raw); err != nil {
		return false, false
	}
	body := raw[req.n:]
	close := req.close || s.closing.Load()
	creq, e := parseChat(body)
	var m *model
	if e == nil {
		if m = st.byName[creq.name]; m == nil {
			e = errUnknownModel(creq.name)
		}
	}
	if e != nil {
		s.answerError(lc, e, close, start)
		return !close, false
	}
	if creq.stream || m.ep.up == nil || g.pool == nil || !m.ep.lane.tryAdmit() {
		return false, s.handoff(lc, raw)
	}
	out := getBuffer()
	defer putBuffer(out)
	parts := [3][]byte{body[:creq.model.start], m.upstreamJSON, body[creq.model.end:]}
	answer, gone, e := g.leanExchange(m, parts, out, &lc.watch, start)
	if m.ep.lane != nil {
		m.ep.lane.release()
	}
	if gone {
		s.served.Add(1)
		s.log(502, start)
		return false, false
	}
	close = req.close || s.closing.Load()
	var model span
	if e == nil {
		answer = redactSpellings(answer, m.ep.spellings)
		model, e = checkCompletion(answer, m.what)
	}
	if e != nil {
		s.answerError(lc, e, close, start)
		return !close, false
	}
	bw := lc.bw
	if model.ok() {
		writeHead(bw, 200, len(answer)-(model.end-model.start)+len(m.nameJSON), close, "")
		bw.Write(answer[:model.start])
		bw.Write(m.nameJSON)
		bw.Write(answer[model.end:])
	} else {
		i := skipSpace(answer, 0) + 1 // after '{'
		sep := ","
		if j := skipSpace(answer, i); j < len(answer) && answer[j] == '}' {
			sep = ""
		}
		writeHead(bw, 200, len(answer)+len(`"model":`)+len(m.nameJSON)+len(sep), close, "")
		bw.Write(answer[:i])
		bw.WriteString(`"model":`)
		bw.Write(m.nameJSON)
		bw.WriteString(sep)
		bw.Write(answer[i:])
	}
	s.served.Add(1)
	err := bw.Flush()
	s.log(200, start)
	return err == nil && !close, false
}

// rstAvoidance is how long a connection closed with its request body
// unread stays open after the answer, as net/http's does: closing it at
// once would reset it, and the caller could lose the answer.
const rstAvoidance = 500 * time.Millisecond

// lingerClose ends a connection whose request body was not read: the
// write side first, the whole after rstAvoidance (serveConn closes it
// then).
func lingerClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	time.Sleep(rstAvoidance)
}

// answerError writes an error answer, as writeError does.
func (s *Server) answerError(lc *leanConn, e *apiError, close bool, start time.Time) {
	b := errorBody(e)
	writeHead(lc.bw, e.status, len(b), close, e.retryAfter)
	lc.bw.Write(b)
	s.served.Add(1)
	lc.bw.Flush()
	s.log(e.status, start)
}

func (s *Server) log(status int, start time.Time) {
	if l := s.g.Log; l != nil {
		l(logLine(http.MethodPost, "/v1/chat/completions", status, time.Since(start)))
	}
}

// logLine is the log line of one request: "POST /v1/models -> 200 (1.2ms)".
func logLine(method, path string, status int, d time.Duration) string {
	b := make([]byte, 0, 64)
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " -> "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, " ("...)
	b = append(b, d.Round(time.Microsecond).String()...)
	b = append(b, ')')
	return string(b)
}

// authorizedBytes is authorized for a header value read by the lean path.
func (s *state) authorizedBytes(header []byte) bool {
	got, ok := bytes.CutPrefix(header, []byte("Bearer "))
	if !ok {
		got = nil
	}
	a := sha256.Sum256(got)
	return subtle.ConstantTimeCompare(a[:], s.keyHash[:]) == 1 && ok && !s.key.Empty()
}

// handoff gives lc's connection to the fallback server: it reads consumed
// (the bytes of a request the lean path read but does not serve) and
// whatever is buffered before the connection's own bytes. It reports
// true: the connection is the fallback's (or closed) from now on.
func (s *Server) handoff(lc *leanConn, consumed []byte) bool {
	buffered, _ := lc.br.Peek(lc.br.Buffered())
	pre := make([]byte, 0, len(consumed)+len(buffered))
	pre = append(append(pre, consumed...), buffered...)
	lc.c.SetReadDeadline(time.Time{})
	s.hand.give(&prefixConn{Conn: lc.c, pre: pre})
	return true
}

// handoff is the listener the fallback server accepts handed-off
// connections from.
type handoff struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (h *handoff) give(c net.Conn) {
	select {
	case h.ch <- c:
	case <-h.done:
		c.Close()
	}
}

func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.ch:
		return c, nil
	case <-h.done:
		return nil, net.ErrClosed
	}
}

func (h *handoff) Close() error {
	h.once.Do(func() { close(h.done) })
	return nil
}

// Addr is no address: each connection has its own.
func (h *handoff) Addr() net.Addr { return &net.TCPAddr{} }

// prefixConn is a connection whose first bytes were already read.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// watcher notices a caller going away while its request's endpoint
// exchange runs longer than watchAfter, and then closes the endpoint's
// connection, as net/http's background read cancels a request.
type watcher struct {
	lc   *leanConn
	t    *time.Timer
	done chan struct{}

	mu      sync.Mutex
	up      *pconn
	stopped bool
	running bool
	gone    bool

	// later: the watch is begun by the exchange's own read, when it
	// reaches the endpoint connection's deadline (armLater); begun:
	// it was. Both are the exchange goroutine's alone.
	later, begun bool
}

// arm starts the watch for an exchange on up.
func (w *watcher) arm(up *pconn) {
	w.mu.Lock()
	w.up, w.stopped, w.gone = up, false, false
	w.mu.Unlock()
	w.t.Reset(watchAfter)
}

// armLater prepares the watch for an exchange on up without a timer: the
// exchange's read begins it (begin) when it reaches the deadline its
// connection has for the watch, watchAfter from the start.
func (w *watcher) armLater(up *pconn) {
	w.mu.Lock()
	w.up, w.stopped, w.gone = up, false, false
	w.mu.Unlock()
	w.later, w.begun = true, false
}

// begin starts a watch prepared by armLater.
func (w *watcher) begin() {
	w.begun = true
	go w.fire()
}

// disarm ends the watch and reports whether the caller went away.
func (w *watcher) disarm() bool {
	if w.later {
		w.later = false
		if !w.begun {
			return false
		}
	} else if w.t.Stop() {
		return false
	}
	// The watch began (or is about to): stop its read and wait for it.
	w.mu.Lock()
	w.stopped = true
	if w.running {
		w.lc.c.SetReadDeadline(aLongTimeAgo)
	}
	w.mu.Unlock()
	<-w.done
	return w.gone
}

// fire runs on the timer's goroutine: it reads the caller's connection
// until the caller sends more (a pipelined request, kept buffered), goes
// away, or the watch is disarmed.
func (w *watcher) fire() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		w.done <- struct{}{}
		return
	}
	w.running = true
	w.lc.c.SetReadDeadline(time.Time{})
	w.mu.Unlock()
	_, err := w.lc.br.Peek(1)
	w.mu.Lock()
	if err != nil && !w.stopped {
		w.gone = true
		w.up.c.Close()
	}
	w.running = false
	w.mu.Unlock()
	w.done <- struct{}{}
}
