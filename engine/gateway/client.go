package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client talks to one gateway, live or through a cassette. It is safe for
// concurrent use (fanout arms share one client).
type Client struct {
	cfg Config
	hc  *http.Client
	// Log, when set, receives one line per exchange. Lines never contain
	// the key.
	Log func(line string)
	// closer flushes a recording cassette.
	closer io.Closer
	// rec is the recording cassette (also set on WithLimits copies).
	rec *recorder
	// replay is set for an offline client.
	replay *replayer
	// retake is set for a client that re-runs from a tape (tape.go);
	// tape, on a retake's live client, records its exchanges.
	retake *retake
	tape   *Tape
}

// New returns a live client for cfg. Zero limits get the defaults
// of docs/language.md#limits.
func New(cfg Config) *Client {
	if cfg.ChatTimeout <= 0 {
		cfg.ChatTimeout = DefaultChatTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	var rt http.RoundTripper = transport()
	if cfg.Transport != nil {
		rt = cfg.Transport
	}
	return &Client{cfg: cfg, hc: &http.Client{Transport: rt, CheckRedirect: sameOrigin}}
}

// sameOrigin follows a gateway's redirects only within its own scheme and
// host: a 307 or 308 re-sends the request body (the whole prompt) to the
// new location, and a gateway must not be able to send it elsewhere.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refusing to follow a redirect to another host (%s://%s)", req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// transport is shared by all clients. Fanout runs 8 arms at once (more
// with a raised limit), and the default of 2 idle connections per host
// would close and redial most connections on every wave.
// It is made on first use, not at process start.
var transport = sync.OnceValue(func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
})

// WithLimits returns a client that shares c's connection pool, cassette
// and replay state but uses the given chat timeout and response cap (zero
// keeps c's value). A run applies its limits to a host-supplied client
// this way (docs/language.md#run-entry); Close the original, not the copy.
func (c *Client) WithLimits(chatTimeout time.Duration, maxResponse int64) *Client {
	cp := *c
	if chatTimeout > 0 {
		cp.cfg.ChatTimeout = chatTimeout
	}
	if maxResponse > 0 {
		cp.cfg.MaxResponseBytes = maxResponse
	}
	cp.closer = nil
	cp.rec = c.recorder()
	return &cp
}

func (c *Client) recorder() *recorder {
	if c.rec != nil {
		return c.rec
	}
	if r, ok := c.closer.(*recorder); ok {
		return r
	}
	return nil
}

// Config returns the client's configuration (the key is inside; print it
// only through Config.String).
func (c *Client) Config() Config { return c.cfg }

// Close flushes and closes a recording cassette; for other clients it does
// nothing. For a replaying client it reports recorded exchanges the run
// never asked for.
func (c *Client) Close() error {
	if c.closer != nil {
		return c.closer.Close()
	}
	if c.replay != nil {
		return c.replay.unused()
	}
	return nil
}

// chatEndpoint is the chat completions endpoint, relative to the base URL.
const chatEndpoint = "chat/completions"

// Complete sends one chat completion and validates the reply
// (docs/language.md#gateway). A reply with no tool calls and blank content is returned as is:
// the dispatch loop decides between a clean exit and EmptyModelReply.

func (c *Client) Complete(ctx context.Context, req *Request) (*Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &Error{Kind: KindMalformed, Msg: "cannot encode chat request: " + err.Error()}
	}
	raw, err := c.do(withText(ctx, req.OnText), http.MethodPost, chatEndpoint, body, c.cfg.ChatTimeout, c.cfg.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	resp, err := decodeResponse(raw)
	if err != nil {
		return nil, c.whereErr(err, chatEndpoint)
	}
	// A gateway that echoes the key must not carry it into the model
	// conversation, tool results or events.
	key := c.cfg.APIKey
	resp.Content = redactEcho(resp.Content, key)
	resp.Reasoning = redactEcho(resp.Reasoning, key)
	for i := range resp.ToolCalls {
		resp.ToolCalls[i].Function.Arguments = redactEcho(resp.ToolCalls[i].Function.Arguments, key)
	}
	return resp, nil
}

// Models fetches the catalog (docs/language.md#model-catalog).
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	raw, err := c.do(ctx, http.MethodGet, "models", nil, DefaultCatalogTimeout, MaxCatalogBytes)
	if err != nil {
		return nil, err
	}
	ms, err := decodeCatalog(raw)
	if err != nil {
		return nil, c.whereErr(err, "models")
	}
	return ms, nil
}

// whereErr adds the URL to a malformed-response error.
func (c *Client) whereErr(err error, endpoint string) error {
	var ge *Error
	if errors.As(err, &ge) && ge.Kind == KindMalformed && c.replay == nil {
		c.where(ge, endpoint)
	}
	return err
}

