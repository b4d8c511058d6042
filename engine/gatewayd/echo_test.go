package gatewayd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSuccessEchoRedacted: an endpoint that echoes its key in a
// successful answer does not hand it to the gateway's clients.
func TestSuccessEchoRedacted(t *testing.T) {
	b := newBackend(t)
	b.reply = func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"your key is ` + backendKey + `"}}]}`))
	}
	g := open(t, fileFor(b.URL, ""))
	code, resp, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, `{"model":"fast","messages":[{"role":"user","content":"echo"}]}`)
	b2, _ := json.Marshal(resp)
	out := string(b2)
	if code != 200 || strings.Contains(out, backendKey) || !strings.Contains(out, "your key is [REDACTED]") {
		t.Fatalf("%d %s", code, out)
	}
}
