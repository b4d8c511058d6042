package gatewayd

// The lean path's side towards the endpoints: a chat request written
// straight into a pooled connection's buffer and the common answer (200
// with a Content-Length) read by hand; anything else is read by net/http
// (docs/gateway.md#performance).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"
)

// leanUpstream is what the lean path needs to send an endpoint chat
// requests itself, built once per load.
type leanUpstream struct {
	key, scheme, host string
	// head is the request head up to the value of Content-Length.
	head []byte
	// probe is the request http.ReadResponse reads an unusual answer for.
	probe *http.Request
}

// newLeanUpstream is nil for an endpoint the lean path cannot reach
// itself: another scheme, or one reached through a proxy.
func newLeanUpstream(ep *endpoint) *leanUpstream {
	u, err := url.Parse(ep.chatURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil
	}
	probe, err := http.NewRequest(http.MethodPost, ep.chatURL, nil)
	if err != nil {
		return nil
	}
	if proxy, err := http.ProxyFromEnvironment(probe); err != nil || proxy != nil {
		return nil
	}
	var h bytes.Buffer
	h.WriteString("POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: forge-lsp-gateway\r\nContent-Type: application/json\r\nAccept: application/json\r\n")
	if ep.auth != nil {
		if !validHeaderValue(ep.auth[0]) {
			return nil
		}
		h.WriteString("Authorization: " + ep.auth[0] + "\r\n")
	}
	h.WriteString("Content-Length: ")
	return &leanUpstream{key: u.Scheme + "://" + hostPort(u), scheme: u.Scheme, host: u.Hostname(), head: h.Bytes(), probe: probe}
}

// errStaleConn is a reused connection the endpoint closed before it
// answered; the request goes out again on a new one.
var errStaleConn = errors.New("stale connection")

// exchange sends a chat body (three parts) to the endpoint and reads a 2xx
// answer's body into buf; the endpoint's time runs from start (when the
// request was read). w watches the caller meanwhile: when the caller
// goes away it closes the endpoint's connection. gone reports that the
// caller went away (no answer is owed then).
func (g *Gateway) leanExchange(m *model, parts [3][]byte, buf *bytes.Buffer, w *watcher, start time.Time) (raw []byte, gone bool, e *apiError) {
	up := m.ep.up
	deadline := start.Add(g.timeout)
	for attempt := 0; ; attempt++ {
		pc, reused, err := g.pool.getUntil(up.key, up.scheme, up.host, start, deadline, attempt > 0)
		if err != nil {
			return nil, false, g.reachError(m, err, start)
		}
		pc.deadlined = true
		if sendsRaw(pc, up, parts) && deadline.Sub(start) > watchAfter {
			// The deadline first stops the exchange's reads at the
			// watch's start, which they begin (sendThenRead): no timer
			// per request. (A request sent through the writer may take
			// the whole deadline to write: it keeps the timer.)
			pc.c.SetDeadline(start.Add(watchAfter))
			pc.watch, pc.until = w, deadline
			w.armLater(pc)
		} else {
			pc.c.SetDeadline(deadline)
			w.arm(pc)
		}
		raw, keep, e, err := g.leanRoundTrip(m, pc, parts, buf)
		gone = w.disarm()
		pc.watch, pc.pending = nil, nil
		switch {
		case gone:
			pc.c.Close()
			return nil, true, nil
		case err == errStaleConn && reused && attempt == 0:
			pc.c.Close()
			buf.Reset()
			continue
		case err == errStaleConn:
			err = io.ErrUnexpectedEOF
		}
		if keep && err == nil {
			// The deadline stays: the next exchange sets its own (get
			// clears it for net/http's).
			g.pool.put(pc)
		} else {
			pc.c.Close()
		}
		if err != nil {
			return nil, false, g.reachError(m, err, start)
		}
		return raw, false, e
	}
}

// reachError classifies a failed exchange as errReach does for net/http's.
func (g *Gateway) reachError(m *model, err error, start time.Time) *apiError {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return errReach(m.what, m.ep.chatURL, context.DeadlineExceeded, min(g.timeout, time.Since(start).Round(time.Millisecond)))
	}
	return errReach(m.what, m.ep.chatURL, err, g.timeout)
}

