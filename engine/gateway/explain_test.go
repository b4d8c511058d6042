package gateway_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
)

// modelPathCase is one failure of the model path, and what its message
// must say: the URL called, the cause, and the fix.
type modelPathCase struct {
	name string
	// serve answers the request; nil means nothing listens.
	serve   http.HandlerFunc
	noV1    bool // the base URL lacks /v1
	host    string
	timeout time.Duration
	want    []string // substrings, with {url} standing for the URL called
}

func modelPathCases() []modelPathCase {
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			w.Write([]byte(body))
		}
	}
	return []modelPathCase{
		{name: "connection refused", want: []string{"cannot reach {url}", "connection refused", "is the server running and listening on", "PROMPTFORGE_GATEWAY_URL"}},
		{name: "unknown host", host: "no-such-host.invalid", want: []string{"cannot reach {url}", "no such host no-such-host.invalid", "check the host name"}},
		{name: "404 without /v1", noV1: true, serve: func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/") {
				w.Write([]byte(`{"object":"list","data":[]}`))
				return
			}
			http.NotFound(w, r)
		}, want: []string{"404 Not Found", "{url}", "the base URL has no /v1", "to http://"}},
		{name: "401", serve: status(401, `{"error":{"message":"invalid api key sk-model-path-key"}}`), want: []string{"401 Unauthorized", "{url}", "check the API key"}},
		{name: "500", serve: status(500, `{"error":{"message":"CUDA out of memory"}}`), want: []string{"500 Internal Server Error", "CUDA out of memory", "{url}", "the server failed"}},
		{name: "timeout", timeout: 50 * time.Millisecond, serve: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server sees the client go
			<-r.Context().Done()
		}, want: []string{"timed out after 50ms", "{url}", "did not answer in time"}},
		{name: "malformed JSON", serve: status(200, `<html>welcome to nginx</html>`), want: []string{"malformed gateway response", "{url}", "OpenAI-compatible API root"}},
	}
}

// TestModelPathErrors: every failure of a direct gateway names the URL it
// called, the cause and a fix, and never the key.
func TestModelPathErrors(t *testing.T) {
	const key = "sk-model-path-key"
	for _, tc := range modelPathCases() {
		t.Run(tc.name, func(t *testing.T) {
			base := ""
			switch {
			case tc.host != "":
				base = "http://" + tc.host + ":8080/v1"
			case tc.serve == nil:
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				base = "http://" + l.Addr().String() + "/v1"
				l.Close() // nothing listens there now
			default:
				srv := httptest.NewServer(tc.serve)
				defer srv.Close()
				base = srv.URL + "/v1"
				if tc.noV1 {
					base = srv.URL
				}
			}
			cfg := gateway.Config{BaseURL: base, APIKey: key, ChatTimeout: tc.timeout, Retries: -1}
			if tc.host != "" {
				// The machine may have no resolver that answers: the dial
				// fails as net's does for a name that does not exist.
				cfg.Transport = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: tc.host, IsNotFound: true}}
				}}
			}
			c := gateway.New(cfg)
			_, err := c.Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "hi"}}})
			url := base + "/chat/completions"
			if tc.noV1 {
				_, err = c.Models(context.Background())
				url = base + "/models"
			}
			var ge *gateway.Error
			if !errors.As(err, &ge) {
				t.Fatalf("err = %v", err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "{url}", url); !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, key) {
				t.Errorf("message holds the key: %s", msg)
			}
		})
	}
}

// TestModelPathErrorsThroughGatewayFile: the same failures behind a
// gateway file, served in-process (--gateway-config) and over HTTP
// (gateway serve), name the file or the gateway, the model and endpoint
// entry, the backend URL, the cause and a fix; never a key.
func TestModelPathErrorsThroughGatewayFile(t *testing.T) {
	const backendKey, serverKey = "sk-backend-key-1234", "sk-server-key-5678"
	for _, tc := range modelPathCases() {
		if tc.host != "" {
			continue // the gateway dials with the system resolver (TestModelPathErrors covers the wording)
		}
		for _, via := range []string{"in-process", "served"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				base := gatewaytest.Backend(t, tc.serve, tc.noV1)
				file := gatewaytest.GatewayFile(t, base, serverKey, backendKey, "a model")
				lookup := func(k string) (string, bool) { return file, k == gateway.EnvConfig }
				var cfg gateway.Config
				switch via {
				case "in-process":
					var err error
					if cfg, err = gateway.FromLookup(lookup, gatewayd.OpenFile); err != nil {
						t.Fatal(err)
					}
				case "served":
					c, err := gatewayd.Load(file, lookup)
					if err != nil {
						t.Fatal(err)
					}
					g, err := gatewayd.New(c, gatewayd.Options{Env: lookup})
					if err != nil {
						t.Fatal(err)
					}
					hs := httptest.NewServer(g)
					defer hs.Close()
					cfg = gateway.Config{BaseURL: hs.URL + "/v1", APIKey: serverKey}
				}
				cfg.Retries = -1
				if tc.timeout > 0 {
					cfg.ChatTimeout = tc.timeout
				}
				_, err := gateway.New(cfg).Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "hi"}}})
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				want := map[string][]string{
					"connection refused": {`endpoint "main" (POST {url})`, "connection refused", "is the server running"},
					"404 without /v1":    {`endpoint "main" (POST {url})`, "404", "base_url has no /v1"},
					"401":                {`endpoint "main" (POST {url})`, "401", "check the endpoint's api_key"},
					"500":                {`endpoint "main" (POST {url})`, "500", "CUDA out of memory"},
					"timeout":            {map[string]string{"in-process": "no answer within", "served": "timed out after 50ms"}[via]},
					"malformed JSON":     {`endpoint "main" (POST {url})`, "not a JSON object", "OpenAI-compatible"},
				}[tc.name]
				if via == "in-process" {
					want = append(want, "--gateway-config "+file)
				}
				for _, w := range want {
					if w = strings.ReplaceAll(w, "{url}", base+"/chat/completions"); !strings.Contains(msg, w) {
						t.Errorf("message lacks %q:\n%s", w, msg)
					}
				}
				if strings.Contains(msg, "Bad Gateway") && via == "in-process" {
					t.Errorf("an in-process gateway file reports the status of a gateway that does not exist:\n%s", msg)
				}
				for _, k := range []string{backendKey, serverKey} {
					if strings.Contains(msg, k) {
						t.Errorf("message holds a key: %s", msg)
					}
				}
			})
		}
	}
}
