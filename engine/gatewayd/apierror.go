package gatewayd

// The gateway's error answers: the OpenAI error body, with a code and a
// message that names what failed and how to fix it (docs/gateway.md#errors).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// apiError is an error in the OpenAI envelope with upstream's status,
// type and code (docs/gateway.md#errors).
type apiError struct {
	status      int
	typ, code   string
	msg         string
	retryAfter  string
	contentType string
}

func errUnauthorized() *apiError {
	return &apiError{status: 401, typ: "authentication_error", code: "unauthorized", msg: "unauthorized"}
}
func errUnknownModel(name string) *apiError {
	return &apiError{status: 404, typ: "invalid_request_error", code: "model_not_found", msg: "unknown model " + name}
}
func errNotConfigured(tool string) *apiError {
	return &apiError{status: 404, typ: "invalid_request_error", code: "not_found", msg: "tool not configured: " + tool}
}
func errMalformed(format string, a ...any) *apiError {
	return &apiError{status: 400, typ: "invalid_request_error", code: "malformed_request", msg: "malformed request: " + fmt.Sprintf(format, a...)}
}
func errTransport(what string) *apiError {
	return &apiError{status: 502, typ: "server_error", code: "upstream_transport", msg: what + "upstream transport error"}
}

// errReach is a backend that could not be reached: the network cause and
// the likely fix (docs/gateway.md#errors).
func errReach(what, rawURL string, err error, timeout time.Duration) *apiError {
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil {
		host = u.Host
	}
	var cause, fix string
	if errors.Is(err, context.DeadlineExceeded) {
		cause, fix = fmt.Sprintf("no answer within %s", timeout), "is the backend overloaded, or the model still loading?"
	} else {
		cause, fix = gateway.NetCause(err, host)
	}
	msg := what + "cannot reach the backend: " + cause
	if fix != "" {
		msg += "; " + fix
	}
	return &apiError{status: 502, typ: "server_error", code: "upstream_transport", msg: msg}
}
func errProtocol(what, why string) *apiError {
	return &apiError{status: 502, typ: "server_error", code: "upstream_protocol", msg: what + "upstream protocol error: " + why}
}

// errStatus classifies a backend's non-2xx status: a 4xx keeps its status
// (upstream_client_error), anything else is 502 upstream_error.
func errStatus(what string, status int, said string) *apiError {
	msg := fmt.Sprintf("%supstream returned %d", what, status)
	if said != "" {
		msg += ": " + said
	}
	if status >= 400 && status < 500 {
		return &apiError{status: status, typ: "invalid_request_error", code: "upstream_client_error", msg: msg}
	}
	if status >= 500 {
		msg += "; the backend failed: its log (or the message above) says why; retry later"
	}
	return &apiError{status: 502, typ: "server_error", code: "upstream_error", msg: msg}
}
func errQueue() *apiError {
	return &apiError{status: 503, typ: "server_error", code: "queue_full", msg: "queue full"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"error":{"message":"cannot encode the response","type":"server_error","code":"internal"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	w.Write(errorBody(e))
}

// errorBody is an error's OpenAI envelope.
func errorBody(e *apiError) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": e.msg, "type": e.typ, "code": e.code}})
	return b
}
