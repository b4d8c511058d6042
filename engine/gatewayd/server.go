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
	timeout     time.Duration
	// Log, when set, receives one line per request (never a credential).
	Log func(string)
}

// state is what a profile switch replaces.
type state struct {
	key       Secret
	models    []*model
	byName    map[string]*model
	search    *WebSearchConfig
	profile   string
	hasServer bool
}

type model struct {
	cfg ModelConfig
	ep  *endpoint
}

type endpoint struct {
	cfg  EndpointConfig
	lane *lane
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
}

// New builds a gateway for a loaded file. A file without [server] gets a
// random bearer, for in-process use only.
func New(c *Config, o Options) (*Gateway, error) {
	g := &Gateway{profilesDir: o.ProfilesDir, env: o.Env, timeout: o.Timeout}
	if g.timeout <= 0 {
		g.timeout = UpstreamTimeout
	}
	rt := o.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		rt = t
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
		eps[e.ID] = &endpoint{cfg: e, lane: newLane(n, c.Queue)}
	}
	for _, m := range c.Models {
		ep := eps[m.Endpoints[0]]
		if ep == nil || s.byName[m.Name] != nil {
			return nil, &ConfigError{Msg: "invalid config: model " + m.Name + " (validate the file with Load)"}
		}
		md := &model{cfg: m, ep: ep}
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

type inProcess struct{ g *Gateway }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &memWriter{header: http.Header{}}
	t.g.ServeHTTP(w, req)
	if req.Body != nil {
		req.Body.Close()
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// memWriter is the ResponseWriter of an in-process exchange.
type memWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *memWriter) Header() http.Header { return w.header }
func (w *memWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *memWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// apiError is an error in the OpenAI envelope with upstream's status,
// type and code (docs/gateway.md#errors).
type apiError struct {
	status      int
	typ, code   string
	msg         string
	retryAfter  string
	contentType string
}

func (e *apiError) Error() string { return e.msg }

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
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"message": e.msg, "type": e.typ, "code": e.code}})
}

// ServeHTTP routes a request (docs/gateway.md#routes).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	g.serve(sw, r)
	if g.Log != nil {
		g.Log(fmt.Sprintf("%s %s -> %d (%s)", r.Method, r.URL.Path, sw.status, time.Since(start).Round(time.Microsecond)))
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
	if !authorized(r.Header.Get("Authorization"), s.key) {
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
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		got = ""
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(key.Expose()))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1 && ok && !key.Empty()
}

func readBody(r *http.Request) ([]byte, *apiError) {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
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
		ID          string `json:"id"`
		Object      string `json:"object"`
		Description string `json:"description"`
		Context     int64  `json:"context"`
		Thinking    string `json:"thinking"`
		ToolDialect string `json:"tool_dialect"`
		ToolsMode   string `json:"tools_mode"`
	}
	data := make([]entry, 0, len(s.models))
	for _, m := range s.models {
		data = append(data, entry{m.cfg.Name, "model", m.cfg.Description, m.cfg.Context, m.cfg.Thinking, "openai", "native"})
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
	return nil
}

var roles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "function": true, "developer": true}