// WebSearch posts an already validated, wire-named body to
// {base}/tools/web_search (docs/language.md#web-search) and returns the raw response body.
func (c *Client) WebSearch(ctx context.Context, body []byte) ([]byte, error) {
	raw, err := c.do(ctx, http.MethodPost, "tools/web_search", body, DefaultSearchTimeout, MaxSearchResponseBytes)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.Kind == KindBackend {
			ge.Msg = backendMsg("web_search: gateway", ge.Status, ge.said)
		}
		return nil, err
	}
	return []byte(redactEcho(string(raw), c.cfg.APIKey)), nil
}

func (c *Client) logf(format string, a ...any) {
	if c.Log != nil {
		c.Log(Redact(fmt.Sprintf(format, a...), c.cfg.APIKey))
	}
}

// do performs one exchange with a timeout and a response cap.
func (c *Client) do(ctx context.Context, method, endpoint string, body []byte, timeout time.Duration, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Kind: KindCancelled, Msg: "gateway request cancelled", err: err}
	}
	if c.replay != nil {
		status, resp, err := c.replay.serve(method, endpoint, body)
		if err != nil {
			return nil, err
		}
		return c.finish(endpoint, status, resp, limit)
	}
	if c.retake != nil {
		return c.retake.do(ctx, c, method, endpoint, body, timeout, limit)
	}
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		status, resp, retryAfter, err := c.send(ctx, method, endpoint, body, timeout, limit)
		if err != nil {
			return nil, err
		}
		if (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && attempt < c.cfg.Retries {
			wait := retryAfter
			if wait < 0 {
				wait = firstBackoff << attempt
			}
			if waited+wait <= c.cfg.MaxRetryWait {
				c.logf("gateway %s %s -> %d; retrying in %s (%d of %d)", method, endpoint, status, wait, attempt+1, c.cfg.Retries)
				if err := c.sleep(ctx, wait); err != nil {
					return nil, &Error{Kind: KindCancelled, Msg: "gateway request cancelled", err: err}
				}
				waited += wait
				continue
			}
			c.logf("gateway %s %s -> %d; Retry-After %s exceeds the %s of retry wait left", method, endpoint, status, wait, c.cfg.MaxRetryWait-waited)
		}
		if rec := c.recorder(); rec != nil {
			// Only the answer the run goes on with is recorded: a replay
			// never waits or retries.
			rec.record(method, endpoint, body, status, resp)
		}
		if c.tape != nil {
			c.tape.add(method, endpoint, body, status, resp)
		}
		out, err := c.finish(endpoint, status, resp, limit)
		if err != nil && attempt > 0 {
			var ge *Error
			if errors.As(err, &ge) {
				ge.Msg += fmt.Sprintf(" (after %d retries, %s waited)", attempt, waited.Round(time.Millisecond))
			}
		}
		return out, err
	}
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send performs one HTTP exchange. retryAfter is the response's
// Retry-After as a duration, or -1 when it has none.
func (c *Client) send(ctx context.Context, method, endpoint string, body []byte, timeout time.Duration, limit int64) (status int, resp []byte, retryAfter time.Duration, err error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	onText := textOf(ctx)
	if endpoint != chatEndpoint {
		onText = nil
	}
	wire := body
	if onText != nil {
		wire = streamBody(body)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(wire)
	}
	hreq, err := http.NewRequestWithContext(rctx, method, c.cfg.BaseURL+"/"+endpoint, rd)
	if err != nil {
		return 0, nil, -1, &Error{Kind: KindConfig, Msg: Redact("cannot build gateway request: "+err.Error(), c.cfg.APIKey)}
	}
	hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	hreq.Header.Set("Accept", "application/json")
	if onText != nil {
		hreq.Header.Set("Accept", "text/event-stream, application/json")
	}
	// The run's trace context, when OpenTelemetry export is on
	// (docs/observability.md): a served gateway's spans join the run's
	// trace. Without it the global propagator writes nothing.
	otel.GetTextMapPropagator().Inject(rctx, propagation.HeaderCarrier(hreq.Header))
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return 0, nil, -1, c.transportErr(ctx, rctx, endpoint, err, timeout)
	}
	defer hresp.Body.Close()
	if onText != nil && hresp.StatusCode/100 == 2 && strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		body, errBody, err := assemble(hresp.Body, limit, onText)
		switch {
		case err != nil && (ctx.Err() != nil || rctx.Err() != nil):
			return 0, nil, -1, c.transportErr(ctx, rctx, endpoint, err, timeout)
		case err != nil:
			return 0, nil, -1, c.where(malformed("%s: %v", endpoint, err), endpoint)
		case errBody != nil:
			c.logf("gateway %s %s -> error event in the stream (%s)", method, endpoint, time.Since(start).Round(time.Millisecond))
			return http.StatusBadGateway, errBody, -1, nil
		}
		c.logf("gateway %s %s -> %d (streamed, %d bytes assembled, %s)", method, endpoint, hresp.StatusCode, len(body), time.Since(start).Round(time.Millisecond))
		return hresp.StatusCode, body, -1, nil
	}
	if hresp.StatusCode/100 == 2 {
		resp, err = io.ReadAll(io.LimitReader(hresp.Body, limit+1))
	} else {
		resp, err = io.ReadAll(io.LimitReader(hresp.Body, MaxErrorBody+1))
	}
	if err != nil {
		if hresp.StatusCode/100 != 2 {
			return 0, nil, -1, &Error{Kind: KindBackend, Status: hresp.StatusCode, Msg: c.explainStatus(method, endpoint, hresp.StatusCode, backendMsg(endpointName(endpoint), hresp.StatusCode, "(body unreadable)"), "")}
		}
		return 0, nil, -1, c.transportErr(ctx, rctx, endpoint, err, timeout)
	}
	c.logf("gateway %s %s -> %d (%d bytes, %s)", method, endpoint, hresp.StatusCode, len(resp), time.Since(start).Round(time.Millisecond))
	return hresp.StatusCode, resp, parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()), nil
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP
// date. It returns -1 when the header is absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return -1
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

