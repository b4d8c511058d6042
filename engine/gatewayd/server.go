package gatewayd

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// Limits of the served routes.
const (
	// MaxRequestBytes caps a request body.
	MaxRequestBytes = 16 << 20
	// MaxUpstreamBytes caps a backend's chat completion body, as the
	// engine's client caps the gateway's (docs/language.md#limits).
	MaxUpstreamBytes = gateway.DefaultMaxResponseBytes
	// maxUpstreamError is how much of a backend's error body is read.
	maxUpstreamError = 64 << 10
	// UpstreamTimeout bounds one backend exchange.
	UpstreamTimeout = 120 * time.Second
)

// Gateway serves a gateway file's routes. It is an http.Handler; Transport
// gives the same handler to an in-process client. Safe for concurrent use;
// a profile switch swaps its state atomically.
type Gateway struct {
	state atomic.Pointer[state]
	// profilesDir enables the /admin profile routes ("" disables them).
	profilesDir string
	env         gateway.LookupFunc
	switchMu    sync.Mutex
	hc          *http.Client
	// pool is hc's transport when it is the gateway's own (nil when
	// Options.Transport replaced it); the lean path sends through it.
	pool    *connPool
	timeout time.Duration
	// tracer, when set, records a span per chat request
	// (docs/observability.md#gateway-spans).
	tracer trace.Tracer
	// Log, when set, receives one line per request (never a credential).
	Log func(string)
}

// state is what a profile switch replaces.
type state struct {
	key       Secret
	keyHash   [sha256.Size]byte
	models    []*model
	byName    map[string]*model
	search    *WebSearchConfig
	profile   string
	hasServer bool
}

type model struct {
	cfg ModelConfig
	ep  *endpoint
	// nameJSON and upstreamJSON are the name and upstream name as JSON
	// strings, encoded once per load rather than per request.
	nameJSON, upstreamJSON []byte
	// what prefixes a backend failure's message: the model, the endpoint
	// entry and the URL called (docs/gateway.md#errors).
	what string
}

type endpoint struct {
	cfg  EndpointConfig
	lane *lane
	// chatURL and auth (the Authorization header, nil without a key)
	// are built once per load.
	chatURL string
	auth    []string
	// chatPath is chatURL's path; up is what the lean path needs to send
	// requests itself (nil when it cannot: docs/gateway.md#performance).
	chatPath string
	up       *leanUpstream
	// spellings are the key's spellings redacted from answers.
	spellings [][]byte
}

// Options are New's optional settings.
type Options struct {
	// ProfilesDir enables /admin/profiles and /admin/switch-profile.
	ProfilesDir string
	// Profile is the name of the loaded profile, for /admin/status.
	Profile string
	// Env resolves ${VAR} when switching profiles (nil: the process
	// environment).
	Env gateway.LookupFunc
	// Transport reaches the backends (nil: a pooled transport).
	Transport http.RoundTripper
	// Timeout bounds one backend exchange (0: UpstreamTimeout).
	Timeout time.Duration
	// Tracer, when set, records a span per chat request, joined to the
	// caller's trace by its W3C traceparent; nil records nothing.
	Tracer trace.Tracer
}

// New builds a gateway for a loaded file. A file without [server] gets a
// random bearer, for in-process use only.
func New(c *Config, o Options) (*Gateway, error) {
	g := &Gateway{profilesDir: o.ProfilesDir, env: o.Env, timeout: o.Timeout, tracer: o.Tracer}
	if g.timeout <= 0 {
		g.timeout = UpstreamTimeout
	}
	rt := o.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 1024
		t.MaxIdleConnsPerHost = 256
		g.pool = newConnPool(t)
		rt = g.pool
	}
	// Redirects are not followed: a 3xx must not carry a prompt, or the
	// endpoint's key, to another place.
	g.hc = &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s, err := newState(c, o.Profile)
	if err != nil {
		return nil, err
	}
	g.state.Store(s)
	return g, nil
}

