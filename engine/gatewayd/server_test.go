package gatewayd

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const chatFast = `{"model":"fast","messages":[{"role":"user","content":"hi"}]}`

// TestRouting: the exact caller name picks the model, the backend gets its
// upstream name and every other field untouched, the caller gets its own
// name back and the endpoint's key is the bearer.
func TestRouting(t *testing.T) {
	b := newBackend(t)
	g := open(t, fileFor(b.URL, ""))
	body := `{"model":"deep","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi","name":"u1"}],` +
		`"temperature":0.25,"max_tokens":7,"chat_template_kwargs":{"enable_thinking":true},"vendor_knob":{"x":[1,2,{"y":null}]},"seed":9007199254740993}`
	code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, body)
	if code != 200 || out["model"] != "deep" || out["system_fingerprint"] != "fp" {
		t.Fatalf("%d %v", code, out)
	}
	msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "hello from gpt-large" {
		t.Fatalf("reply %v", msg)
	}
	got := b.received()
	if len(got) != 1 || got[0].Path != "/v1/chat/completions" || got[0].Auth != "Bearer "+backendKey {
		t.Fatalf("backend got %+v", got)
	}
	sent := got[0].Body
	if sent["model"] != "gpt-large" || sent["temperature"] != 0.25 || sent["max_tokens"] != 7.0 {
		t.Fatalf("sent %v", sent)
	}
	for _, want := range []string{`"vendor_knob":{"x":[1,2,{"y":null}]}`, `"seed":9007199254740993`, `"chat_template_kwargs":{"enable_thinking":true}`, `"name":"u1"`} {
		if !strings.Contains(got[0].Raw, want) {
			t.Errorf("pass-through lost %s in %s", want, got[0].Raw)
		}
	}
	// Names resolve exactly: no prefix, case folding or default.
	for _, name := range []string{"Fast", "fas", "fast ", "gpt-mini"} {
		code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, `{"model":"`+name+`","messages":[{"role":"user","content":"x"}]}`)
		if _, c, _ := errorOf(out); code != 404 || c != "model_not_found" {
			t.Errorf("%q: %d %v", name, code, out)
		}
	}
}

// TestEmptyEndpointKey: an endpoint with api_key = "" gets no
// Authorization header (Ollama, a local vLLM).
func TestEmptyEndpointKey(t *testing.T) {
	b := newBackend(t)
	g := open(t, strings.Replace(fileFor(b.URL, ""), `api_key = "`+backendKey+`"`, `api_key = ""`, 1))
	if code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast); code != 200 {
		t.Fatalf("%d %v", code, out)
	}
	if a := b.received()[0].Auth; a != "" {
		t.Fatalf("Authorization %q sent for an empty key", a)
	}
}

// TestModelsAndHealth: the catalog lists every model with its defaults;
// /health needs no bearer, everything else does.
func TestModelsAndHealth(t *testing.T) {
	g := open(t, fileFor("http://127.0.0.1:9", ""))
	code, out, _ := call(t, g, "GET", "/health", "", "")
	if code != 200 || out["status"] != "serving" {
		t.Fatalf("health %d %v", code, out)
	}
	code, out, _ = call(t, g, "GET", "/v1/models", serverKey, "")
	data, _ := out["data"].([]any)
	if code != 200 || out["object"] != "list" || len(data) != 2 {
		t.Fatalf("%d %v", code, out)
	}
	first := data[0].(map[string]any)
	want := map[string]any{"id": "fast", "object": "model", "description": "small fast model for drafts", "context": 8192.0, "thinking": "never", "tool_dialect": "openai", "tools_mode": "native"}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("%s = %v, want %v", k, first[k], v)
		}
	}
	if data[1].(map[string]any)["thinking"] != "switchable" {
		t.Errorf("deep: %v", data[1])
	}
}

// TestBearer: a missing, wrong, differently-cased or non-Bearer credential
// is 401 with no detail, on every route but /health.
func TestBearer(t *testing.T) {
	g := open(t, fileFor("http://127.0.0.1:9", ""))
	for _, path := range []string{"/v1/models", "/v1/chat/completions", "/v1/tools/web_search", "/admin/status", "/admin/profiles", "/admin/switch-profile"} {
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + serverKey + "x", "bearer " + serverKey, "Basic " + serverKey, serverKey, "Bearer "} {
			req, _ := http.NewRequest("POST", path, strings.NewReader("{}"))
			if path == "/v1/models" || strings.HasPrefix(path, "/admin/p") || path == "/admin/status" {
				req.Method = "GET"
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			w := &memWriter{header: http.Header{}}
			g.ServeHTTP(w, req)
			var out map[string]any
			json.Unmarshal(w.body.Bytes(), &out)
			typ, code, msg := errorOf(out)
			if w.status != 401 || typ != "authentication_error" || code != "unauthorized" || msg != "unauthorized" {
				t.Errorf("%s with %q: %d %v", path, auth, w.status, out)
			}
		}
	}
	if !authorized("Bearer "+serverKey, NewSecret(serverKey)) || authorized("Bearer ", NewSecret("")) {
		t.Fatal("authorized")
	}
}

