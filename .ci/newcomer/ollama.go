// Command ollama is a scripted stand-in for a local Ollama server, for
// .ci/newcomer.sh: it speaks only what a plain OpenAI-compatible server
// speaks, GET /v1/models (id, object, created, owned_by: no description,
// no context size) and POST /v1/chat/completions, for the one model it
// knows. Every answer is a short paragraph naming the last user message's
// first words. It listens on 127.0.0.1 at a free port and writes the
// address to the file named by its only argument once it accepts
// connections.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const model = "qwen2.5:7b"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ollama ADDR-FILE")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"object": "list", "data": []map[string]any{
			{"id": model, "object": "model", "created": 1730000000, "owned_by": "library"}}})
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "invalid JSON: " + err.Error()}})
			return
		}
		if req.Model != model {
			writeJSON(w, 404, map[string]any{"error": map[string]any{"message": fmt.Sprintf("model %q not found, try pulling it first", req.Model)}})
			return
		}
		last := ""
		for _, m := range req.Messages {
			if s, ok := m.Content.(string); ok && m.Role == "user" {
				last = s
			}
		}
		words := strings.Fields(last)
		words = words[:min(len(words), 6)]
		text := "A short paragraph about: " + strings.Join(words, " ") + "."
		writeJSON(w, 200, map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
		})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r) // Ollama answers 404 to anything else
	})
	// The address file appears only once the listener accepts, so the
	// script waits for the file, not for a fixed time.
	if err := os.WriteFile(os.Args[1]+".tmp", []byte(l.Addr().String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Rename(os.Args[1]+".tmp", os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, http.Serve(l, mux))
	os.Exit(1)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
