// Package gatewaytest runs a real HTTP gateway for tests: an httptest
// server that speaks the chat-completions wire format (docs/language.md#gateway),
// serves GET /v1/models and POST /v1/tools/web_search, and checks the
// bearer key. Tests script its replies; the engine talks to it over
// loopback exactly as it would to a production gateway, so nothing of the
// engine is mocked.
package gatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// Reply is one scripted chat completion.
type Reply struct {
	// Content is the message text; nil sends "content": null.
	Content *string
	// ToolCalls become message.tool_calls.
	ToolCalls []gateway.ToolCall
	// FinishReason is sent when non-empty.
	FinishReason string
	// Reasoning is sent as reasoning_content when non-empty.
	Reasoning string
	// Status, when non-zero and not 200, sends RawBody with that status.
	Status int
	// RawBody replaces the generated body when non-empty.
	RawBody string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Usage, when set, is sent as the reply's token usage.
	Usage *gateway.Usage
}

// Text is a reply with content s and finish reason "stop".
func Text(s string) Reply { return Reply{Content: &s, FinishReason: "stop"} }

// Calls is a tool-call turn. Each call is name plus JSON arguments; ids are
// c1, c2, ... within the turn.
func Calls(nameArgs ...string) Reply {
	r := Reply{FinishReason: "tool_calls"}
	for i := 0; i+1 < len(nameArgs); i += 2 {
		r.ToolCalls = append(r.ToolCalls, gateway.ToolCall{ID: fmt.Sprintf("c%d", i/2+1), Type: "function",
			Function: gateway.FunctionCall{Name: nameArgs[i], Arguments: nameArgs[i+1]}})
	}
	return r
}

// Exchange is one request the server received.
type Exchange struct {
	Method, Path string
	// Auth is the Authorization header as received.
	Auth string
	Body []byte
	// Chat is the decoded body for chat completions.
	Chat *gateway.Request
}

// Server is a scripted gateway.
type Server struct {
	*httptest.Server
	// Key is the bearer key the server accepts.
	Key string
	// Catalog is served by GET /v1/models.
	Catalog []gateway.Model
	// Plain makes GET /v1/models answer as a plain OpenAI-compatible
	// server (OpenAI, vLLM, Ollama): id, object, created and owned_by
	// only, no description or context.
	Plain bool
	// Latency delays every chat completion (for fanout benchmarks).
	Latency time.Duration
	// Script answers a chat request when the queue is empty. It may be
	// called concurrently.
	Script func(req *gateway.Request) Reply
	// Search answers POST /v1/tools/web_search with a status and body;
	// nil means 404 (tool not configured), as the real gateway does.
	Search func(body map[string]any) (int, string)

	mu       sync.Mutex
	queue    []Reply
	received []Exchange
}

// New starts a server accepting key. It is closed when the test ends.
func New(tb testing.TB, key string) *Server {
	s := &Server{Key: key, Catalog: []gateway.Model{{ID: "test-model", Description: "A general assistant model for tests", Context: 8192, Thinking: "never", ToolDialect: "openai"}}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	tb.Cleanup(s.Close)
	return s
}

// BaseURL is the API root including /v1.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Config is a gateway.Config for this server.
func (s *Server) Config() gateway.Config { return gateway.Config{BaseURL: s.BaseURL(), APIKey: s.Key} }

// Enqueue appends replies served in order before Script is consulted.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, r...)
	s.mu.Unlock()
}

// Received returns a copy of every request so far.
func (s *Server) Received() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.received...)
}

// ChatRequests returns the decoded chat completion requests so far.
func (s *Server) ChatRequests() []*gateway.Request {
	var out []*gateway.Request
	for _, e := range s.Received() {
		if e.Chat != nil {
			out = append(out, e.Chat)
		}
	}
	return out
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"code":%q}}`, msg, code, code)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ex := Exchange{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body}
	if r.URL.Path == "/v1/chat/completions" {
		var req gateway.Request
		if json.Unmarshal(body, &req) == nil {
			ex.Chat = &req
		}
	}
	s.mu.Lock()
	s.received = append(s.received, ex)
	s.mu.Unlock()
	if ex.Auth != "Bearer "+s.Key {
		writeErr(w, 401, "unauthorized", "missing or invalid bearer token")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		type entry struct {
			gateway.Model
			Object string `json:"object"`
		}
		var data []any
		for _, m := range s.Catalog {
			if s.Plain {
				data = append(data, map[string]any{"id": m.ID, "object": "model", "created": 1721172741, "owned_by": "system"})
				continue
			}
			data = append(data, entry{m, "model"})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tools/web_search":
		if s.Search == nil {
			writeErr(w, 404, "not_found", "web_search is not configured")
			return
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			writeErr(w, 400, "malformed_request", "body is not a JSON object")
			return
		}
		st, b := s.Search(m)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		io.WriteString(w, b)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		if ex.Chat == nil || ex.Chat.Model == "" || len(ex.Chat.Messages) == 0 {
			writeErr(w, 400, "malformed_request", "model and messages are required")
			return
		}
		if s.Latency > 0 {
			time.Sleep(s.Latency)
		}
		s.mu.Lock()
		var rep Reply
		if len(s.queue) > 0 {
			rep, s.queue = s.queue[0], s.queue[1:]
			s.mu.Unlock()
		} else {
			s.mu.Unlock()
			if s.Script == nil {
				writeErr(w, 500, "upstream_error", "test server has no scripted reply left")
				return
			}
			rep = s.Script(ex.Chat)
		}
		writeReply(w, ex.Chat.Model, rep)
	default:
		writeErr(w, 404, "not_found", "no route "+r.Method+" "+r.URL.Path)
	}
}

func writeReply(w http.ResponseWriter, model string, rep Reply) {
	w.Header().Set("Content-Type", "application/json")
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Status != 0 && rep.Status != 200 {
		w.WriteHeader(rep.Status)
		io.WriteString(w, rep.RawBody)
		return
	}
	if rep.RawBody != "" {
		io.WriteString(w, rep.RawBody)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if rep.Content != nil {
		msg["content"] = *rep.Content
	}
	if len(rep.ToolCalls) > 0 {
		msg["tool_calls"] = rep.ToolCalls
	}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	choice := map[string]any{"index": 0, "message": msg}
	if rep.FinishReason != "" {
		choice["finish_reason"] = rep.FinishReason
	}
	body := map[string]any{"id": "cmpl-test", "object": "chat.completion", "model": model, "choices": []any{choice}}
	if rep.Usage != nil {
		body["usage"] = rep.Usage
	}
	json.NewEncoder(w).Encode(body)
}

// LastUserContent returns the content of the last user message of req.
func LastUserContent(req *gateway.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// HasToolResult reports whether req's last message is a tool result.
func HasToolResult(req *gateway.Request) bool {
	n := len(req.Messages)
	return n > 0 && req.Messages[n-1].Role == "tool"
}

// Contains reports whether any received request body contains sub.
func (s *Server) Contains(sub string) bool {
	for _, e := range s.Received() {
		if strings.Contains(string(e.Body), sub) || strings.Contains(e.Path, sub) {
			return true
		}
	}
	return false
}