// leanRoundTrip writes the request and reads the answer on pc. err is a
// transport failure (errStaleConn when nothing came back on a connection
// that may have been closed while it rested); e an answer that is an
// error; keep whether pc may serve another request.
func (g *Gateway) leanRoundTrip(m *model, pc *pconn, parts [3][]byte, buf *bytes.Buffer) (raw []byte, keep bool, e *apiError, err error) {
	up := m.ep.up
	n := len(parts[0]) + len(parts[1]) + len(parts[2])
	if sendsRaw(pc, up, parts) {
		// Sent by the first read of the answer (sendThenRead), from the
		// writer's free buffer, which nothing else writes meanwhile.
		out := append(pc.bw.AvailableBuffer(), up.head...)
		out = strconv.AppendInt(out, int64(n), 10)
		out = append(out, "\r\n\r\n"...)
		for _, p := range parts {
			out = append(out, p...)
		}
		pc.pending = out
	} else {
		bw := pc.bw
		bw.Write(up.head)
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(n), 10))
		bw.WriteString("\r\n\r\n")
		for _, p := range parts {
			bw.Write(p)
		}
		if err := bw.Flush(); err != nil {
			return nil, false, nil, errStaleConn
		}
	}
	br := pc.br
	head, err := peekHead(br, nil)
	if err != nil && err != errOddHead {
		var se sendError
		if errors.As(err, &se) || br.Buffered() == 0 && (errors.Is(err, io.EOF) || isReset(err)) {
			return nil, false, nil, errStaleConn
		}
		return nil, false, nil, err
	}
	if n, cl, close, ok := simpleAnswer(head); err == nil && ok && cl <= MaxUpstreamBytes {
		br.Discard(n)
		buf.Grow(int(cl))
		b := buf.AvailableBuffer()[:cl]
		if _, err := io.ReadFull(br, b); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, false, nil, err
			}
			// As readUpstream: the head came, the body broke off.
			return nil, false, errTransport(m.what), nil
		}
		buf.Write(b)
		return buf.Bytes(), !close && br.Buffered() == 0, nil, nil
	}
	// Anything else (another status, chunked, no length, a long body) is
	// read by net/http, and the connection is not kept.
	resp, err := http.ReadResponse(br, up.probe)
	if err != nil {
		return nil, false, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, false, statusFailure(resp, m), nil
	}
	raw, e = readUpstream(resp, buf, m.what)
	return raw, false, e, nil
}

// simpleAnswer reads an answer head the lean path reads itself: HTTP/1.1
// 200 with one Content-Length and no Transfer-Encoding. n is the head's
// length, cl the body's, close whether the endpoint closes the connection.
func simpleAnswer(head []byte) (n int, cl int64, close, ok bool) {
	const ok200 = "HTTP/1.1 200 "
	if !bytes.HasPrefix(head, []byte(ok200)) {
		return 0, 0, false, false
	}
	cl = -1
	ok = true
	eachHeader(head, func(name, value []byte) bool {
		switch {
		case asciiEqualFold(name, "content-length"):
			if cl >= 0 {
				ok = false
				return false
			}
			cl, ok = parseLength(value)
		case asciiEqualFold(name, "transfer-encoding"):
			ok = false
		case asciiEqualFold(name, "connection"):
			close = hasToken(value, "close")
		}
		return ok
	})
	return len(head), cl, close, ok && cl >= 0
}

// isReset is a connection the peer reset.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// sendsRaw is whether leanRoundTrip sends the request on pc by
// sendThenRead: a plain TCP connection, and a request that fits in its
// writer's free buffer.
func sendsRaw(pc *pconn, up *leanUpstream, parts [3][]byte) bool {
	n := len(up.head) + 32 + len(parts[0]) + len(parts[1]) + len(parts[2])
	return pc.raw != nil && pc.bw.Buffered() == 0 && n <= pc.bw.Available()
}

// sendThenRead is the reader of a pooled plain TCP connection. When a
// request is pending it writes it and then waits for the answer, in one
// RawConn.Read: an ordinary read right after the write finds nothing yet
// and fails (EAGAIN) before it waits, a system call per request for
// nothing. The write comes after the read's readiness was reset, so the
// answer's arrival is not missed. Without a pending request it reads
// through the descriptor as well (rawRead). Anything unusual (a short
// write, an error, the end of the stream) is done again by the
// connection's own Write and Read, for their errors.
type sendThenRead pconn

// sendError is a request that could not be written: the endpoint closed
// the connection while it rested.
type sendError struct{ error }

func (e sendError) Unwrap() error { return e.error }

func (r *sendThenRead) Read(p []byte) (int, error) {
	for {
		n, err := r.read(p)
		pc := (*pconn)(r)
		if err != nil && pc.watch != nil && errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(pc.until) {
			// The watch's start: begin it, and wait on to the deadline.
			pc.c.SetDeadline(pc.until)
			w := pc.watch
			pc.watch = nil
			w.begin()
			continue
		}
		return n, err
	}
}

