package gatewayd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// leanServe serves g as `gateway serve` does (the lean path, net/http
// behind it) on loopback and returns the address and the server.
func leanServe(t *testing.T, g *Gateway, lim ServerLimits) (string, *Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(g, &http.Server{ReadHeaderTimeout: 10 * time.Second}, lim)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), srv
}

// answer is one HTTP answer read off a raw connection.
type answer struct {
	status int
	header http.Header
	body   string
	close  bool // Connection: close
}

// rawCall writes raw to addr on one connection and reads n answers; the
// connection is returned open.
func rawCall(t *testing.T, addr, raw string, n int) ([]answer, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	var out []answer
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d of %q: %v", len(out)+1, raw, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("answer %d: %v", len(out)+1, err)
		}
		out = append(out, answer{resp.StatusCode, resp.Header, string(b), resp.Close})
	}
	return out, c
}

// chatReq is a chat request's raw bytes with the given head lines.
func chatReq(body string, head ...string) string {
	h := "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n"
	for _, l := range head {
		h += l + "\r\n"
	}
	return h + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
}

func bearer(key string) string { return "Authorization: Bearer " + key }

// scriptedBackend answers by a marker in the request: "say:500" is a
// server error naming the key, "say:429" a rate limit with Retry-After,
// "say:echo" a completion holding the key, "say:chunked" a completion
// sent chunked, "say:nomodel" one without a model, "say:close" one with
// Connection: close, "say:cut" half an answer and a closed connection,
// "say:html" a page that is not JSON; anything else a plain completion
// naming the model it was sent.
func scriptedBackend(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body := string(raw)
		var req struct{ Model string }
		json.Unmarshal(raw, &req)
		completion := `{"id":"c","object":"chat.completion","model":"` + req.Model + `","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`
		switch {
		case strings.Contains(body, "say:500"):
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"backend broke; key was `+backendKey+`"}}`)
		case strings.Contains(body, "say:429"):
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"slow down"}}`)
		case strings.Contains(body, "say:echo"):
			io.WriteString(w, `{"model":"x","echo":"`+backendKey+`","choices":[{"index":0,"message":{"role":"assistant","content":"`+backendKey+`"}}]}`)
		case strings.Contains(body, "say:chunked"):
			io.WriteString(w, completion[:10])
			w.(http.Flusher).Flush()
			io.WriteString(w, completion[10:])
		case strings.Contains(body, "say:nomodel"):
			io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`)
		case strings.Contains(body, "say:close"):
			w.Header().Set("Connection", "close")
			io.WriteString(w, completion)
		case strings.Contains(body, "say:cut"):
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, completion)
			w.(http.Flusher).Flush()
			c, _, _ := http.NewResponseController(w).Hijack()
			c.Close()
		case strings.Contains(body, "say:html"):
			io.WriteString(w, "<html>not an API</html>")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, completion)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func sayBody(model, marker string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"` + marker + `"}]}`
}

