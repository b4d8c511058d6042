package gatewayd

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// inProcess serves each request with the gateway's handler, without a
// socket. A plain answer is handed back whole when the handler returns; a
// streamed one (the handler flushes: Server-Sent Events) is handed back at
// its first flush, its body a pipe the handler keeps writing into, so the
// engine's client reads each event as the endpoint sends it. Closing that
// body early ends the handler's writes, and the request's context (the
// client's) cancels the endpoint's request.
type inProcess struct{ g *Gateway }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &memWriter{header: http.Header{}, head: make(chan struct{})}
	if !strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
		t.g.ServeHTTP(w, req)
		if req.Body != nil {
			req.Body.Close()
		}
		w.sendHead()
		return w.response(req), nil
	}
	pr, pw := io.Pipe()
	w.pw = pw
	go func() {
		t.g.ServeHTTP(w, req)
		if req.Body != nil {
			req.Body.Close()
		}
		w.sendHead()
		pw.Close()
	}()
	<-w.head
	resp := w.response(req)
	if w.streaming {
		resp.Body, resp.ContentLength = pr, -1
	} else {
		pr.Close()
	}
	return resp, nil
}

// memWriter is the ResponseWriter of an in-process exchange.
type memWriter struct {
	header http.Header
	status int
	body   bytes.Buffer

	// pw, for a request that accepts a stream, receives what is written
	// after the first flush; head is closed once status and header are
	// final (at the first flush, or when the handler returns).
	pw        *io.PipeWriter
	head      chan struct{}
	once      sync.Once
	streaming bool
	sent      http.Header
}

func (w *memWriter) Header() http.Header { return w.header }
func (w *memWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *memWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.streaming {
		return w.pw.Write(b)
	}
	return w.body.Write(b)
}

// FlushError starts streaming (http.ResponseController's Flush): the
// response is handed to the caller and later writes go down the pipe.
func (w *memWriter) FlushError() error {
	if w.pw == nil || w.streaming {
		return nil
	}
	w.WriteHeader(http.StatusOK)
	w.sent = w.header.Clone() // the caller's; the handler keeps its own
	w.streaming = true
	pending := bytes.Clone(w.body.Bytes())
	w.body.Reset()
	w.sendHead()
	if len(pending) > 0 {
		_, err := w.pw.Write(pending)
		return err
	}
	return nil
}

func (w *memWriter) sendHead() { w.once.Do(func() { close(w.head) }) }

// response is the answer's head, with the buffered body.
func (w *memWriter) response(req *http.Request) *http.Response {
	status, header := w.status, w.header
	if w.sent != nil {
		header = w.sent
	}
	if status == 0 {
		status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()), Request: req,
	}
}
