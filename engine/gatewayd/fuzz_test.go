package gatewayd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad: any file text loads or fails with a ConfigError; it never
// panics and never echoes the value of a variable.
func FuzzLoad(f *testing.F) {
	f.Add(minimal)
	f.Add(fileFor("http://127.0.0.1:9", "[queue]\nmax_depth = 3\n[tools.web_search]\nprovider = \"brave\"\napi_key = \"k\"\n"))
	f.Add("include = [\"x.toml\"]\n[[model]]\nname = 1\n")
	f.Add("[[endpoint]]\nid = \"a\"\n[[endpoint]]\nid = \"a\"\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "f.toml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Skip()
		}
		_, err := Load(p, envOf("GW_KEY", "VALUE-OF-GW-KEY", "BACKEND_KEY", "VALUE-OF-BACKEND"))
		if err != nil && strings.Contains(err.Error(), "VALUE-OF-") {
			t.Fatalf("error echoes a value: %v", err)
		}
	})
}

// FuzzRequest: any body on the POST routes gets a JSON answer with a
// status of the error table; the handler never panics.
func FuzzRequest(f *testing.F) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`))
	}))
	defer backend.Close()
	c, err := Load(write(f, f.TempDir(), "gw.toml", fileFor(backend.URL, "[tools.web_search]\nprovider = \"brave\"\napi_key = \"k\"\nbase_url = \""+backend.URL+"\"\n")), noEnv)
	if err != nil {
		f.Fatal(err)
	}
	g, _ := New(c, Options{})
	f.Add("/v1/chat/completions", chatFast)
	f.Add("/v1/chat/completions", `{"model":"fast","messages":[{"role":"tool","tool_calls":[]}],"x":1}`)
	f.Add("/v1/tools/web_search", `{"query":"q","include_domains":["a.b"],"count":3}`)
	f.Add("/admin/switch-profile", `{"name":"x"}`)
	allowed := map[int]bool{200: true, 400: true, 401: true, 404: true, 405: true, 502: true, 503: true}
	f.Fuzz(func(t *testing.T, path, body string) {
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.URL.Path = path
		req.Header.Set("Authorization", "Bearer "+serverKey)
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if !allowed[rec.Code] || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %q: %d %q", path, body, rec.Code, rec.Body.String())
		}
	})
}
