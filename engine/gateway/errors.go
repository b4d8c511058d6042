package gateway

import (
	"errors"
	"fmt"
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

// Retryable reports transport failures, malformed responses and 5xx.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindTransport, KindMalformed:
		return true
	case KindBackend:
		return e.Status >= 500
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
