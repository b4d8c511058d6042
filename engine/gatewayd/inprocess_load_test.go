package gatewayd

import (
	"context"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// TestInProcessIgnoresServer: a gateway file served in-process needs no
// [server] table, and one whose variables are unset does not stop it;
// `gateway serve` still requires them.
func TestInProcessIgnoresServer(t *testing.T) {
	b := newBackend(t)
	dir := t.TempDir()
	text := strings.Replace(fileFor(b.URL, ""), `bind = "127.0.0.1:0"
api_key = "`+serverKey+`"`, `bind = "${FORGE_TEST_UNSET_BIND}"
api_key = "${FORGE_TEST_UNSET_KEY}"`, 1)
	path := write(t, dir, "gw.toml", text)
	if _, err := Load(path, noEnv); err == nil || !strings.Contains(err.Error(), "FORGE_TEST_UNSET_") {
		t.Fatalf("served: %v", err)
	}
	for name, file := range map[string]string{"unset variables": path, "no [server]": write(t, dir, "bare.toml", fileFor(b.URL, "")[strings.Index(fileFor(b.URL, ""), "[[endpoint]]"):])} {
		cfg, err := gateway.FromLookup(func(k string) (string, bool) { return file, k == gateway.EnvConfig }, OpenFile)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := gateway.New(cfg).Models(context.Background()); err != nil {
			t.Errorf("%s: models: %v", name, err)
		}
	}
}
