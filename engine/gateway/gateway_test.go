package gateway_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

const secret = "sk-test-SECRET-4242"

func TestFromLookup(t *testing.T) {
	env := func(kv ...string) gateway.LookupFunc {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cases := []struct {
		name    string
		env     gateway.LookupFunc
		wantURL string
		wantErr string
	}{
		{"ok", env(gateway.EnvURL, " http://h:8080/v1/ ", gateway.EnvKey, secret), "http://h:8080/v1", ""},
		{"nothing", env(), "", "--replay FILE"},
		{"no url", env(gateway.EnvKey, secret), "", "missing environment variable: PROMPTFORGE_GATEWAY_URL"},
		{"no key", env(gateway.EnvURL, "http://h/v1"), "", "missing environment variable: PROMPTFORGE_GATEWAY_API_KEY"},
		{"empty key", env(gateway.EnvURL, "http://h/v1", gateway.EnvKey, ""), "", "PROMPTFORGE_GATEWAY_API_KEY must not be empty"},
		{"blank key", env(gateway.EnvURL, "http://h/v1", gateway.EnvKey, "  "), "", "must not be empty"},
		{"bad unicode", env(gateway.EnvURL, "http://h/\xff", gateway.EnvKey, secret), "", "not valid Unicode: PROMPTFORGE_GATEWAY_URL"},
		{"scheme", env(gateway.EnvURL, "ftp://h/v1", gateway.EnvKey, secret), "", "http or https scheme"},
		{"relative", env(gateway.EnvURL, "/v1", gateway.EnvKey, secret), "", "http or https scheme"},
		{"no host", env(gateway.EnvURL, "http:///v1", gateway.EnvKey, secret), "", "names no host"},
		{"creds", env(gateway.EnvURL, "http://u:pw@h/v1", gateway.EnvKey, secret), "", "must not embed credentials"},
		{"query", env(gateway.EnvURL, "http://h/v1?x=1", gateway.EnvKey, secret), "", "query or fragment"},
		{"fragment", env(gateway.EnvURL, "http://h/v1#f", gateway.EnvKey, secret), "", "query or fragment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := gateway.FromLookup(c.env, nil)
			if c.wantErr == "" {
				if err != nil || cfg.BaseURL != c.wantURL {
					t.Fatalf("got %v, %v; want %s", cfg.BaseURL, err, c.wantURL)
				}
				if strings.Contains(cfg.String(), secret) {
					t.Fatalf("Config.String leaks the key: %s", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, c.wantErr)
			}
			if !gateway.IsConfig(err) || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "pw") {
				t.Fatalf("bad error %v", err)
			}
		})
	}
	_, err := gateway.FromLookup(env(), nil)
	for _, want := range []string{gateway.EnvURL, gateway.EnvKey, "--replay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no-gateway message %q lacks %q", err, want)
		}
	}
}

func TestCompleteRoundTrip(t *testing.T) {
	srv := gatewaytest.New(t, secret)
	srv.Enqueue(gatewaytest.Calls("search", `{ "q" : "x" }`), gatewaytest.Text("final"))
	var logs []string
	c := gateway.New(srv.Config())
	c.Log = func(s string) { logs = append(logs, s) }
	temp := 0.5
	req := &gateway.Request{Model: "test-model", Messages: []gateway.Message{{Role: "user", Content: "hi"}}, Temperature: &temp,
		Tools: []gateway.ToolSpec{{Type: "function", Function: gateway.FunctionSpec{Name: "search", Description: "d", Parameters: []byte(`{"type":"object"}`)}}}, ToolChoice: "auto"}
	r, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Function.Arguments != `{"q":"x"}` || r.FinishReason != "tool_calls" {
		t.Fatalf("bad response %+v", r)
	}
	r, err = c.Complete(context.Background(), req)
	if err != nil || r.Content != "final" || !r.HasContent || len(r.ToolCalls) != 0 {
		t.Fatalf("bad response %+v %v", r, err)
	}
	got := srv.ChatRequests()[0]
	if got.Model != "test-model" || got.ToolChoice != "auto" || *got.Temperature != 0.5 || got.MaxTokens != nil || len(got.Tools) != 1 {
		t.Fatalf("server saw %+v", got)
	}
	if srv.Received()[0].Auth != "Bearer "+secret {
		t.Fatal("bearer header missing")
	}
	if !strings.Contains(string(srv.Received()[0].Body), `"temperature":0.5`) || strings.Contains(string(srv.Received()[0].Body), "max_tokens") {
		t.Fatalf("wire body %s", srv.Received()[0].Body)
	}
	for _, l := range logs {
		if strings.Contains(l, secret) {
			t.Fatalf("log leaks key: %s", l)
		}
	}
	if len(logs) != 2 {
		t.Fatalf("want one log line per exchange, got %q", logs)
	}
}

