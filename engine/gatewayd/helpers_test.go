package gatewayd

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	serverKey  = "gw-key-0123456789"
	backendKey = "sk-backend-SECRET-4242"
)

// noEnv is an empty environment.
func noEnv(string) (string, bool) { return "", false }

// envOf is an environment of key/value pairs.
func envOf(kv ...string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1], true
			}
		}
		return "", false
	}
}

func write(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// backend is a scripted OpenAI-compatible server that records what it
// received.
type backend struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
	// reply answers a request; nil answers a one-choice completion.
	reply func(w http.ResponseWriter, r *http.Request, body map[string]any)
}

type received struct {
	Path, Auth string
	Body       map[string]any
	Raw        string
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		b.mu.Lock()
		b.reqs = append(b.reqs, received{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body, Raw: string(raw)})
		reply := b.reply
		b.mu.Unlock()
		if reply != nil {
			reply(w, r, body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "cmpl-1", "object": "chat.completion", "model": body["model"], "system_fingerprint": "fp",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "hello from " + body["model"].(string)}}},
			"usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
		})
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) received() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.reqs...)
}

// fileFor is a gateway file with one endpoint at base and models
// "fast" (upstream gpt-mini) and "deep" (upstream gpt-large); extra is
// appended.
func fileFor(base, extra string) string {
	return `[server]
bind = "127.0.0.1:0"
api_key = "` + serverKey + `"

[[endpoint]]
id = "main"
protocol = "openai"
base_url = "` + base + `/v1/"
api_key = "` + backendKey + `"

[[model]]
name = "fast"
description = "small fast model for drafts"
context = 8192
upstream = "gpt-mini"
endpoints = ["main"]

[[model]]
name = "deep"
description = "careful reasoning model"
context = 200000
thinking = "switchable"
upstream = "gpt-large"
endpoints = ["main"]
` + extra
}

// open loads text as a gateway file and returns the gateway.
func open(t *testing.T, text string) *Gateway {
	t.Helper()
	c, err := Load(write(t, t.TempDir(), "gateway.toml", text), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// call sends one request to g and decodes the JSON answer.
func call(t *testing.T, g http.Handler, method, path, key, body string, header ...string) (int, map[string]any, http.Header) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: body %q is not JSON", method, path, rec.Body.String())
	}
	return rec.Code, out, rec.Header()
}

// errorOf is the envelope's type and code.
func errorOf(body map[string]any) (typ, code, msg string) {
	e, _ := body["error"].(map[string]any)
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	msg, _ = e["message"].(string)
	return
}
