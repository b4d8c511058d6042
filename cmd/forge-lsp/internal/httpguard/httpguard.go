// Package httpguard hardens the HTTP servers forge-lsp opens (`mcp --http`,
// `gateway serve`) against clients that hold connections without
// authenticating: a deadline on reading the request body, an error answer
// that closes the connection instead of draining an unread body, and a
// cap on open connections (docs/security.md#network-servers).
package httpguard

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The defaults of Limits.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxConns      = 1024
)

// Limits are a server's bounds; a zero field takes its default.
type Limits struct {
	// HeaderTimeout bounds reading a request's headers.
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from the end of its
	// headers. A response may take as long as it needs.
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout time.Duration
	// MaxConns is how many connections may be open at once; one more is
	// answered 503 and closed.
	MaxConns int
}

func (l Limits) withDefaults() Limits {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l
}

// Server is an http.Server for h with l's bounds, and the listener to
// serve it on: ln with the connection cap.
func Server(h http.Handler, ln net.Listener, l Limits) (*http.Server, net.Listener) {
	l = l.withDefaults()
	hs := &http.Server{
		Handler:           Handler(h, l.BodyTimeout),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
	}
	return hs, Listener(ln, l.MaxConns)
}

// Handler bounds the reading of each request's body to bodyTimeout and
// closes the connection after an error answer sent while body bytes are
// still unread: Go would otherwise read up to 256 KiB of a body nobody
// wants before it answers, at the pace the client chooses.
func Handler(h http.Handler, bodyTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		b := &body{rc: rc, r: r.Body}
		r.Body = b
		gw := &guardWriter{ResponseWriter: w, rc: rc, body: b}
		h.ServeHTTP(gw, r)
		if !b.done.Load() && !gw.begun {
			// Whatever is left is not read: fail any read now, so that
			// closing the body does not wait for the client.
			_ = rc.SetReadDeadline(time.Now())
		}
	})
}

// body clears the read deadline once the body has been read to its end:
// the connection's background read that notices a client going away must
// not time out while a long response is written.
type body struct {
	rc   *http.ResponseController
	r    io.ReadCloser
	done atomic.Bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) && b.done.CompareAndSwap(false, true) {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *body) Close() error { return b.r.Close() }

// guardWriter marks an error answer sent before the body was read as the
// connection's last, and lifts the body deadline once a successful answer
// has begun (by then Go has read or discarded what was left of the body,
// and the answer may stream for as long as it needs).
type guardWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	body   *body
	status int
	begun  bool
}

func (g *guardWriter) WriteHeader(status int) {
	if g.status == 0 {
		g.status = status
		if status >= 400 && !g.body.done.Load() {
			g.Header().Set("Connection", "close")
		}
	}
	g.ResponseWriter.WriteHeader(status)
}

func (g *guardWriter) Write(p []byte) (int, error) {
	if g.status == 0 {
		g.status = http.StatusOK
	}
	n, err := g.ResponseWriter.Write(p)
	g.begin()
	return n, err
}

// Flush keeps streamed answers (server-sent events) working.
func (g *guardWriter) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	g.begin()
}

func (g *guardWriter) begin() {
	if !g.begun && g.status != 0 && g.status < 400 {
		g.begun = true
		_ = g.rc.SetReadDeadline(time.Time{})
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (g *guardWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// Listener caps ln at max open connections; a connection over the cap is
// answered 503 and closed at once, so it never waits unbounded in the
// backlog.
func Listener(ln net.Listener, max int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max)}
}

type limitListener struct {
	net.Listener
	slots chan struct{}
}

// busy is the whole answer to a connection over the cap.
const busy = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 54\r\nRetry-After: 1\r\n\r\nthe server is at its connection limit; retry shortly\r\n"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go func() {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = io.WriteString(c, busy)
				_ = c.Close()
			}()
		}
	}
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