func TestMalformedResponses(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not json", `nope`, "not a JSON object"},
		{"no choices", `{"choices":[]}`, "non-empty array"},
		{"no message", `{"choices":[{}]}`, "message must be an object"},
		{"finish type", `{"choices":[{"message":{"content":"x"},"finish_reason":3}]}`, "finish_reason"},
		{"reasoning type", `{"choices":[{"message":{"content":"x","reasoning":5}}]}`, "reasoning"},
		{"calls type", `{"choices":[{"message":{"tool_calls":{}}}]}`, "tool_calls must be an array"},
		{"call type", `{"choices":[{"message":{"tool_calls":[{"id":"a","type":"x","function":{"name":"f","arguments":"{}"}}]}}]}`, `type must be "function"`},
		{"blank id", `{"choices":[{"message":{"tool_calls":[{"id":" ","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`, "id must be"},
		{"dup id", `{"choices":[{"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`, "duplicate id"},
		{"args object", `{"choices":[{"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":{}}}]}}]}`, "must be a string"},
		{"args not object", `{"choices":[{"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}}]}`, "JSON object"},
		{"content type", `{"choices":[{"message":{"content":7}}]}`, "content must be a string"},
	}
	srv := gatewaytest.New(t, secret)
	c := gateway.New(srv.Config())
	for _, tc := range cases {
		srv.Enqueue(gatewaytest.Reply{RawBody: tc.body})
		_, err := c.Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Kind != gateway.KindMalformed || !strings.Contains(err.Error(), tc.want) || !ge.Retryable() {
			t.Errorf("%s: err = %v, want malformed containing %q", tc.name, err, tc.want)
		}
	}
	// Reasoning: the first non-blank of the three fields; null and absent content are "no text".
	srv.Enqueue(gatewaytest.Reply{RawBody: `{"choices":[{"message":{"content":null,"reasoning_content":" ","thinking":"deep"},"finish_reason":null}]}`})
	r, err := c.Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
	if err != nil || r.HasContent || r.Reasoning != "deep" || r.HasFinishReason {
		t.Fatalf("got %+v %v", r, err)
	}
}