// TestLeanAnswersAsNetHTTP: every request the lean path serves is
// answered as the net/http path answers it (status, Content-Type,
// Retry-After, body; keys redacted, error messages naming the model,
// endpoint and URL), and the requests it does not serve reach net/http.
func TestLeanAnswersAsNetHTTP(t *testing.T) {
	backend := scriptedBackend(t)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	plain := httptest.NewServer(g)
	t.Cleanup(plain.Close)
	plainAddr := strings.TrimPrefix(plain.URL, "http://")
	cases := []struct {
		name string
		raw  string
		lean bool // served by the lean path
	}{
		{"ok", chatReq(chatFast, bearer(serverKey)), true},
		{"ok deep", chatReq(sayBody("deep", "x"), bearer(serverKey), "Content-Type: application/json"), true},
		{"unknown model", chatReq(sayBody("nope", "x"), bearer(serverKey)), true},
		{"not JSON", chatReq(`{"model":`, bearer(serverKey)), true},
		{"no messages", chatReq(`{"model":"fast"}`, bearer(serverKey)), true},
		{"empty messages", chatReq(`{"model":"fast","messages":[]}`, bearer(serverKey)), true},
		{"bad role", chatReq(`{"model":"fast","messages":[{"role":"x","content":"y"}]}`, bearer(serverKey)), true},
		{"model twice", chatReq(`{"model":"fast","model":"deep","messages":[{"role":"user","content":"y"}]}`, bearer(serverKey)), true},
		{"empty body", chatReq(``, bearer(serverKey)), true},
		{"backend 500 naming its key", chatReq(sayBody("fast", "say:500"), bearer(serverKey)), true},
		{"backend 429", chatReq(sayBody("fast", "say:429"), bearer(serverKey)), true},
		{"backend echoes its key", chatReq(sayBody("fast", "say:echo"), bearer(serverKey)), true},
		{"backend answers chunked", chatReq(sayBody("fast", "say:chunked"), bearer(serverKey)), true},
		{"backend answer without model", chatReq(sayBody("fast", "say:nomodel"), bearer(serverKey)), true},
		{"backend closes after", chatReq(sayBody("fast", "say:close"), bearer(serverKey)), true},
		{"backend cuts the answer", chatReq(sayBody("fast", "say:cut"), bearer(serverKey)), true},
		{"backend not an API", chatReq(sayBody("fast", "say:html"), bearer(serverKey)), true},
		{"header case and spacing", "POST /v1/chat/completions HTTP/1.1\r\nhost:gw\r\nauthorization:   Bearer " + serverKey + "  \r\ncontent-length:" + fmt.Sprint(len(chatFast)) + "\r\n\r\n" + chatFast, true},
		{"models", "GET /v1/models HTTP/1.1\r\nHost: gw\r\n" + bearer(serverKey) + "\r\n\r\n", false},
		{"health", "GET /health HTTP/1.1\r\nHost: gw\r\n\r\n", false},
		{"no route", "POST /v1/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\n{}", false},
		{"query string", "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: gw\r\n" + bearer(serverKey) + fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", len(chatFast)) + chatFast, false},
		{"HTTP/1.0", strings.Replace(chatReq(chatFast, bearer(serverKey)), "HTTP/1.1", "HTTP/1.0", 1), false},
		{"chunked request", "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n" + bearer(serverKey) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(chatFast), chatFast), false},
		{"expect continue", chatReq(chatFast, bearer(serverKey), "Expect: 100-continue"), false},
		{"stream", chatReq(`{"model":"fast","stream":true,"messages":[{"role":"user","content":"hi"}]}`, bearer(serverKey)), false},
		{"head over 8 KiB", chatReq(chatFast, bearer(serverKey), "X-Padding: "+strings.Repeat("p", 9000)), false},
		{"bare LF", strings.ReplaceAll(strings.TrimSuffix(chatReq(chatFast, bearer(serverKey)), chatFast), "\r\n", "\n") + chatFast, false},
		{"folded header", chatReq(chatFast, bearer(serverKey), "X-A: 1", " folded"), false},
		{"two Content-Lengths", "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n" + bearer(serverKey) + fmt.Sprintf("\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n", len(chatFast), len(chatFast)) + chatFast, false},
		{"bare CR in a header", chatReq(chatFast, bearer(serverKey), "X-A: 1\r2"), false},
		{"no Host", strings.Replace(chatReq(chatFast, bearer(serverKey)), "Host: gw\r\n", "", 1), false},
		{"body over the limit", "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n" + bearer(serverKey) + fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", MaxRequestBytes+1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := srv.served.Load()
			got, _ := rawCall(t, addr, c.raw, 1)
			if lean := srv.served.Load() > before; lean != c.lean {
				t.Errorf("served by the lean path: %v, want %v", lean, c.lean)
			}
			want, _ := rawCall(t, plainAddr, c.raw, 1)
			g, w := got[0], want[0]
			if g.status != w.status || g.body != w.body {
				t.Errorf("lean path answered %d %s\nnet/http answered %d %s", g.status, g.body, w.status, w.body)
			}
			for _, h := range []string{"Content-Type", "Retry-After", "Content-Length"} {
				if g.header.Get(h) != w.header.Get(h) {
					t.Errorf("%s: %q, net/http %q", h, g.header.Get(h), w.header.Get(h))
				}
			}
			if c.lean && g.header.Get("Date") == "" {
				t.Error("no Date header")
			}
			if strings.Contains(g.body, backendKey) {
				t.Errorf("the backend's key reached the caller: %s", g.body)
			}
		})
	}
}