func newState(c *Config, profile string) (*state, error) {
	s := &state{byName: map[string]*model{}, profile: profile, hasServer: c.Server != nil}
	if c.Server != nil {
		s.key = c.Server.APIKey
	} else {
		var b [24]byte
		rand.Read(b[:])
		s.key = NewSecret("in-process-" + hex.EncodeToString(b[:]))
	}
	s.keyHash = sha256.Sum256([]byte(s.key.Expose()))
	devices := map[string]*DeviceConfig{}
	for i := range c.Devices {
		devices[c.Devices[i].ID] = &c.Devices[i]
	}
	eps := map[string]*endpoint{}
	for _, e := range c.Endpoints {
		n := 0
		if e.Concurrency != nil {
			n = *e.Concurrency
		} else if e.Device != nil && devices[*e.Device] != nil && devices[*e.Device].Concurrency != nil {
			n = *devices[*e.Device].Concurrency
		}
		ep := &endpoint{cfg: e, lane: newLane(n, c.Queue), chatURL: e.BaseURL + "/chat/completions"}
		if !e.APIKey.Empty() {
			ep.auth = []string{"Bearer " + e.APIKey.Expose()}
		}
		ep.chatPath = ep.chatURL
		if u, err := url.Parse(ep.chatURL); err == nil {
			ep.chatPath = u.Path
		}
		ep.up = newLeanUpstream(ep)
		ep.spellings = keySpellings(e.APIKey)
		eps[e.ID] = ep
	}
	for _, m := range c.Models {
		ep := eps[m.Endpoints[0]]
		if ep == nil || s.byName[m.Name] != nil {
			return nil, &ConfigError{Msg: "invalid config: model " + m.Name + " (validate the file with Load)"}
		}
		md := &model{cfg: m, ep: ep}
		md.nameJSON, _ = json.Marshal(m.Name)
		md.upstreamJSON, _ = json.Marshal(m.Upstream)
		md.what = fmt.Sprintf("model %q, endpoint %q (POST %s): ", m.Name, ep.cfg.ID, ep.chatURL)
		s.models = append(s.models, md)
		s.byName[m.Name] = md
	}
	if c.Tools != nil {
		s.search = c.Tools.WebSearch
	}
	return s, nil
}

// inProcessBase is the API root an in-process client uses; no socket is
// opened for it.
const inProcessBase = "http://gateway.in-process/v1"

// ClientConfig is a configuration for the engine's client that reaches
// this gateway in-process, through Transport.
func (g *Gateway) ClientConfig() gateway.Config {
	return gateway.Config{BaseURL: inProcessBase, APIKey: g.state.Load().key.Expose(), Transport: g.Transport()}
}

// Transport is an http.RoundTripper that serves each request with the
// gateway's handler, without a socket.
func (g *Gateway) Transport() http.RoundTripper { return inProcess{g} }

func (e *apiError) Error() string { return e.msg }

// ServeHTTP routes a request (docs/gateway.md#routes).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	g.serve(sw, r)
	if g.Log != nil {
		g.Log(logLine(r.Method, r.URL.Path, sw.status, time.Since(start)))
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(c int) {
	if s.status == 0 {
		s.status = c
	}
	s.ResponseWriter.WriteHeader(c)
}

// Unwrap lets http.ResponseController reach the connection's Flush.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = 200
	}
	return s.ResponseWriter.Write(b)
}

type route struct {
	method string
	h      func(*Gateway, http.ResponseWriter, *http.Request, *state) *apiError
}

var routes = map[string]route{
	"/v1/chat/completions":  {http.MethodPost, (*Gateway).chat},
	"/v1/models":            {http.MethodGet, (*Gateway).models},
	"/v1/tools/web_search":  {http.MethodPost, (*Gateway).webSearch},
	"/admin/profiles":       {http.MethodGet, (*Gateway).adminProfiles},
	"/admin/status":         {http.MethodGet, (*Gateway).adminStatus},
	"/admin/switch-profile": {http.MethodPost, (*Gateway).adminSwitch},
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, &apiError{status: 405, typ: "invalid_request_error", code: "method_not_allowed", msg: "GET /health"})
			return
		}
		writeJSON(w, 200, map[string]string{"status": "serving"})
		return
	}
	rt, ok := routes[r.URL.Path]
	if !ok {
		writeError(w, &apiError{status: 404, typ: "invalid_request_error", code: "not_found", msg: "no route " + r.URL.Path})
		return
	}
	s := g.state.Load()
	if !s.authorized(r.Header.Get("Authorization")) {
		writeError(w, errUnauthorized())
		return
	}
	if r.Method != rt.method {
		writeError(w, &apiError{status: 405, typ: "invalid_request_error", code: "method_not_allowed", msg: rt.method + " " + r.URL.Path})
		return
	}
	if e := rt.h(g, w, r, s); e != nil {
		writeError(w, e)
	}
}

// authorized compares the bearer with the key in constant time: both are
// hashed to fixed-length digests first, so neither length nor content
// leaks through timing.
func authorized(header string, key Secret) bool {
	return (&state{key: key, keyHash: sha256.Sum256([]byte(key.Expose()))}).authorized(header)
}

// authorized is authorized with the key's digest computed once per load.
func (s *state) authorized(header string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		got = ""
	}
	a := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(a[:], s.keyHash[:]) == 1 && ok && !s.key.Empty()
}

