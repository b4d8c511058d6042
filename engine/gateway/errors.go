package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ErrKind classifies a gateway failure (docs/language.md#errors, Completion).
type ErrKind int

const (
	// KindConfig is a missing or invalid configuration (env vars, URL).
	KindConfig ErrKind = iota
	// KindTransport is a network failure or a timeout (retryable).
	KindTransport
	// KindBackend is a non-2xx status (retryable when >= 500).
	KindBackend
	// KindMalformed is a body that breaks the wire contract (retryable).
	KindMalformed
	// KindCancelled is a request stopped by the caller's context.
	KindCancelled
	// KindReplay is a divergence between a run and its cassette.
	KindReplay
)

func (k ErrKind) String() string {
	switch k {
	case KindConfig:
		return "Config"
	case KindTransport:
		return "Transport"
	case KindBackend:
		return "Backend"
	case KindMalformed:
		return "MalformedResponse"
	case KindCancelled:
		return "Cancelled"
	case KindReplay:
		return "Replay"
	}
	return "Unknown"
}

// Error is every error this package returns. Its text never contains the
// API key.
type Error struct {
	Kind ErrKind
	// Status is the HTTP status for KindBackend.
	Status int
	// Timeout is true when a transport failure was a deadline.
	Timeout bool
	// Msg is the user-facing text.
	Msg string
	// Divergence details a KindReplay failure where the run sent a request
	// the cassette does not hold; nil otherwise.
	Divergence *Divergence
	// body is the truncated, escaped error body (Backend only).
	body string
	// said is the message of the error body, for the text (Backend only).
	said string
	err  error
}

func (e *Error) Error() string { return e.Msg }

// Divergence is where a replayed run left its recording: the request it
// sent and the nearest unused recorded request of the same endpoint
// (Recorded is "" when the cassette holds none). Both bodies are compact
// JSON with the envelope nonce blanked.
type Divergence struct {
	// Request is the 1-based number of the request within the replay.
	Request          int
	Method, Endpoint string
	Recorded, Sent   string
}

// Unwrap exposes the cause (already redacted when it carries text).
func (e *Error) Unwrap() error { return e.err }

// Body returns the truncated, control-escaped body of a backend error.
func (e *Error) Body() string { return e.body }

// RunKind is the run-level error kind (docs/language.md#errors): "Cancelled" for a
// cancelled request, "Completion" otherwise.
func (e *Error) RunKind() string {
	if e.Kind == KindCancelled {
		return "Cancelled"
	}
	return "Completion"
}

// Retryable reports transport failures, malformed responses, 429 Too
// Many Requests and 5xx.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindTransport, KindMalformed:
		return true
	case KindBackend:
		return e.Status >= 500 || e.Status == 429
	}
	return false
}

// IsConfig reports whether err is a configuration error (for example no
// gateway configured).
func IsConfig(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == KindConfig
}

func malformed(format string, a ...any) *Error {
	return &Error{Kind: KindMalformed, Msg: "malformed gateway response: " + fmt.Sprintf(format, a...)}
}

// Redact replaces every occurrence of key in s with [REDACTED]. It is for
// texts made from a response to be shown (error texts, logs): keys shorter
// than 4 bytes are still redacted there, as a false positive only hides
// text and a miss leaks a secret. Responses themselves go through
// redactEcho after they are parsed.
func Redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

// minEchoKey is the shortest key looked for inside response values. A
// shorter key cannot be told from ordinary text ("k" is in "fake-model"):
// replacing it would change what the gateway said, and such a key is no
// secret worth the damage.
const minEchoKey = 8

// redactEcho removes a key the gateway echoed inside one parsed response
// value (reply text, tool arguments, a search result, a cassette entry),
// so that it does not travel on into the conversation or a file.
func redactEcho(s, key string) string {
	if len(key) < minEchoKey {
		return s
	}
	return Redact(s, key)
}

// escapeBody truncates an error body to MaxErrorBody bytes (on a rune
// boundary) and escapes control characters so it is safe in one log line.
func escapeBody(b []byte) string {
	s := string(b)
	if len(s) > MaxErrorBody {
		cut := MaxErrorBody
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	var sb strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&sb, "\\x%02x", r)
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// maxErrorMessage bounds the body text quoted in a backend error's message
// (bytes); the whole truncated body stays available through Error.Body.
const maxErrorMessage = 300

// backendMsg is the text of a non-2xx response: who failed, the status
// with its reason phrase, then what the gateway said (see said), e.g.
// "gateway: 429 Too Many Requests: rate limit reached".
func backendMsg(name string, status int, said string) string {
	if said == "" {
		return fmt.Sprintf("%s: %s", name, statusText(status))
	}
	return fmt.Sprintf("%s: %s: %s", name, statusText(status), said)
}

// endpointName names who failed in a backend error: "gateway" for chat
// completions, "gateway <endpoint>" for the other endpoints.
func endpointName(endpoint string) string {
	if endpoint == chatEndpoint {
		return "gateway"
	}
	return "gateway " + endpoint
}

// said is what an error body says, for one line of text: the OpenAI wire
// error's message ({"error":{"message":...}}, or "error"/"message" as a
// string), else the body's first line; key redacted, clipped, control
// characters escaped.
func said(body []byte, key string) string {
	return escapeBody([]byte(clip(Redact(strings.TrimSpace(errorMessage(body)), key), maxErrorMessage)))
}

// errorMessage extracts the human-readable message of an error body.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var str string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			return str
		case v.Message != "":
			return v.Message
		case inner.Type != "":
			return inner.Type
		}
		// JSON without a message: quoting it raw would only be noise.
		return ""
	}
	s := string(body)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// statusText is "429 Too Many Requests", or the bare number for a status
// without a reason phrase.
func statusText(status int) string {
	if reason := http.StatusText(status); reason != "" {
		return strconv.Itoa(status) + " " + reason
	}
	return strconv.Itoa(status)
}
