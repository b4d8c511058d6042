package lsp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"go.lsp.dev/protocol"
)

// TestRunStreamsAnswer: a run from the editor asks the gateway to stream,
// and the first line of the answer is in the Run output (the transcript's
// window/logMessage) while the gateway still holds the rest back; the
// run's result is the whole answer.
func TestRunStreamsAnswer(t *testing.T) {
	catalog := gatewaytest.New(t, "secret-key")
	catalog.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	u, _ := url.Parse(catalog.BaseURL())
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	firstShown := make(chan struct{})
	streamed := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			proxy.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		streamed <- strings.Contains(string(b), `"stream":true`)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"First line of the answer\\nsec\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstShown:
		case <-time.After(20 * time.Second): // failure bound: the line never reached the editor
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ond line\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c := startServer(t, options{Getenv: func(k string) string {
		if k == "MY_GATEWAY_KEY" {
			return "secret-key"
		}
		return ""
	}})
	c.initialize(map[string]any{"gatewayUrl": srv.URL + "/v1", "apiKeyEnv": "MY_GATEWAY_KEY"})
	uri := "file:///slow.md"
	c.open(uri, modelPrompt)
	from, _ := c.snapshot()
	done := make(chan error, 1)
	var res struct {
		Result string `json:"result"`
	}
	go func() {
		done <- c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "arguments": []any{map[string]any{"uri": uri}}}, &res)
	}()
	if _, _, ok := c.waitFor(len(from), 30*time.Second, func(n note) bool {
		return n.method == protocol.MethodWindowLogMessage && strings.Contains(string(n.params), "First line of the answer")
	}); !ok {
		t.Fatal("the first line of the streamed answer never reached the Run output")
	}
	close(firstShown)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end")
	}
	if !<-streamed {
		t.Error("the request did not ask for a stream")
	}
	if res.Result != "First line of the answer\nsecond line" {
		t.Errorf("result %q", res.Result)
	}
	ns, _ := c.snapshot()
	var out strings.Builder
	for _, n := range ns[len(from):] {
		if n.method == protocol.MethodWindowLogMessage {
			out.Write(n.params)
		}
	}
	if !strings.Contains(out.String(), "second line") || strings.Count(out.String(), `] First line of the answer"`) != 1 {
		t.Errorf("transcript %s", out.String())
	}
}