// TestErrorTable: every row of docs/gateway.md#errors, with upstream's
// status, type and code.
func TestErrorTable(t *testing.T) {
	b := newBackend(t)
	b.reply = func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		msgs, _ := body["messages"].([]any)
		text := msgs[0].(map[string]any)["content"].(string)
		switch text {
		case "notjson":
			w.Write([]byte("definitely not json"))
		case "nochoices":
			w.Write([]byte(`{"model":"x","choices":[{"message":{}}]}`))
		case "429":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"message":"slow down, key ` + backendKey + `","type":"rate_limit"}}`))
		case "400":
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"message":"max_tokens too large"}}`))
		case "500":
			w.WriteHeader(500)
			w.Write([]byte("backend exploded"))
		case "503":
			w.WriteHeader(503)
		}
	}
	g := open(t, fileFor(b.URL, `
[[endpoint]]
id = "dead"
protocol = "openai"
base_url = "http://127.0.0.1:1/v1"
api_key = ""

[[model]]
name = "gone"
description = "unreachable"
context = 10
upstream = "u"
endpoints = ["dead"]
`))
	chat := func(model, content string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"` + content + `"}]}`
	}
	rows := []struct {
		name, path, body string
		status           int
		typ, code, msg   string
	}{
		{"unknown model", "/v1/chat/completions", chat("nope", "x"), 404, "invalid_request_error", "model_not_found", "unknown model nope"},
		{"tool not configured", "/v1/tools/web_search", `{"query":"q"}`, 404, "invalid_request_error", "not_found", "tool not configured: web_search"},
		{"not json", "/v1/chat/completions", `{"model":`, 400, "invalid_request_error", "malformed_request", "body must be a JSON object"},
		{"no model", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "malformed_request", "model must not be empty"},
		{"no messages", "/v1/chat/completions", `{"model":"fast","messages":[]}`, 400, "invalid_request_error", "malformed_request", "messages must not be empty"},
		{"bad role", "/v1/chat/completions", `{"model":"fast","messages":[{"role":"robot","content":"x"}]}`, 400, "invalid_request_error", "malformed_request", `role "robot"`},
		{"no content", "/v1/chat/completions", `{"model":"fast","messages":[{"role":"user"}]}`, 400, "invalid_request_error", "malformed_request", "content or a tool/function call"},
		{"transport", "/v1/chat/completions", chat("gone", "x"), 502, "server_error", "upstream_transport", `endpoint "dead" (POST http://127.0.0.1:1/v1/chat/completions): cannot reach the backend: connection refused`},
		{"protocol", "/v1/chat/completions", chat("fast", "notjson"), 502, "server_error", "upstream_protocol", "upstream protocol error"},
		{"bad choice", "/v1/chat/completions", chat("fast", "nochoices"), 502, "server_error", "upstream_error", "missing index"},
		{"upstream 429", "/v1/chat/completions", chat("fast", "429"), 429, "invalid_request_error", "upstream_client_error", "upstream returned 429: slow down, key [REDACTED]"},
		{"upstream 400", "/v1/chat/completions", chat("fast", "400"), 400, "invalid_request_error", "upstream_client_error", "max_tokens too large"},
		{"upstream 500", "/v1/chat/completions", chat("fast", "500"), 502, "server_error", "upstream_error", "upstream returned 500: backend exploded"},
		{"upstream 503", "/v1/chat/completions", chat("fast", "503"), 502, "server_error", "upstream_error", "upstream returned 503"},
	}
	for _, r := range rows {
		code, out, h := call(t, g, "POST", r.path, serverKey, r.body)
		typ, c, msg := errorOf(out)
		if code != r.status || typ != r.typ || c != r.code || !strings.Contains(msg, r.msg) {
			t.Errorf("%s: %d %s %s %q; want %d %s %s %q", r.name, code, typ, c, msg, r.status, r.typ, r.code, r.msg)
		}
		if strings.Contains(msg, backendKey) || strings.Contains(msg, serverKey) {
			t.Errorf("%s: credential echoed: %q", r.name, msg)
		}
		if r.name == "upstream 429" && h.Get("Retry-After") != "7" {
			t.Errorf("Retry-After not passed on: %v", h)
		}
	}
}

// TestQueueFull: with concurrency 1 and max_depth 1, one request runs,
// one waits and the third is 503 queue_full; the waiter then completes.
func TestQueueFull(t *testing.T) {
	b := newBackend(t)
	gate := make(chan struct{})
	b.reply = func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		<-gate
		w.Write([]byte(`{"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`))
	}
	g := open(t, strings.Replace(fileFor(b.URL, "[queue]\nmax_depth = 1\n"), `id = "main"`, "id = \"main\"\nconcurrency = 1", 1))
	ep := g.state.Load().byName["fast"].ep
	codes := make(chan int, 2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast)
			codes <- c
		}()
		waitFor(t, func() bool {
			ep.lane.mu.Lock()
			defer ep.lane.mu.Unlock()
			return ep.lane.inflight+ep.lane.waiting == i+1
		})
	}
	code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast)
	if typ, c, _ := errorOf(out); code != 503 || typ != "server_error" || c != "queue_full" {
		t.Fatalf("third request: %d %v", code, out)
	}
	close(gate)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Fatalf("admitted request got %d", c)
		}
	}
}