func TestBackendErrorAndKeyRedaction(t *testing.T) {
	srv := gatewaytest.New(t, secret)
	// A hostile gateway echoes the key in its error body.
	srv.Enqueue(gatewaytest.Reply{Status: 502, RawBody: "upstream said: bad key " + secret + "\n" + strings.Repeat("x", 5000)})
	c := gateway.New(srv.Config())
	_, err := c.Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindBackend || ge.Status != 502 || !ge.Retryable() {
		t.Fatalf("err = %#v", err)
	}
	if !strings.HasPrefix(err.Error(), "gateway: 502 Bad Gateway: upstream said: bad key [REDACTED] (POST ") || strings.Contains(err.Error(), secret) {
		t.Fatalf("message %q", err)
	}
	if strings.Contains(ge.Body(), secret) || !strings.Contains(ge.Body(), "[REDACTED]") || !strings.Contains(ge.Body(), `\x0a`) || len(ge.Body()) > gateway.MaxErrorBody+10 {
		t.Fatalf("body %q", ge.Body())
	}
	// Wrong key: 401, not retryable, key not in message.
	bad := gateway.New(gateway.Config{BaseURL: srv.BaseURL(), APIKey: "wrong-" + secret})
	_, err = bad.Models(context.Background())
	if !errors.As(err, &ge) || ge.Status != 401 || ge.Retryable() || strings.Contains(err.Error(), secret) {
		t.Fatalf("err = %v", err)
	}
	// Transport failure names the endpoint but not the key.
	dead := gateway.New(gateway.Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: secret})
	_, err = dead.Models(context.Background())
	if !errors.As(err, &ge) || ge.Kind != gateway.KindTransport || strings.Contains(err.Error(), secret) {
		t.Fatalf("err = %v", err)
	}
}

// TestBackendErrorMessage: a non-2xx response's error names the status
// with its reason phrase and what the gateway said, in the OpenAI wire
// format or as plain text, without the key.
func TestBackendErrorMessage(t *testing.T) {
	long := strings.Repeat("y", 1000)
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{429, `{"error":{"message":"rate limit reached","type":"rate_limit_error","code":"rate_limit"}}`, "gateway: 429 Too Many Requests: rate limit reached"},
		{401, `{"error":{"message":"invalid key ` + secret + `"}}`, "gateway: 401 Unauthorized: invalid key [REDACTED]"},
		{400, `{"error":"model not found"}`, "gateway: 400 Bad Request: model not found"},
		{404, `{"message":"no route"}`, "gateway: 404 Not Found: no route"},
		{503, `{"error":{"type":"overloaded"}}`, "gateway: 503 Service Unavailable: overloaded"},
		{500, `{"detail":{}}`, "gateway: 500 Internal Server Error"},
		{502, "<html>bad gateway</html>\n<body>", "gateway: 502 Bad Gateway: <html>bad gateway</html>"},
		{500, "", "gateway: 500 Internal Server Error"},
		{599, "odd\tstatus", `gateway: 599: odd\x09status`},
		{500, `{"error":{"message":"` + long + `"}}`, "gateway: 500 Internal Server Error: " + long[:300] + "…"},
	} {
		srv := gatewaytest.New(t, secret)
		srv.Enqueue(gatewaytest.Reply{Status: tc.status, RawBody: tc.body})
		cfg := srv.Config()
		cfg.Retries = -1 // the first answer's message, not a retry's
		_, err := gateway.New(cfg).Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Kind != gateway.KindBackend || ge.Status != tc.status {
			t.Fatalf("%d %q: err = %#v", tc.status, tc.body, err)
		}
		// The message then names the URL and the likely fix (TestModelPathErrors).
		if !strings.HasPrefix(err.Error(), tc.want+" (POST "+srvURL(err)) {
			t.Errorf("%d %q:\n got %q\nwant %q", tc.status, tc.body, err.Error(), tc.want)
		}
	}
	// Other endpoints are named.
	bad := gateway.New(gateway.Config{BaseURL: gatewaytest.New(t, secret).BaseURL(), APIKey: "wrong"})
	if _, err := bad.Models(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "gateway models: 401 Unauthorized") {
		t.Errorf("models: %v", err)
	}
}

// srvURL is the URL a backend error names, read back from its message.
func srvURL(err error) string {
	_, after, _ := strings.Cut(err.Error(), " (POST ")
	u, _, _ := strings.Cut(after, ")")
	return u
}