func (r *sendThenRead) read(p []byte) (int, error) {
	pc := (*pconn)(r)
	if len(p) == 0 {
		return 0, nil
	}
	st := &pc.send
	if st.fn == nil {
		st.fn = st.step // bound once: RawConn.Read allocates nothing then
	}
	*st = sendState{pc: pc, fn: st.fn, p: p, sent: len(pc.pending) == 0}
	err := pc.raw.Read(st.fn)
	n, again := st.n, st.again
	st.p = nil
	if err != nil {
		// A deadline (perhaps the watch's start, before the request was
		// sent: Read sends it then), or the connection closed by the
		// caller's watch.
		return 0, err
	}
	if again {
		if len(pc.pending) > 0 {
			if pc.watch != nil {
				// The rest of the request may take the whole deadline.
				pc.c.SetWriteDeadline(pc.until)
			}
			_, err := pc.c.Write(pc.pending)
			pc.pending = nil
			if err != nil {
				return 0, sendError{err}
			}
		}
		return pc.c.Read(p)
	}
	return n, nil
}

// sendState is one sendThenRead.Read: the request is written on the
// first call of step, the answer read on the next.
type sendState struct {
	pc          *pconn
	fn          func(fd uintptr) bool
	p           []byte
	n           int
	sent, again bool
}

func (st *sendState) step(fd uintptr) bool {
	pc := st.pc
	if !st.sent {
		st.sent = true
		w, err := rawWrite(fd, pc.pending)
		if w > 0 {
			pc.pending = pc.pending[w:]
		}
		if err != nil || len(pc.pending) > 0 {
			st.again = true
			return true
		}
		return false // wait for the answer
	}
	n, err := rawRead(fd, st.p)
	if err == syscall.EAGAIN {
		return false
	}
	if err != nil || n <= 0 {
		st.again = true
		return true
	}
	st.n = n
	return true
}

// rawIO reads and writes a caller's connection on the lean path. A plain
// TCP connection is read and written through its descriptor (rawRead,
// rawWrite, inside RawConn's Read and Write, which wait for readiness
// and keep the deadlines as the connection's own calls do); any other
// connection by its own Read and Write. Errors are the connection's:
// io.EOF at the end, a *net.OpError otherwise.
type rawIO struct {
	c   net.Conn
	raw syscall.RawConn

	rp, wp          []byte
	rn, wn          int
	rerr, werr      error
	readFn, writeFn func(fd uintptr) bool
}

// bind binds the callbacks once, so that a call allocates nothing.
func (r *rawIO) bind() {
	r.readFn, r.writeFn = r.readStep, r.writeStep
}

// reset makes r read and write c (nothing when nil).
func (r *rawIO) reset(c net.Conn) {
	r.c, r.raw = c, nil
	if tc, ok := c.(*net.TCPConn); ok && rawSend {
		if raw, err := tc.SyscallConn(); err == nil {
			r.raw = raw
		}
	}
}

func (r *rawIO) Read(p []byte) (int, error) {
	if r.raw == nil {
		return r.c.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	r.rp, r.rn, r.rerr = p, 0, nil
	err := r.raw.Read(r.readFn)
	r.rp = nil
	if err != nil {
		return 0, err
	}
	return r.rn, r.rerr
}

func (r *rawIO) readStep(fd uintptr) bool {
	n, err := rawRead(fd, r.rp)
	switch {
	case err == syscall.EAGAIN:
		return false
	case err != nil:
		r.rerr = r.opError("read", err)
	case n == 0:
		r.rerr = io.EOF
	}
	r.rn = n
	return true
}

func (r *rawIO) Write(p []byte) (int, error) {
	if r.raw == nil {
		return r.c.Write(p)
	}
	r.wp, r.wn, r.werr = p, 0, nil
	err := r.raw.Write(r.writeFn)
	n, werr := r.wn, r.werr
	r.wp = nil
	if werr == nil {
		werr = err
	}
	return n, werr
}

func (r *rawIO) writeStep(fd uintptr) bool {
	for r.wn < len(r.wp) {
		n, err := rawWrite(fd, r.wp[r.wn:])
		if err == syscall.EAGAIN {
			return false
		}
		if err != nil {
			r.werr = r.opError("write", err)
			return true
		}
		r.wn += n
	}
	return true
}

func (r *rawIO) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: r.c.LocalAddr(), Addr: r.c.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}
