// Package gateway is the engine's client for an OpenAI-compatible model
// gateway (docs/language.md#gateway): chat completions, the model catalog and the
// gateway-proxied web search. It also records every exchange of a run to a
// cassette file and replays a cassette offline.
//
// The API key never appears in an error, a log line, a trace or a cassette:
// it is only ever written into the Authorization header of a live request,
// and every text that leaves this package passes through Redact.
package gateway

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// Environment variables read by FromEnv.
const (
	EnvURL = "PROMPTFORGE_GATEWAY_URL"
	EnvKey = "PROMPTFORGE_GATEWAY_API_KEY"
	// EnvConfig names a gateway file (docs/gateway.md), served
	// in-process; it wins over EnvURL.
	EnvConfig = "PROMPTFORGE_GATEWAY_CONFIG"
)

// FileOpener turns a gateway file into a Config whose Transport serves it
// in-process. lookup resolves the file's ${VAR} references. The gateway
// that serves files (engine/gatewayd) imports this package, so the host
// passes its opener in explicitly (engine/session does).
type FileOpener func(path string, lookup LookupFunc) (Config, error)

// Limits of docs/language.md#limits. They are variables of Config, these are defaults.
const (
	DefaultChatTimeout      = 120 * time.Second
	DefaultSearchTimeout    = 30 * time.Second
	DefaultCatalogTimeout   = 30 * time.Second
	DefaultMaxResponseBytes = 16 << 20
	MaxSearchResponseBytes  = 256 << 10
	MaxCatalogBytes         = 16 << 20
	// MaxErrorBody is how much of a non-2xx body is kept (bytes).
	MaxErrorBody = 2000
	// DefaultRetries and DefaultMaxRetryWait bound the retries of a
	// request answered 429 Too Many Requests or 503 Service Unavailable
	// (docs/language.md#chat-completions).
	DefaultRetries      = 3
	DefaultMaxRetryWait = 60 * time.Second
	// firstBackoff is the wait before the first retry when the gateway
	// sends no Retry-After; it doubles for each later one.
	firstBackoff = time.Second
)

// Config says where the gateway is and how to talk to it.
type Config struct {
	// BaseURL is the API root including /v1, without a trailing slash.
	BaseURL string
	// APIKey is sent as a bearer token. It is never printed: Config's
	// String and GoString methods hide it.
	APIKey string
	// ChatTimeout bounds one chat completion (default 120 s).
	ChatTimeout time.Duration
	// MaxResponseBytes caps a chat completion body (default 16 MiB).
	MaxResponseBytes int64
	// Transport, when set, carries the requests instead of the network:
	// an in-process gateway (a gateway file, docs/gateway.md) serves
	// them without a socket.
	Transport http.RoundTripper
	// Retries is how many times a request answered 429 or 503 is sent
	// again (default DefaultRetries; negative: never).
	Retries int
	// MaxRetryWait caps the total time one request spends waiting between
	// retries (default DefaultMaxRetryWait). A Retry-After asking for
	// more than what is left fails the request at once.
	MaxRetryWait time.Duration
	// Source says where BaseURL came from, for the fixes error messages
	// suggest: "" is PROMPTFORGE_GATEWAY_URL; an in-process gateway file
	// says "--gateway-config FILE" with its path.
	Source string
}

// String describes the config without the key.
func (c Config) String() string {
	return fmt.Sprintf("gateway %s (key %s)", c.BaseURL, keyHint(c.APIKey))
}

// GoString keeps %#v from printing the key.
func (c Config) GoString() string { return c.String() }

func keyHint(k string) string {
	if k == "" {
		return "unset"
	}
	return "set, redacted"
}

// ErrNoGateway is the message for a run that needs a model but has neither
// a gateway nor a cassette. It names everything the user can set.
const ErrNoGateway = "no model gateway configured: pass a gateway file with --gateway-config FILE or " + EnvConfig +
	" (docs/gateway.md), or set " + EnvURL +
	" (the API root including /v1, e.g. http://localhost:8080/v1) and " + EnvKey +
	", or run offline from a recorded cassette with --replay FILE"