func readBody(r *http.Request) ([]byte, *apiError) {
	if r.ContentLength > MaxRequestBytes {
		return nil, errMalformed("body exceeds %d bytes", MaxRequestBytes)
	}
	var b []byte
	var err error
	if n := r.ContentLength; n >= 0 {
		// One allocation of the declared size; a body longer than it
		// is cut by the server, a shorter one is an error.
		b = make([]byte, n)
		_, err = io.ReadFull(r.Body, b)
	} else {
		b, err = io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	}
	if err != nil {
		return nil, errMalformed("cannot read the body")
	}
	if len(b) > MaxRequestBytes {
		return nil, errMalformed("body exceeds %d bytes", MaxRequestBytes)
	}
	return b, nil
}

func (g *Gateway) models(w http.ResponseWriter, _ *http.Request, s *state) *apiError {
	type entry struct {
		ID          string  `json:"id"`
		Object      string  `json:"object"`
		Description string  `json:"description"`
		Context     int64   `json:"context"`
		Thinking    string  `json:"thinking"`
		ToolDialect string  `json:"tool_dialect"`
		ToolsMode   string  `json:"tools_mode"`
		PriceInput  float64 `json:"price_input,omitempty"`
		PriceOutput float64 `json:"price_output,omitempty"`
	}
	data := make([]entry, 0, len(s.models))
	for _, m := range s.models {
		data = append(data, entry{m.cfg.Name, "model", m.cfg.Description, m.cfg.Context, m.cfg.Thinking, "openai", "native", m.cfg.PriceInput, m.cfg.PriceOutput})
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
	return nil
}

// chat resolves the model by its exact name, puts the backend's upstream
// name in its place and passes every other byte of the body through; the
// backend's answer goes back with the caller's name in "model". Only the
// fields routing needs are read (docs/gateway.md#serving).
func (g *Gateway) chat(w http.ResponseWriter, r *http.Request, s *state) (e *apiError) {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var req chatRequest
	req, e = parseChat(body)
	if e != nil {
		return e
	}
	m := s.byName[req.name]
	if m == nil {
		return errUnknownModel(req.name)
	}
	var span trace.Span
	if g.tracer != nil {
		var ctx context.Context
		ctx, span = g.startSpan(r, m, req)
		r = r.WithContext(ctx)
		defer func() { endSpan(span, e) }()
	}
	waitStart := time.Now()
	release, err := m.ep.lane.admit(r.Context(), clientLabel(r.Header.Get(ClientHeader)))
	if span != nil {
		span.SetAttributes(attribute.Float64(AttrQueueWait, time.Since(waitStart).Seconds()*1000))
	}
	if err != nil {
		if errors.Is(err, errQueueFull) {
			return errQueue()
		}
		return errTransport("")
	}
	defer release()
	out := &spliced{parts: [3][]byte{body[:req.model.start], m.upstreamJSON, body[req.model.end:]}}
	if req.stream {
		return g.chatStream(w, r, m, out, req.includeUsage)
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.timeout)
	defer cancel()
	resp, e := g.send(ctx, m, out, acceptJSON)
	if e != nil {
		return e
	}
	defer resp.Body.Close()
	buf := getBuffer()
	defer putBuffer(buf)
	raw, e := readUpstream(resp, buf, m.what)
	if e != nil {
		return e
	}
	raw = redactSpellings(raw, m.ep.spellings)
	model, e := checkCompletion(raw, m.what)
	if e != nil {
		return e
	}
	if span != nil {
		recordUsage(span, raw)
	}
	writeSwapped(w, raw, model, m.nameJSON)
	return nil
}

var (
	jsonContentType = []string{"application/json"}
	acceptJSON      = []string{"application/json"}
)

// send posts a chat body to an endpoint over the pooled connections.
// The caller closes the response body.
func (g *Gateway) send(ctx context.Context, m *model, body *spliced, accept []string) (*http.Response, *apiError) {
	ep := m.ep
	parts := body.parts
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.chatURL, body)
	if err != nil {
		return nil, errReach(m.what, ep.chatURL, err, g.timeout)
	}
	req.ContentLength = int64(body.len())
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(&spliced{parts: parts}), nil }
	req.Header = http.Header{"Content-Type": jsonContentType, "Accept": accept}
	if ep.auth != nil {
		req.Header["Authorization"] = ep.auth
	}
	if g.tracer != nil {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	start := time.Now()
	resp, err := g.hc.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The caller's deadline may be the nearer one.
			return nil, errReach(m.what, ep.chatURL, context.DeadlineExceeded, min(g.timeout, time.Since(start).Round(time.Millisecond)))
		}
		return nil, errReach(m.what, ep.chatURL, err, g.timeout)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, statusFailure(resp, m)
	}
	return resp, nil
}

