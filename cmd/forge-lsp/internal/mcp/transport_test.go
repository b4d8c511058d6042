package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a header to every request.
type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

func TestHTTPBearerAndHosts(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	h, err := f.srv.HTTPHandler("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()

	resp, err := http.Get(hs.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, auth := range []string{"", "Bearer wrong", "bearer-secret-token"} {
		req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", hs.URL+"/healthz", nil)
	req.Host = "evil.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host: status %d, want 403", resp.StatusCode)
	}

	// The official client with the token works end to end.
	tr := &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"bearer-secret-token", http.DefaultTransport}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var r RunResult
	call(t, cs, "run_prompt", map[string]any{"prompt": "echo", "args": "over http"}, &r)
	if r.Status != StatusCompleted || *r.Value != "OVER HTTP" {
		t.Fatalf("over HTTP: %+v", r)
	}
}

func TestHTTPRefusals(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	if _, err := f.srv.HTTPHandler("0.0.0.0:9310"); err == nil || !strings.Contains(err.Error(), "--allow-host") {
		t.Fatalf("a non-loopback bind with no hosts: %v", err)
	}
	cfg := *f.srv.config()
	cfg.Server.AllowedHosts = []string{"mcp.example.com"}
	f.srv.setConfig(&cfg)
	if _, err := f.srv.HTTPHandler("0.0.0.0:9310"); err != nil {
		t.Fatalf("a non-loopback bind with hosts: %v", err)
	}
	cfg.Server.APIKey = ""
	f.srv.setConfig(&cfg)
	if _, err := f.srv.HTTPHandler("127.0.0.1:9310"); err == nil || !strings.Contains(err.Error(), "bearer token") {
		t.Fatalf("HTTP without a token: %v", err)
	}
	for host, want := range map[string]bool{"mcp.example.com": true, "mcp.example.com:443": true, "other.example.com": false} {
		if got := hostAllowed(host, []string{"mcp.example.com"}); got != want {
			t.Errorf("%s allowed = %v", host, got)
		}
	}
	if hostAllowed("localhost:9", []string{"localhost:8"}) || !hostAllowed("[::1]:9", []string{"::1"}) {
		t.Error("ports and brackets")
	}
}
