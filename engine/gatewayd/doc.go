// Package gatewayd is forge-lsp's model gateway (docs/gateway.md): the Go
// counterpart of upstream PromptForge's promptforge-gateway. It reads a
// gateway file (TOML: [server], [[endpoint]], [[model]], [queue],
// [tools.web_search], profiles with include), and serves the
// OpenAI-compatible routes the engine's client (package gateway) speaks:
// GET /health, GET /v1/models, POST /v1/chat/completions,
// POST /v1/tools/web_search and the /admin profile routes.
//
// The same Gateway value runs as a server (forge-lsp gateway serve) and
// in-process: Transport hands the engine's client an http.RoundTripper that
// calls the handler directly, so a run with --gateway-config reaches the
// endpoints without a second process and with the same catalog, routing and
// errors.
//
// Credentials are Secret values: they format, log and marshal as
// [REDACTED], and Expose is the one way to the plain text.
package gatewayd

import "github.com/forge-lsp/forge-lsp/engine/gateway"

// OpenFile loads a gateway file for an in-process client: a
// gateway.FileOpener, passed explicitly by the host that resolves the
// gateway settings (engine/session).
func OpenFile(path string, lookup gateway.LookupFunc) (gateway.Config, error) {
	c, err := LoadInProcess(path, lookup)
	if err != nil {
		return gateway.Config{}, err
	}
	g, err := New(c, Options{Env: lookup})
	if err != nil {
		return gateway.Config{}, err
	}
	cfg := g.ClientConfig()
	cfg.Source = "--gateway-config " + path
	return cfg, nil
}