// TestLeanUnauthorized: a request without the bearer is answered 401 and
// its connection closed without its body being read, as httpguard does.
func TestLeanUnauthorized(t *testing.T) {
	backend := scriptedBackend(t)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	for _, auth := range []string{"", "Authorization: Bearer wrong", "Authorization: " + serverKey} {
		head := "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: 100000\r\n"
		if auth != "" {
			head += auth + "\r\n"
		}
		got, c := rawCall(t, addr, head+"\r\n{", 1)
		if got[0].status != 401 || !got[0].close || !strings.Contains(got[0].body, `"unauthorized"`) {
			t.Errorf("%q: %d %v %s", auth, got[0].status, got[0].header, got[0].body)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("%q: the connection stayed open (%d bytes more)", auth, n)
		}
	}
	if srv.served.Load() != 3 {
		t.Errorf("lean path served %d, want 3", srv.served.Load())
	}
}

// TestLeanPipelined: requests sent back to back on one connection are
// answered in order, those the lean path serves and those it hands to
// net/http (which then serves the rest of the connection).
func TestLeanPipelined(t *testing.T) {
	backend := scriptedBackend(t)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	raw := chatReq(sayBody("fast", "1"), bearer(serverKey)) +
		chatReq(sayBody("deep", "2"), bearer(serverKey)) +
		chatReq(sayBody("nope", "3"), bearer(serverKey)) +
		"GET /v1/models HTTP/1.1\r\nHost: gw\r\n" + bearer(serverKey) + "\r\n\r\n" +
		chatReq(sayBody("deep", "5"), bearer(serverKey))
	got, _ := rawCall(t, addr, raw, 5)
	want := []struct {
		status int
		has    string
	}{{200, `"model":"fast"`}, {200, `"model":"deep"`}, {404, "model_not_found"}, {200, `"object":"list"`}, {200, `"model":"deep"`}}
	for i, w := range want {
		if got[i].status != w.status || !strings.Contains(got[i].body, w.has) {
			t.Errorf("answer %d: %d %s, want %d with %s", i+1, got[i].status, got[i].body, w.status, w.has)
		}
	}
	if n := srv.served.Load(); n != 3 {
		t.Errorf("lean path served %d, want 3 (then net/http the rest)", n)
	}
}

