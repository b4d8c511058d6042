package gatewayd

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// TestInProcessStreamsToClient: the engine's client asks for a stream
// (Request.OnText) through a gateway file served in-process; the first
// content delta reaches OnText while the endpoint is still holding the
// rest back (the in-process transport no longer buffers a streamed answer
// whole), and Complete returns the assembled answer: text, tool call,
// finish reason and usage. A recording keeps the request as it is sent
// without streaming and the assembled answer, so a replay matches it.
func TestInProcessStreamsToClient(t *testing.T) {
	first := "data: {\"id\":\"s1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
	rest := "data: {\"id\":\"s1\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
		"data: {\"id\":\"s1\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n" +
		"data: {\"id\":\"s1\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: {\"id\":\"s1\",\"model\":\"gpt-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n" +
		"data: [DONE]\n\n"
	gotFirst := make(chan struct{})
	var sent string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sent = string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-gotFirst:
			io.WriteString(w, rest)
		case <-time.After(20 * time.Second): // failure bound: the client never saw the first delta
		}
	}))
	defer backend.Close()
	g := open(t, fileFor(backend.URL, ""))
	cassette := filepath.Join(t.TempDir(), "c.jsonl")
	c, err := gateway.NewRecording(g.ClientConfig(), cassette)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var deltas []string
	req := &gateway.Request{Model: "fast", Messages: []gateway.Message{{Role: "user", Content: "hi"}}, OnText: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(deltas) == 0 {
			close(gotFirst)
		}
		deltas = append(deltas, s)
	}}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "|") != "Hel|lo" || resp.Content != "Hello" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Function.Name != "f" ||
		resp.ToolCalls[0].Function.Arguments != `{"a":1}` || resp.FinishReason != "tool_calls" || resp.Usage == nil || resp.Usage.TotalTokens != 5 {
		t.Fatalf("deltas %q, response %+v", deltas, resp)
	}
	if !strings.Contains(sent, `"stream":true`) {
		t.Errorf("the endpoint was not asked to stream: %s", sent)
	}
	rec, _ := os.ReadFile(cassette)
	if strings.Contains(string(rec), "stream") || !strings.Contains(string(rec), `Hello`) || strings.Contains(string(rec), "data:") {
		t.Errorf("the cassette should hold the plain request and the assembled answer:\n%s", rec)
	}
	// The recording replays, without a gateway and without streaming.
	r, err := gateway.NewReplay(cassette)
	if err != nil {
		t.Fatal(err)
	}
	req.OnText = nil
	again, err := r.Complete(context.Background(), req)
	if err != nil || again.Content != "Hello" || len(again.ToolCalls) != 1 {
		t.Fatalf("replay: %+v %v", again, err)
	}
}

// TestStreamedErrorEvent: an error event in an endpoint's stream fails
// the engine's request as a backend error with the endpoint's message.
func TestStreamedErrorEvent(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\ndata: {\"error\":{\"message\":\"the model crashed\",\"type\":\"server_error\"}}\n\n")
	}))
	defer backend.Close()
	g := open(t, fileFor(backend.URL, ""))
	c := gateway.New(g.ClientConfig())
	_, err := c.Complete(context.Background(), &gateway.Request{Model: "fast", Messages: []gateway.Message{{Role: "user", Content: "hi"}}, OnText: func(string) {}})
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindBackend || !strings.Contains(err.Error(), "the model crashed") {
		t.Fatalf("%v", err)
	}
}