// NoGateway is the error of a run that needs a model and has no gateway
// configured (ErrNoGateway, kind Config).
func NoGateway() error { return &Error{Kind: KindConfig, Msg: ErrNoGateway} }

// LookupFunc reads an environment variable (os.LookupEnv in production).
type LookupFunc func(string) (string, bool)

// FromEnv builds a Config from PROMPTFORGE_GATEWAY_CONFIG (a gateway file,
// served in-process by open), or else PROMPTFORGE_GATEWAY_URL and
// PROMPTFORGE_GATEWAY_API_KEY (docs/language.md#gateway). When none is set the error says
// how to configure a gateway or use --replay (ErrNoGateway). Errors are of
// kind Config and never contain the key.
func FromEnv(open FileOpener) (Config, error) { return FromLookup(os.LookupEnv, open) }

// FromLookup is FromEnv over an arbitrary lookup function (for tests and
// for the language server, which may pass its own environment). A nil
// open refuses a gateway file with an error that says so.
func FromLookup(lookup LookupFunc, open FileOpener) (Config, error) {
	if path, ok := lookup(EnvConfig); ok && strings.TrimSpace(path) != "" {
		if open == nil {
			return Config{}, &Error{Kind: KindConfig, Msg: EnvConfig + " is set but this program cannot serve gateway files"}
		}
		c, err := open(strings.TrimSpace(path), lookup)
		if err != nil {
			return Config{}, &Error{Kind: KindConfig, Msg: "--gateway-config " + withPath(err.Error(), strings.TrimSpace(path)), err: err}
		}
		return c, nil
	}
	rawURL, okURL := lookup(EnvURL)
	key, okKey := lookup(EnvKey)
	if !okURL && !okKey {
		return Config{}, NoGateway()
	}
	if !okURL {
		return Config{}, &Error{Kind: KindConfig, Msg: "missing environment variable: " + EnvURL + " (" + ErrNoGateway + ")"}
	}
	if !utf8.ValidString(rawURL) {
		return Config{}, &Error{Kind: KindConfig, Msg: "environment variable is set but not valid Unicode: " + EnvURL}
	}
	if !okKey {
		return Config{}, &Error{Kind: KindConfig, Msg: "missing environment variable: " + EnvKey}
	}
	if !utf8.ValidString(key) {
		return Config{}, &Error{Kind: KindConfig, Msg: "environment variable is set but not valid Unicode: " + EnvKey}
	}
	// The CLI trims and rejects a blank key; the engine only
	// rejects an empty one. We are both, so a blank key is rejected too.
	if strings.TrimSpace(key) == "" {
		return Config{}, &Error{Kind: KindConfig, Msg: "missing environment variable: " + EnvKey + " must not be empty"}
	}
	base, err := ValidateURL(rawURL)
	if err != nil {
		return Config{}, err
	}
	return Config{BaseURL: base, APIKey: strings.TrimSpace(key)}, nil
}

// ValidateURL checks a gateway API root as docs/language.md#gateway says and returns it
// trimmed, without a trailing slash.
func ValidateURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	bad := func(msg string) (string, error) {
		return "", &Error{Kind: KindConfig, Msg: msg}
	}
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return bad(fmt.Sprintf("gateway URL must use the http or https scheme: %q is not an absolute URL", redactURL(s)))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad(fmt.Sprintf("gateway URL must use the http or https scheme: %q", redactURL(s)))
	}
	if u.User != nil {
		// Never echo the URL here: it holds a password.
		return bad("gateway URL must not embed credentials (user:pass@)")
	}
	if u.Host == "" || u.Hostname() == "" {
		return bad("gateway URL names no host")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return bad("gateway URL must not carry a query or fragment")
	}
	return strings.TrimRight(s, "/"), nil
}

// redactURL drops any userinfo from a URL-ish string before it is printed.
func redactURL(s string) string {
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "[REDACTED]@" + s[i+1:]
		}
		return "[REDACTED]@" + s[i+1:]
	}
	return s
}

// withPath is a gateway file's error as it follows `--gateway-config `:
// starting with the file's path (the loader's errors mostly do).
func withPath(msg, path string) string {
	if strings.HasPrefix(msg, path) {
		return msg
	}
	return path + ": " + msg
}
