package gatewaytest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// Backend returns the base URL of a model backend for tests of the model
// path's failures: serve answers its requests, or, when serve is nil,
// nothing listens at the URL (a port just closed: connection refused).
// The URL ends in /v1 unless noV1 is set. The server stops when tb ends.
func Backend(tb testing.TB, serve http.HandlerFunc, noV1 bool) string {
	tb.Helper()
	if serve == nil {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		base := "http://" + l.Addr().String() + "/v1"
		l.Close() // nothing listens there now
		return base
	}
	srv := httptest.NewServer(serve)
	tb.Cleanup(srv.Close)
	if noV1 {
		return srv.URL
	}
	return srv.URL + "/v1"
}

// GatewayFile writes a gateway file (docs/gateway.md) with one OpenAI
// endpoint "main" at base, called with backendKey, serving one model "m"
// described as description, with serverKey as `gateway serve`'s own key.
// It returns the file's path.
func GatewayFile(tb testing.TB, base, serverKey, backendKey, description string) string {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "gw.toml")
	err := os.WriteFile(file, []byte(`[server]
bind = "127.0.0.1:0"
api_key = "`+serverKey+`"

[[endpoint]]
id = "main"
protocol = "openai"
base_url = "`+base+`"
api_key = "`+backendKey+`"

[[model]]
name = "m"
description = "`+description+`"
context = 8192
upstream = "up"
endpoints = ["main"]
`), 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	return file
}