func (c *Client) finish(endpoint string, status int, resp []byte, limit int64) ([]byte, error) {
	if status/100 != 2 {
		b := Redact(escapeBody(resp), c.cfg.APIKey)
		m := said(resp, c.cfg.APIKey)
		return nil, &Error{Kind: KindBackend, Status: status, Msg: c.explainStatus(methodOf(endpoint), endpoint, status, backendMsg(endpointName(endpoint), status, m), m), body: b, said: m}
	}
	if int64(len(resp)) > limit {
		return nil, c.where(malformed("%s response exceeds the %d-byte cap", endpoint, limit), endpoint)
	}
	// The body is parsed as the gateway sent it: replacing the key in the
	// raw bytes corrupted responses when the key is short. A key the
	// gateway echoes is removed from the parsed values instead (Complete,
	// WebSearch).
	return resp, nil
}

func (c *Client) transportErr(ctx, rctx context.Context, endpoint string, err error, timeout time.Duration) error {
	if ctx.Err() != nil {
		return &Error{Kind: KindCancelled, Msg: "gateway request cancelled", err: ctx.Err()}
	}
	u := c.urlOf(endpoint)
	if c.inProcess() && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: KindTransport, Timeout: true, Msg: fmt.Sprintf("%s: %s got no answer within %s from the model's endpoint: is the backend overloaded, or the model still loading? Retry, or raise the timeout", c.cfg.Source, endpoint, timeout), err: err}
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: KindTransport, Timeout: true, Msg: fmt.Sprintf("gateway %s timed out after %s (%s %s): the server did not answer in time; is it overloaded, or is the model still loading? Retry, or raise the timeout", endpoint, timeout, methodOf(endpoint), u), err: err}
	}
	host := c.cfg.BaseURL
	if pu, perr := url.Parse(c.cfg.BaseURL); perr == nil {
		host = pu.Host
	}
	cause, fix := NetCause(err, host)
	msg := fmt.Sprintf("gateway %s: cannot reach %s: %s", endpoint, u, cause)
	if fix != "" {
		msg += "; " + fix + " (the URL is from " + c.source() + ")"
	}
	return &Error{Kind: KindTransport, Msg: Redact(msg, c.cfg.APIKey), err: err}
}

// methodOf is the HTTP method the client uses for endpoint.
func methodOf(endpoint string) string {
	if endpoint == "models" {
		return http.MethodGet
	}
	return http.MethodPost
}

// explainStatus completes a backend error's message: the URL it came
// from and the likely fix. For a gateway file served in-process, the
// message is what the file's endpoint answered, which names the backend
// itself; the in-process URL would name nothing.
func (c *Client) explainStatus(method, endpoint string, status int, msg, said string) string {
	if c.inProcess() {
		if said == "" {
			said = statusText(status)
		}
		return Redact(c.cfg.Source+": "+said, c.cfg.APIKey)
	}
	msg += fmt.Sprintf(" (%s %s)", method, c.urlOf(endpoint))
	if fix := statusFix(status, c.cfg.BaseURL, c.source()); fix != "" {
		msg += "; " + fix
	}
	return Redact(msg, c.cfg.APIKey)
}

// where adds the URL of endpoint to a malformed-response error.
func (c *Client) where(e *Error, endpoint string) *Error {
	if !c.inProcess() {
		e.Msg += fmt.Sprintf(" (%s %s); is %s an OpenAI-compatible API root?", methodOf(endpoint), c.urlOf(endpoint), c.cfg.BaseURL)
	}
	e.Msg = Redact(e.Msg, c.cfg.APIKey)
	return e
}