// TestFairness: with one slot busy, client a queues three requests and b
// one; turns go a, b, a, a rather than in arrival order. With
// fair_scheduling = false they go in arrival order.
func TestFairness(t *testing.T) {
	for _, fair := range []bool{true, false} {
		l := newLane(1, QueueConfig{FairScheduling: &fair})
		hold, _ := l.admit(context.Background(), "x")
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		for i, c := range []string{"a", "a", "a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rel, err := l.admit(context.Background(), c)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, c)
				mu.Unlock()
				rel()
			}()
			waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiting == i+1 })
		}
		hold()
		wg.Wait()
		want := "a,b,a,a"
		if !fair {
			want = "a,a,a,b"
		}
		if got := strings.Join(order, ","); got != want {
			t.Errorf("fair=%v: order %s, want %s", fair, got, want)
		}
	}
}

// TestClientLabels: 32 labels get their own turn, the 33rd shares
// "default"; invalid labels are "default".
func TestClientLabels(t *testing.T) {
	for in, want := range map[string]string{"": "default", "  ci-1  ": "ci-1", "a b": "default", "x:y.z_w": "x:y.z_w", strings.Repeat("a", 65): "default", "é": "default"} {
		if got := clientLabel(in); got != want {
			t.Errorf("clientLabel(%q) = %q, want %q", in, got, want)
		}
	}
	l := newLane(1, QueueConfig{})
	hold, _ := l.admit(context.Background(), "x")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < MaxClients+2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); l.admit(ctx, "c"+string(rune('A'+i))) }()
		waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiting == i+1 })
	}
	l.mu.Lock()
	n, def := len(l.order), len(l.byClient[defaultClient])
	l.mu.Unlock()
	if n != MaxClients+1 || def != 2 {
		t.Fatalf("%d buckets, %d in default; want %d and 2", n, def, MaxClients+1)
	}
	cancel()
	wg.Wait()
	l.mu.Lock()
	left := l.waiting
	l.mu.Unlock()
	hold()
	if left != 0 || l.inflight != 0 {
		t.Fatalf("cancelled waiters left %d waiting, %d in flight", left, l.inflight)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached in 30 s")
}

// TestConcurrencyAtBackend: an endpoint with concurrency 2 never has more
// than two requests at its backend, through a device's concurrency too.
func TestConcurrencyAtBackend(t *testing.T) {
	for _, conf := range []string{"concurrency = 2", `device = "gpu"`} {
		b := newBackend(t)
		var mu sync.Mutex
		now, peak := 0, 0
		// The first request is held until a second one is at the backend
		// too, so that the peak of 2 does not depend on the scheduler; a
		// limiter that lets only one through fails after the bound.
		pair := make(chan struct{})
		b.reply = func(w http.ResponseWriter, r *http.Request, body map[string]any) {
			mu.Lock()
			now++
			if peak = max(peak, now); now == 2 && peak == 2 {
				select {
				case <-pair:
				default:
					close(pair)
				}
			}
			mu.Unlock()
			select {
			case <-pair:
			case <-time.After(30 * time.Second):
			}
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			now--
			mu.Unlock()
			w.Write([]byte(`{"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`))
		}
		text := strings.Replace(fileFor(b.URL, "[[device]]\nid = \"gpu\"\ntype = \"remote\"\nconcurrency = 2\n"), `id = "main"`, "id = \"main\"\n"+conf, 1)
		g := open(t, text)
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast); c != 200 {
					t.Errorf("%d %v", c, out)
				}
			}()
		}
		wg.Wait()
		if peak != 2 {
			t.Errorf("%s: %d requests at the backend at once, want 2", conf, peak)
		}
	}
}

// TestUpstreamTimeout: a backend slower than the timeout is 502
// upstream_transport, and the caller is not held past it.
func TestUpstreamTimeout(t *testing.T) {
	b := newBackend(t)
	release := make(chan struct{})
	defer close(release)
	b.reply = func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	c, err := Load(write(t, t.TempDir(), "gw.toml", fileFor(b.URL, "")), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := New(c, Options{Timeout: 50 * time.Millisecond})
	start := time.Now()
	code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast)
	if typ, c, _ := errorOf(out); code != 502 || typ != "server_error" || c != "upstream_transport" {
		t.Fatalf("%d %v", code, out)
	}
	if d := time.Since(start); d > 15*time.Second { // the backend holds for ever
		t.Fatalf("held %s", d)
	}
}