// statusFailure is the error answer for a backend's non-2xx response: its
// message (clipped, its key removed), the likely fix and its Retry-After.
func statusFailure(resp *http.Response, m *model) *apiError {
	ep := m.ep
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamError))
	said := backendSaid(b, ep.cfg.APIKey)
	if resp.StatusCode == 404 && !strings.Contains(ep.chatPath, "/v") {
		said += "; the endpoint's base_url has no /v1 (OpenAI-compatible servers serve /v1/chat/completions)"
	} else if resp.StatusCode == 401 || resp.StatusCode == 403 {
		said += "; check the endpoint's api_key"
	}
	e := errStatus(m.what, resp.StatusCode, said)
	e.retryAfter = resp.Header.Get("Retry-After")
	return e
}

// readUpstream reads a backend's 2xx body into buf, at most
// MaxUpstreamBytes.
func readUpstream(resp *http.Response, buf *bytes.Buffer, what string) ([]byte, *apiError) {
	if n := resp.ContentLength; n > 0 && n <= MaxUpstreamBytes {
		buf.Grow(int(n) + 1)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, MaxUpstreamBytes+1)); err != nil {
		return nil, errTransport(what)
	}
	if buf.Len() > MaxUpstreamBytes {
		return nil, errProtocol(what, fmt.Sprintf("the body exceeds %d bytes", MaxUpstreamBytes))
	}
	return buf.Bytes(), nil
}

// Buffers for backend answers are pooled; one that grew past
// maxPooledBuffer is left to the collector.
const maxPooledBuffer = 1 << 20

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuffer {
		return
	}
	b.Reset()
	buffers.Put(b)
}

// do runs a backend exchange and classifies its failure. Texts from the
// backend are clipped and have the endpoint's key removed.
func (g *Gateway) do(req *http.Request, key Secret, what string) ([]byte, *apiError) {
	start := time.Now()
	resp, err := g.hc.Do(req)
	if err != nil {
		if req.Context().Err() != nil && errors.Is(req.Context().Err(), context.DeadlineExceeded) {
			// The caller's deadline may be the nearer one.
			err = context.DeadlineExceeded
			return nil, errReach(what, req.URL.String(), err, min(g.timeout, time.Since(start).Round(time.Millisecond)))
		}
		return nil, errReach(what, req.URL.String(), err, g.timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamError))
		said := backendSaid(b, key)
		if resp.StatusCode == 404 && what != "" && !strings.Contains(req.URL.Path, "/v") {
			said += "; the endpoint's base_url has no /v1 (OpenAI-compatible servers serve /v1/chat/completions)"
		} else if (resp.StatusCode == 401 || resp.StatusCode == 403) && what != "" {
			said += "; check the endpoint's api_key"
		}
		e := errStatus(what, resp.StatusCode, said)
		e.retryAfter = resp.Header.Get("Retry-After")
		return nil, e
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxUpstreamBytes+1))
	if err != nil {
		return nil, errReach(what, req.URL.String(), err, g.timeout)
	}
	if len(b) > MaxUpstreamBytes {
		return nil, errProtocol(what, fmt.Sprintf("the body exceeds %d bytes", MaxUpstreamBytes))
	}
	return redactBody(b, key), nil
}

// redactBody removes the endpoint's key from a successful answer, in its
// plain and its JSON-escaped spelling: an endpoint that echoes the key it
// was sent must not hand it to the gateway's clients.
func redactBody(b []byte, key Secret) []byte {
	return redactSpellings(b, keySpellings(key))
}

// keySpellings are the spellings of a key redactBody removes (none for a
// key too short to search for), computed once per load for endpoints.
func keySpellings(key Secret) [][]byte {
	k := key.Expose()
	if len(k) < 4 {
		return nil
	}
	q, _ := json.Marshal(k)
	return [][]byte{q[1 : len(q)-1], []byte(k)}
}

func redactSpellings(b []byte, spellings [][]byte) []byte {
	for _, spelling := range spellings {
		if bytes.Contains(b, spelling) {
			b = bytes.ReplaceAll(b, spelling, []byte(redacted))
		}
	}
	return b
}

// backendSaid is the message of a backend's error body (its
// error.message when it is an OpenAI envelope), at most 500 characters,
// without the key.
func backendSaid(b []byte, key Secret) string {
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	s := string(b)
	if json.Unmarshal(b, &env) == nil && env.Error.Message != "" {
		s = env.Error.Message
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	if !key.Empty() {
		s = strings.ReplaceAll(s, key.Expose(), redacted)
	}
	if r := []rune(s); len(r) > 500 {
		s = string(r[:500]) + "..."
	}
	return s
}