// TestLeanLargeBody: a body of several MiB (larger than every buffer)
// reaches the endpoint byte for byte but for the model, both ways.
func TestLeanLargeBody(t *testing.T) {
	var got []byte
	big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"model":"gpt-mini","choices":[{"index":0,"message":{"role":"assistant","content":"`+big+`"}}]}`)
	}))
	t.Cleanup(backend.Close)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	body := `{"model":"fast","messages":[{"role":"user","content":"` + big + `"}],"n":1}`
	for range 2 { // the second on kept connections both ways
		ans, _ := rawCall(t, addr, chatReq(body, bearer(serverKey)), 1)
		if ans[0].status != 200 || !strings.Contains(ans[0].body, big) || !strings.HasPrefix(ans[0].body, `{"model":"fast"`) {
			t.Fatalf("%d %.200s", ans[0].status, ans[0].body)
		}
		if want := strings.Replace(body, `"fast"`, `"gpt-mini"`, 1); string(got) != want {
			t.Fatalf("the endpoint got %d bytes, want %d", len(got), len(want))
		}
	}
	if srv.served.Load() != 2 {
		t.Errorf("lean path served %d, want 2", srv.served.Load())
	}
}

// TestLeanSlowEndpointLargeBody: a body larger than the sockets can hold
// waits for an endpoint that is slow to read it past the start of the
// caller's watch, and is sent whole: only the upstream timeout bounds
// the write.
func TestLeanSlowEndpointLargeBody(t *testing.T) {
	var n int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * watchAfter) // a slow reader: the body's write waits
		n, _ = io.Copy(io.Discard, r.Body)
		io.WriteString(w, okAnswer)
	}))
	t.Cleanup(backend.Close)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	big := strings.Repeat("0123456789abcdef", 12<<16) // 12 MiB
	body := `{"model":"fast","messages":[{"role":"user","content":"` + big + `"}]}`
	ans, _ := rawCall(t, addr, chatReq(body, bearer(serverKey)), 1)
	if ans[0].status != 200 || srv.served.Load() != 1 {
		t.Fatalf("%d %.300s (lean path served %d)", ans[0].status, ans[0].body, srv.served.Load())
	}
	if want := int64(len(body) - len(`"fast"`) + len(`"gpt-mini"`)); n != want {
		t.Fatalf("the endpoint got %d bytes, want %d", n, want)
	}
}

// TestLeanUpstreamConnections: the lean path keeps one endpoint
// connection for sequential requests, and a connection the endpoint
// closed while it rested is replaced without the caller noticing.
func TestLeanUpstreamConnections(t *testing.T) {
	backend, conns := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, okAnswer)
	})
	g := open(t, fileFor(backend.URL, ""))
	addr, _ := leanServe(t, g, ServerLimits{})
	var raw string
	for range 20 {
		raw += chatReq(chatFast, bearer(serverKey))
	}
	for _, a := range must(rawCall(t, addr, raw, 20)) {
		if a.status != 200 {
			t.Fatal(a.status, a.body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("20 requests opened %d endpoint connections, want 1", n)
	}
	for i := range 3 {
		backend.CloseClientConnections()
		if a := must(rawCall(t, addr, chatReq(chatFast, bearer(serverKey)), 1)); a[0].status != 200 {
			t.Fatalf("after the endpoint closed its connections (%d): %d %s", i, a[0].status, a[0].body)
		}
	}
	if n := conns.Load(); n != 4 {
		t.Fatalf("%d endpoint connections, want 4", n)
	}
}

func must(a []answer, _ net.Conn) []answer { return a }

// TestLeanSlowUpload: a body that takes longer than watchAfter to arrive
// is still sent to the endpoint and answered (the exchange's deadline
// for the watch is already past when it starts, and the watch begins at
// once).
func TestLeanSlowUpload(t *testing.T) {
	backend, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, okAnswer)
	})
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	full := chatReq(chatFast, bearer(serverKey))
	io.WriteString(c, full[:len(full)-5])
	time.Sleep(2 * watchAfter) // the caller is slow to send the rest
	io.WriteString(c, full[len(full)-5:])
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || srv.served.Load() != 1 {
		t.Fatalf("%d %s (lean path served %d)", resp.StatusCode, b, srv.served.Load())
	}
}

// TestLeanDeadlineLeftOnPooledConnection: the lean path leaves its
// deadline on the endpoint connection it gives back to the pool; the
// net/http path, which sets none, clears it when it takes the
// connection, so a request after the deadline passed is served on it.
func TestLeanDeadlineLeftOnPooledConnection(t *testing.T) {
	backend, conns := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, okAnswer)
	})
	c, err := Load(write(t, t.TempDir(), "gw.toml", fileFor(backend.URL, "")), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 50 * time.Millisecond
	g, _ := New(c, Options{Timeout: timeout})
	addr, srv := leanServe(t, g, ServerLimits{})
	if a := must(rawCall(t, addr, chatReq(chatFast, bearer(serverKey)), 1)); a[0].status != 200 || srv.served.Load() != 1 {
		t.Fatal(a[0].status, a[0].body)
	}
	time.Sleep(2 * timeout) // the deadline left on the pooled connection passes
	if code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast); code != 200 {
		t.Fatalf("net/http's exchange on the pooled connection: %d %v", code, out)
	}
	if a := must(rawCall(t, addr, chatReq(chatFast, bearer(serverKey)), 1)); a[0].status != 200 {
		t.Fatal(a[0].status, a[0].body)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d endpoint connections, want 1", n)
	}
}

// TestLeanTimeouts: an endpoint slower than the upstream timeout is 502
// naming the wait; a caller that stops sending in the middle of its head
// or body, or sends nothing, is disconnected by its deadline.
func TestLeanTimeouts(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(backend.Close)
	c, err := Load(write(t, t.TempDir(), "gw.toml", fileFor(backend.URL, "")), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := New(c, Options{Timeout: 100 * time.Millisecond})
	addr, _ := leanServe(t, g, ServerLimits{HeaderTimeout: 100 * time.Millisecond, BodyTimeout: 100 * time.Millisecond, IdleTimeout: 100 * time.Millisecond})
	start := time.Now()
	a := must(rawCall(t, addr, chatReq(chatFast, bearer(serverKey)), 1))
	if typ, code, msg := errorOf(decode(t, a[0].body)); a[0].status != 502 || typ != "server_error" || code != "upstream_transport" ||
		!strings.Contains(msg, "no answer within 100ms") || !strings.Contains(msg, backend.URL+"/v1/chat/completions") {
		t.Fatalf("%d %s", a[0].status, a[0].body)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("held %s", d)
	}
	full := chatReq(chatFast, bearer(serverKey))
	for name, part := range map[string]string{
		"idle":         "",
		"partial head": full[:20],
		"partial body": full[:len(full)-5],
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, part)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(make([]byte, 512))
		if err == nil || n > 0 {
			t.Errorf("%s: the connection was answered (%d bytes) or held (%v)", name, n, err)
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the server never closed the connection", name)
		}
		c.Close()
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%q is not JSON", s)
	}
	return m
}

// TestLeanCallerGone: when the caller goes away while the endpoint is
// working, the endpoint's request is cancelled (its connection closed).
func TestLeanCallerGone(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(started)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(30 * time.Second):
		}
	}))
	t.Cleanup(backend.Close)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, chatReq(chatFast, bearer(serverKey)))
	<-started
	c.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint's request was not cancelled")
	}
	for deadline := time.Now().Add(10 * time.Second); srv.served.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lean path served %d, want 1", srv.served.Load())
		}
	}
}

// TestLeanQueued: with the endpoint's slots taken, a request goes to the
// net/http path, which queues it (and serves the fairness rules); with a
// slot free the lean path serves it.
func TestLeanQueued(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{}, 4)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		entered <- struct{}{}
		<-release
		io.WriteString(w, okAnswer)
	}))
	t.Cleanup(backend.Close)
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	g := open(t, strings.Replace(fileFor(backend.URL, ""), `api_key = "`+backendKey+`"`, `api_key = "`+backendKey+`"`+"\nconcurrency = 1", 1))
	addr, srv := leanServe(t, g, ServerLimits{})
	first := make(chan []answer)
	go func() {
		a, _ := rawCall(t, addr, chatReq(chatFast, bearer(serverKey)), 1)
		first <- a
	}()
	<-entered
	second := make(chan []answer)
	go func() {
		a, _ := rawCall(t, addr, chatReq(sayBody("deep", "2"), bearer(serverKey)), 1)
		second <- a
	}()
	// The second waits in the queue (net/http's path) until the first
	// is done.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		g.state.Load().byName["fast"].ep.lane.mu.Lock()
		w := g.state.Load().byName["fast"].ep.lane.waiting
		g.state.Load().byName["fast"].ep.lane.mu.Unlock()
		if w == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued")
		}
	}
	once.Do(func() { close(release) })
	if a := <-first; a[0].status != 200 {
		t.Fatal(a[0].status, a[0].body)
	}
	if a := <-second; a[0].status != 200 {
		t.Fatal(a[0].status, a[0].body)
	}
	if srv.served.Load() != 1 {
		t.Errorf("lean path served %d, want 1 (the queued one net/http)", srv.served.Load())
	}
}

// TestLeanShutdown: a request in flight when Shutdown comes gets its
// answer (with Connection: close), idle connections are closed, and no
// new connection is accepted.
func TestLeanShutdown(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(started) // one request only
		<-release
		io.WriteString(w, okAnswer)
	}))
	t.Cleanup(backend.Close)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{})
	idle, _ := net.Dial("tcp", addr)
	t.Cleanup(func() { idle.Close() })
	got := make(chan []answer)
	go func() {
		a, _ := rawCall(t, addr, chatReq(chatFast, bearer(serverKey)), 1)
		got <- a
	}()
	<-started
	go srv.Shutdown(t.Context())
	for deadline := time.Now().Add(10 * time.Second); !srv.closing.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Shutdown did not begin")
		}
	}
	close(release)
	a := <-got
	if a[0].status != 200 || !a[0].close {
		t.Fatalf("in flight: %d %v %s", a[0].status, a[0].header, a[0].body)
	}
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("an idle connection stayed open")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("an idle connection was not closed")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("still accepting")
	}
}

// FuzzLeanHead: a request head the lean path serves is one net/http
// reads the same way (method, path, length, bearer, Connection: close,
// one valid Host, no transfer coding), so the lean path never serves a
// request net/http would refuse or read differently.
func FuzzLeanHead(f *testing.F) {
	f.Add("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nAuthorization: Bearer k\r\n\r\n")
	f.Add("POST /v1/chat/completions HTTP/1.1\r\nhost:gw:80\r\ncontent-length:0\r\nConnection: close\r\n\r\n")
	f.Add("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n")
	f.Add("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 1\r\nX: \t v \r\n\r\n")
	f.Add("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: 01\r\nAuthorization:Bearer  x\r\n\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		head, err := peekHead(bufio.NewReaderSize(strings.NewReader(text), 8<<10), nil)
		if err != nil {
			return
		}
		r, ok := leanHead(head)
		if !ok {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(string(head))))
		if err != nil {
			t.Fatalf("the lean path serves %q, net/http refuses it: %v", head, err)
		}
		hosts := 0 // net/http moves Host out of the header; an empty one is valid
		for _, line := range strings.Split(string(head), "\r\n") {
			if name, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "host") {
				hosts++
			}
		}
		if hosts != 1 {
			t.Fatalf("%q: the lean path serves a request without exactly one Host", head)
		}
		for k, vs := range req.Header {
			for _, v := range vs {
				if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
					t.Fatalf("%q: header %q: %q is not valid", head, k, v)
				}
			}
		}
		if req.Method != "POST" || req.URL.Path != "/v1/chat/completions" || req.URL.RawQuery != "" || req.ProtoMinor != 1 ||
			req.ContentLength != r.contentLength || len(req.TransferEncoding) > 0 ||
			req.Header.Get("Authorization") != string(r.auth) || req.Close != r.close {
			t.Fatalf("%q: the lean path read length %d, bearer %q, close %v; net/http %s %s length %d, bearer %q, close %v",
				head, r.contentLength, r.auth, r.close, req.Method, req.URL, req.ContentLength, req.Header.Get("Authorization"), req.Close)
		}
	})
}