func TestTimeoutCapAndCancel(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			// Held until the client gives up (the deadline is only a
			// bound, so a broken timeout fails instead of hanging). The
			// body is read first: only then does the server notice the
			// client hanging up.
			io.Copy(io.Discard, r.Body)
			select {
			case <-time.After(30 * time.Second):
			case <-r.Context().Done():
			}
		}
		w.Write([]byte(`{"choices":[{"message":{"content":"` + strings.Repeat("a", 300) + `"}}]}`))
	}))
	defer slow.Close()
	cfg := gateway.Config{BaseURL: slow.URL + "/v1", APIKey: secret, ChatTimeout: 50 * time.Millisecond}
	c := gateway.New(cfg)
	req := &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}}
	_, err := c.Complete(context.Background(), req)
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindTransport || !ge.Timeout || !ge.Retryable() {
		t.Fatalf("timeout: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Complete(ctx, req)
	if !errors.As(err, &ge) || ge.Kind != gateway.KindCancelled || ge.RunKind() != "Cancelled" {
		t.Fatalf("cancel: err = %v", err)
	}
	// Response cap: a 300-byte content over a 100-byte cap.
	cfg.ChatTimeout, cfg.MaxResponseBytes = time.Second, 100
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"choices":[{"message":{"content":"` + strings.Repeat("a", 300) + `"}}]}`))
	}))
	defer fast.Close()
	cfg.BaseURL = fast.URL + "/v1"
	_, err = gateway.New(cfg).Complete(context.Background(), req)
	if !errors.As(err, &ge) || ge.Kind != gateway.KindMalformed || !strings.Contains(err.Error(), "100-byte cap") {
		t.Fatalf("cap: err = %v", err)
	}
}

func TestCatalog(t *testing.T) {
	srv := gatewaytest.New(t, secret)
	srv.Catalog = append(srv.Catalog, gateway.Model{ID: "gemma", Description: "small", Context: 100, Thinking: "switchable", ToolDialect: "gemma3_tool_code"})
	ms, err := gateway.New(srv.Config()).Models(context.Background())
	if err != nil || len(ms) != 2 || ms[1].ID != "gemma" || ms[1].ToolDialect != "gemma3_tool_code" || ms[0].Context != 8192 {
		t.Fatalf("%+v %v", ms, err)
	}
	bad := []struct{ body, want string }{
		{`{"data":[{"id":"a","description":"d","context":1,"thinking":"never"},{"id":"a","description":"d","context":1,"thinking":"never"}]}`, "duplicate id"},
		{`{"data":[{"id":"a","description":"d","context":0,"thinking":"never"}]}`, "context"},
		{`{"data":[{"id":"a","description":"d","context":1,"thinking":"maybe"}]}`, "thinking"},
		{`{"data":[{"id":"a","description":"d","context":1,"thinking":"never","tool_dialect":"openai","tools_mode":"emulated"}]}`, "tools_mode"},
		{`{"data":[{"id":"a\u001e","description":"d","context":1,"thinking":"never"}]}`, "control"},
	}
	for _, b := range bad {
		_, err := catalogOf(t, b.body)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want %q", b.body, err, b.want)
		}
	}
}

func catalogOf(t *testing.T, body string) ([]gateway.Model, error) {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
	defer hs.Close()
	return gateway.New(gateway.Config{BaseURL: hs.URL + "/v1", APIKey: secret}).Models(context.Background())
}

// TestCatalogDefaults: upstream documents thinking as optional (never) and
// tool_dialect defaults to openai.
func TestCatalogDefaults(t *testing.T) {
	ms, err := catalogOf(t, `{"object":"list","data":[{"id":"a","description":"d","context":8}]}`)
	if err != nil || len(ms) != 1 || ms[0].Thinking != "never" || ms[0].ToolDialect != "openai" {
		t.Fatalf("%+v %v", ms, err)
	}
}

// TestCatalogUndescribed: a plain OpenAI-compatible /v1/models (id, object,
// created, owned_by) is not "malformed": the error says what is missing and
// how to describe the models.
func TestCatalogUndescribed(t *testing.T) {
	plain := `{"object":"list","data":[` +
		`{"id":"gpt-4o-mini","object":"model","created":1721172741,"owned_by":"system"},` +
		`{"id":"b","object":"model","created":1,"owned_by":"o"},{"id":"c","object":"model","created":1,"owned_by":"o"},` +
		`{"id":"d","object":"model","created":1,"owned_by":"o"}]}`
	_, err := catalogOf(t, plain)
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindConfig || ge.Retryable() {
		t.Fatalf("err = %#v, want a non-retryable config error", err)
	}
	for _, want := range []string{`"gpt-4o-mini", "b", "c" and 1 more have no description and no context`, "docs/gateway.md", "[[model]]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "malformed") {
		t.Errorf("message %q still says malformed", err)
	}
	_, err = catalogOf(t, `{"data":[{"id":"a","description":"d","context":8},{"id":"x","context":8}]}`)
	if err == nil || !strings.Contains(err.Error(), `"x" has no description;`) {
		t.Fatalf("one undescribed entry: %v", err)
	}
}

func TestRecordReplay(t *testing.T) {
	srv := gatewaytest.New(t, secret)
	srv.Enqueue(gatewaytest.Text("one"), gatewaytest.Text("two"))
	path := filepath.Join(t.TempDir(), "run.cassette")
	rec, err := gateway.NewRecording(srv.Config(), path)
	if err != nil {
		t.Fatal(err)
	}
	req := func(s string) *gateway.Request {
		return &gateway.Request{Model: "test-model", Messages: []gateway.Message{{Role: "user", Content: s}}}
	}
	if _, err := rec.Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	r1, _ := rec.Complete(context.Background(), req("a"))
	r2, _ := rec.Complete(context.Background(), req("b"))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), secret) || !strings.Contains(string(data), `"endpoint":"chat/completions"`) {
		t.Fatalf("cassette:\n%s", data)
	}
	srv.Close() // replay must not need the gateway

	rp, err := gateway.NewReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	// Order does not matter (fanout arms race), content does.
	g2, err := rp.Complete(context.Background(), req("b"))
	if err != nil || g2.Content != r2.Content {
		t.Fatalf("%+v %v", g2, err)
	}
	g1, err := rp.Complete(context.Background(), req("a"))
	if err != nil || g1.Content != r1.Content || g1.Content != "one" {
		t.Fatalf("%+v %v", g1, err)
	}
	if err := rp.Close(); err == nil || !strings.Contains(err.Error(), "1 recorded exchange") {
		t.Fatalf("unused models exchange not reported: %v", err)
	}
	if _, err := rp.Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rp.Close(); err != nil {
		t.Fatal(err)
	}
	// Divergence: a changed prompt names where it differs.
	rp, _ = gateway.NewReplay(path)
	_, err = rp.Complete(context.Background(), req("changed"))
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindReplay || !strings.Contains(err.Error(), "replay diverged at request 1") || !strings.Contains(err.Error(), `"content":"changed"`) {
		t.Fatalf("divergence: %v", err)
	}
	// One call too many.
	rp, _ = gateway.NewReplay(path)
	rp.Complete(context.Background(), req("a"))
	rp.Complete(context.Background(), req("b"))
	_, err = rp.Complete(context.Background(), req("a"))
	if err == nil || !strings.Contains(err.Error(), "more model calls than the recording") {
		t.Fatalf("extra call: %v", err)
	}
	// Not a cassette.
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	if _, err := gateway.NewReplay(junk); err == nil || !strings.Contains(err.Error(), "not a forge-lsp cassette") {
		t.Fatalf("junk: %v", err)
	}
}

func TestWithLimitsSharesCassette(t *testing.T) {
	srv := gatewaytest.New(t, secret)
	srv.Enqueue(gatewaytest.Text(strings.Repeat("x", 200)), gatewaytest.Text("short"))
	path := filepath.Join(t.TempDir(), "c")
	rec, err := gateway.NewRecording(srv.Config(), path)
	if err != nil {
		t.Fatal(err)
	}
	lim := rec.WithLimits(time.Second, 250)
	req := &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}}
	if _, err := lim.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "250-byte cap") {
		t.Fatalf("cap not applied: %v", err)
	}
	if r, err := lim.Complete(context.Background(), req); err != nil || r.Content != "short" {
		t.Fatalf("%v %v", r, err)
	}
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Fatalf("cassette has %d lines, want header + 2 exchanges:\n%s", n, data)
	}
}

// TestShortKeyDoesNotCorruptResponses: a short key ("x", "k") occurs in
// ordinary text; responses are parsed as sent, and the key is only
// looked for in what is shown (errors, logs) or, when it is long enough
// to be a secret, in the parsed values.
func TestShortKeyDoesNotCorruptResponses(t *testing.T) {
	for _, key := range []string{"x", "k", "e"} {
		srv := gatewaytest.New(t, key)
		srv.Catalog = []gateway.Model{{ID: "fake-model", Description: "kind of an example model", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
		c := gateway.New(srv.Config())
		models, err := c.Models(context.Background())
		if err != nil || len(models) != 1 || models[0].ID != "fake-model" || models[0].Description != "kind of an example model" {
			t.Fatalf("key %q: catalog %+v, %v", key, models, err)
		}
		srv.Enqueue(gatewaytest.Text("the key example"))
		r, err := c.Complete(context.Background(), &gateway.Request{Model: "fake-model", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
		if err != nil || r.Content != "the key example" {
			t.Fatalf("key %q: reply %+v, %v", key, r, err)
		}
	}
	// A long key echoed in a reply is still removed from the parsed text.
	srv := gatewaytest.New(t, secret)
	srv.Enqueue(gatewaytest.Text("your key is " + secret))
	r, err := gateway.New(srv.Config()).Complete(context.Background(), &gateway.Request{Model: "test-model", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
	if err != nil || r.Content != "your key is [REDACTED]" {
		t.Fatalf("reply %+v, %v", r, err)
	}
}

// TestCrossHostRedirectRefused: a gateway answering 307 to another host
// does not get the prompt re-sent there.
func TestCrossHostRedirectRefused(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(500)
	}))
	defer other.Close()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer gw.Close()
	c := gateway.New(gateway.Config{BaseURL: gw.URL + "/v1", APIKey: secret})
	_, err := c.Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "the prompt"}}})
	if err == nil || !strings.Contains(err.Error(), "redirect to another host") {
		t.Fatalf("err = %v", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the other host got %d requests", n)
	}
}

// TestUsage: a chat completion's "usage" is read when it is a wire-format
// usage object and ignored (never an error) otherwise.
func TestUsage(t *testing.T) {
	const choices = `"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]`
	for _, tc := range []struct {
		usage string
		want  *gateway.Usage
	}{
		{`,"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14}`, &gateway.Usage{PromptTokens: 10, CompletionTokens: 4, TotalTokens: 14}},
		{`,"usage":{"prompt_tokens":10,"completion_tokens":4}`, &gateway.Usage{PromptTokens: 10, CompletionTokens: 4, TotalTokens: 14}},
		{``, nil},
		{`,"usage":null`, nil},
		{`,"usage":"lots"`, nil},
		{`,"usage":{"prompt_tokens":"10"}`, nil},
		{`,"usage":{"prompt_tokens":-1,"completion_tokens":4,"total_tokens":3}`, nil},
	} {
		srv := gatewaytest.New(t, secret)
		srv.Enqueue(gatewaytest.Reply{RawBody: `{` + choices + tc.usage + `}`})
		r, err := gateway.New(srv.Config()).Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
		if err != nil || r.Content != "hi" {
			t.Fatalf("%s: %+v %v", tc.usage, r, err)
		}
		if (r.Usage == nil) != (tc.want == nil) || (r.Usage != nil && *r.Usage != *tc.want) {
			t.Errorf("%s: usage %+v, want %+v", tc.usage, r.Usage, tc.want)
		}
	}
}
