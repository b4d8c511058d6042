package cli

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// TestModelPathMessages runs `forge-lsp run` as a user does against a
// failing model backend, three ways: direct (PROMPTFORGE_GATEWAY_URL at
// the backend), through `forge-lsp gateway serve` (the CLI command in
// front of the backend) and in-process (--gateway-config FILE). Each
// message names the URL called, the cause and a fix, and never a key.
// (A backend that does not answer in time is covered by
// engine/gateway's TestModelPathErrors*, which can shorten the timeout.)
func TestModelPathMessages(t *testing.T) {
	const backendKey, serverKey = "sk-backend-1234", "sk-served-5678"
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			w.Write([]byte(body))
		}
	}
	cases := []struct {
		name  string
		serve http.HandlerFunc // nil: nothing listens
		host  string           // a host name that does not exist
		noV1  bool
		// cause and fix: each entry lists alternatives, one must appear.
		cause, fix []string
	}{
		{name: "connection refused", cause: []string{"connection refused"}, fix: []string{"is the server running"}},
		{name: "unknown host", host: "no-such-host.invalid", cause: []string{"no such host", "lookup no-such-host.invalid"}, fix: []string{"check the host name"}},
		{name: "404 without /v1", noV1: true, serve: http.NotFound, cause: []string{"404"}, fix: []string{"has no /v1"}},
		{name: "401", serve: status(401, `{"error":{"message":"bad key"}}`), cause: []string{"401"}, fix: []string{"api_key", "API key"}},
		{name: "500", serve: status(500, `{"error":{"message":"CUDA out of memory"}}`), cause: []string{"500", "CUDA out of memory"}, fix: []string{"its log"}},
		{name: "malformed JSON", serve: status(200, `<html>welcome to nginx</html>`), cause: []string{"not a JSON", "malformed"}, fix: []string{"OpenAI-compatible"}},
	}
	prompt := writePrompt(t, "```lua\nmodels.default(\"m\", \"a general model\")\n```\n\n## S\n\nHello.\n")
	for _, tc := range cases {
		base := "http://" + tc.host + ":8080/v1"
		if tc.host == "" {
			base = gatewaytest.Backend(t, tc.serve, tc.noV1)
		}
		file := gatewaytest.GatewayFile(t, base, serverKey, backendKey, "a general model")
		for _, via := range []string{"direct", "gateway serve", "in-process"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				t.Setenv(gateway.EnvConfig, "")
				os.Unsetenv(gateway.EnvConfig)
				args := []string{prompt}
				switch via {
				case "direct":
					t.Setenv(gateway.EnvURL, base)
					t.Setenv(gateway.EnvKey, backendKey)
				case "gateway serve":
					addr, stop := serveForTest(t, file)
					defer stop()
					t.Setenv(gateway.EnvURL, "http://"+addr+"/v1")
					t.Setenv(gateway.EnvKey, serverKey)
				case "in-process":
					args = []string{"--gateway-config", file, prompt}
				}
				code, _, msg := runCLI(t, args...)
				if code == 0 {
					t.Fatal("the run succeeded")
				}
				// The URL called: the backend's, with its endpoint path.
				if !strings.Contains(msg, strings.TrimSuffix(base, "/v1")) {
					t.Errorf("message does not name the backend URL %s:\n%s", base, msg)
				}
				for _, want := range [][]string{tc.cause, tc.fix} {
					found := false
					for _, w := range want {
						found = found || strings.Contains(msg, w)
					}
					if !found {
						t.Errorf("message says none of %q:\n%s", want, msg)
					}
				}
				if via == "in-process" && !strings.Contains(msg, "--gateway-config "+file) {
					t.Errorf("message does not name --gateway-config %s:\n%s", file, msg)
				}
				if via == "in-process" && strings.Contains(msg, "Bad Gateway") {
					t.Errorf("an in-process gateway file reports the status of a gateway that does not exist:\n%s", msg)
				}
				for _, k := range []string{backendKey, serverKey} {
					if strings.Contains(msg, k) {
						t.Errorf("message holds a key:\n%s", msg)
					}
				}
			})
		}
	}
}
