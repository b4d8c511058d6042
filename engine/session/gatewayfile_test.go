package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// TestGatewayFile: Gateway.File (or gateway.EnvConfig) is served
// in-process and wins over the URL; a broken file is a setup error of the
// gateway option.
func TestGatewayFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gw.toml")
	os.WriteFile(p, []byte("[[endpoint]]\nid = \"e\"\nprotocol = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key = \"\"\n\n"+
		"[[model]]\nname = \"m\"\ndescription = \"a described model\"\ncontext = 10\nupstream = \"u\"\nendpoints = [\"e\"]\n"), 0o600)
	e := env(gateway.EnvURL, "http://env.example/v1", gateway.EnvKey, "k")
	for _, g := range []Gateway{{File: p, URL: "http://given.example/v1"}, {}} {
		lookup := e
		if g.File == "" {
			lookup = env(gateway.EnvURL, "http://env.example/v1", gateway.EnvKey, "k", gateway.EnvConfig, p)
			g.URL = "http://given.example/v1"
		}
		c, err := g.Open(lookup)
		if err != nil || c == nil {
			t.Fatalf("%+v: %v", g, err)
		}
		ms, err := c.Models(context.Background())
		if err != nil || len(ms) != 1 || ms[0].ID != "m" || ms[0].Description != "a described model" {
			t.Fatalf("%+v: catalog %+v %v", g, ms, err)
		}
	}
	_, err := (Gateway{File: p + ".missing"}).Open(e)
	var se *SetupError
	if !errors.As(err, &se) || se.Option != OptGateway || !IsGatewayConfig(err) || !strings.Contains(err.Error(), "gw.toml.missing") {
		t.Fatalf("missing file: %v", err)
	}
}