// chat resolves the model by its exact name, puts the backend's upstream
// name in its place, forwards every other field untouched and gives the
// caller's name back on the response.
func (g *Gateway) chat(w http.ResponseWriter, r *http.Request, s *state) *apiError {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil || req == nil {
		return errMalformed("body must be a JSON object")
	}
	var name string
	if json.Unmarshal(req["model"], &name) != nil || strings.TrimSpace(name) == "" {
		return errMalformed("model must not be empty")
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(req["messages"], &msgs); err != nil {
		return errMalformed("messages must be an array of JSON objects")
	}
	if len(msgs) == 0 {
		return errMalformed("messages must not be empty")
	}
	for i, m := range msgs {
		var role string
		if m == nil || json.Unmarshal(m["role"], &role) != nil {
			return errMalformed("messages[%d] must be an object with a string role", i)
		}
		if !roles[role] {
			return errMalformed("messages[%d] role %q is not supported", i, role)
		}
		_, c := m["content"]
		_, tc := m["tool_calls"]
		_, fc := m["function_call"]
		if !c && !tc && !fc {
			return errMalformed("messages[%d] must carry content or a tool/function call", i)
		}
	}
	m := s.byName[name]
	if m == nil {
		return errUnknownModel(name)
	}
	release, err := m.ep.lane.admit(r.Context(), clientLabel(r.Header.Get(ClientHeader)))
	if err != nil {
		if errors.Is(err, errQueueFull) {
			return errQueue()
		}
		return errTransport("")
	}
	defer release()
	req["model"], _ = json.Marshal(m.cfg.Upstream)
	out, _ := json.Marshal(req)
	backend := m.ep.cfg.BaseURL + "/chat/completions"
	what := fmt.Sprintf("model %q, endpoint %q (POST %s): ", name, m.ep.cfg.ID, backend)
	raw, e := g.post(r.Context(), backend, m.ep.cfg.APIKey, out, what)
	if e != nil {
		return e
	}
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(raw, &resp); err != nil || resp == nil {
		return errProtocol(what, "the body is not a JSON object; is base_url an OpenAI-compatible API root (with /v1)?")
	}
	var choices []map[string]json.RawMessage
	if err := json.Unmarshal(resp["choices"], &choices); err != nil {
		return errProtocol(what, "choices must be an array of objects; is base_url an OpenAI-compatible API root (with /v1)?")
	}
	for _, c := range choices {
		_, idx := c["index"]
		_, msg := c["message"]
		_, delta := c["delta"]
		_, text := c["text"]
		if c == nil || !idx || !(msg || delta || text) {
			return errStatus("", 502, "upstream choice is missing index or message/delta/text")
		}
	}
	resp["model"], _ = json.Marshal(name)
	writeJSON(w, 200, resp)
	return nil
}

// post sends one backend request; what prefixes error messages.
func (g *Gateway) post(ctx context.Context, url string, key Secret, body []byte, what string) ([]byte, *apiError) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, errReach(what, url, err, g.timeout)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if !key.Empty() {
		req.Header.Set("Authorization", "Bearer "+key.Expose())
	}
	return g.do(req, key, what)
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
	k := key.Expose()
	if len(k) < 4 {
		return b
	}
	q, _ := json.Marshal(k)
	for _, spelling := range [][]byte{q[1 : len(q)-1], []byte(k)} {
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

func (g *Gateway) adminProfiles(w http.ResponseWriter, _ *http.Request, _ *state) *apiError {
	if g.profilesDir == "" {
		return &apiError{status: 400, typ: "invalid_request_error", code: "profiles_unavailable", msg: "profiles directory not configured"}
	}
	names, err := ListProfiles(g.profilesDir)
	if err != nil {
		return &apiError{status: 400, typ: "invalid_request_error", code: "switch_failed", msg: "switch profile failed at list-profiles"}
	}
	if names == nil {
		names = []string{}
	}
	writeJSON(w, 200, map[string]any{"profiles": names})
	return nil
}

func (g *Gateway) adminStatus(w http.ResponseWriter, _ *http.Request, s *state) *apiError {
	names := make([]string, 0, len(s.models))
	for _, m := range s.models {
		names = append(names, m.cfg.Name)
	}
	var profile any
	if s.profile != "" {
		profile = s.profile
	}
	writeJSON(w, 200, map[string]any{"profile": profile, "models": names, "local_children": 0,
		"queue": "per-endpoint waiting queue; switch-profile is immediate (no drain)"})
	return nil
}

// adminSwitch loads and validates a profile, then swaps the live state;
// on any failure the old state stays.
func (g *Gateway) adminSwitch(w http.ResponseWriter, r *http.Request, _ *state) *apiError {
	if g.profilesDir == "" {
		return &apiError{status: 400, typ: "invalid_request_error", code: "profiles_unavailable", msg: "profiles directory not configured"}
	}
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var req struct {
		Name *string `json:"name"`
	}
	if json.Unmarshal(body, &req) != nil || req.Name == nil {
		return errMalformed(`body must be {"name": "PROFILE"}`)
	}
	failed := func(stage string, err error) *apiError {
		return &apiError{status: 400, typ: "invalid_request_error", code: "switch_failed", msg: "switch profile failed at " + stage + ": " + err.Error()}
	}
	if err := CheckProfileName(*req.Name); err != nil {
		return failed("parse-name", err)
	}
	name := strings.TrimSpace(*req.Name)
	g.switchMu.Lock()
	defer g.switchMu.Unlock()
	names, _ := ListProfiles(g.profilesDir)
	found := false
	for _, n := range names {
		found = found || n == name
	}
	if !found {
		return &apiError{status: 404, typ: "invalid_request_error", code: "profile_not_found", msg: "profile not found: " + name}
	}
	c, err := LoadProfile(g.profilesDir, name, g.env)
	if err != nil {
		return failed("load-profile", err)
	}
	if c.Server == nil {
		return failed("load-profile", errors.New("the profile has no [server] table"))
	}
	s, err := newState(c, name)
	if err != nil {
		return failed("build-routing", err)
	}
	g.state.Store(s)
	if g.Log != nil {
		g.Log("switched profile to " + name)
	}
	writeJSON(w, 200, map[string]any{"ok": true, "profile": name})
	return nil
}
