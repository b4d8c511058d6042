package gatewayd

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Config is a loaded, interpolated and validated gateway file
// (docs/gateway.md#the-file). Field names follow the TOML keys.
type Config struct {
	// Server is nil when the file has no [server] table: such a file can be
	// used in-process but not served.
	Server    *ServerConfig    `toml:"server"`
	Queue     QueueConfig      `toml:"queue"`
	Devices   []DeviceConfig   `toml:"device"`
	Endpoints []EndpointConfig `toml:"endpoint"`
	Models    []ModelConfig    `toml:"model"`
	Tools     *ToolsConfig     `toml:"tools"`

	// Include is only read while loading (docs/gateway.md#profiles).
	Include []string `toml:"include"`
	// Local and LocalModels are upstream's local inference; they are
	// refused with a message (docs/gateway.md#differences-from-upstream).
	Local       map[string]any   `toml:"local"`
	LocalModels []map[string]any `toml:"local_model"`
}

// ServerConfig is [server].
type ServerConfig struct {
	// Bind is an IP address and port, e.g. 127.0.0.1:8080.
	Bind   string `toml:"bind"`
	APIKey Secret `toml:"api_key"`
}

// QueueConfig is [queue] (docs/gateway.md#concurrency-and-queuing).
type QueueConfig struct {
	MaxDepth       *int  `toml:"max_depth"`
	FairScheduling *bool `toml:"fair_scheduling"`
}

// Defaults of [queue].
const (
	DefaultMaxDepth = 100
	// MaxClients is how many X-PromptForge-Client labels get their own
	// turn at once; further labels share "default".
	MaxClients = 32
)

func (q QueueConfig) depth() int {
	if q.MaxDepth == nil {
		return DefaultMaxDepth
	}
	return *q.MaxDepth
}

func (q QueueConfig) fair() bool { return q.FairScheduling == nil || *q.FairScheduling }

// DeviceConfig is [[device]]: a concurrency shared by the endpoints that
// name it.
type DeviceConfig struct {
	ID          string       `toml:"id"`
	Type        string       `toml:"type"`
	Concurrency *int         `toml:"concurrency"`
	Lanes       []LaneConfig `toml:"lane"`
}

// LaneConfig is [[device.lane]] (upstream's local-model lanes; parsed and
// checked only).
type LaneConfig struct {
	ID          string  `toml:"id"`
	Concurrency int     `toml:"concurrency"`
	Device      *string `toml:"device"`
}

// EndpointConfig is one [[endpoint]].
type EndpointConfig struct {
	ID       string `toml:"id"`
	Protocol string `toml:"protocol"`
	BaseURL  string `toml:"base_url"`
	// APIKey is sent as a bearer; empty skips the Authorization header.
	APIKey      Secret  `toml:"api_key"`
	Concurrency *int    `toml:"concurrency"`
	Device      *string `toml:"device"`
}

// ModelConfig is one [[model]].
type ModelConfig struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	Context     int64  `toml:"context"`
	// Thinking is never (default), always or switchable.
	Thinking         string   `toml:"thinking"`
	Upstream         string   `toml:"upstream"`
	Endpoints        []string `toml:"endpoints"`
	DefaultMaxTokens *int64   `toml:"default_max_tokens"`
	// PriceInput and PriceOutput are the prices of a million input and
	// output tokens (docs/gateway.md#prices), served in GET /v1/models
	// for `forge-lsp render`'s costs.
	PriceInput  float64 `toml:"price_input"`
	PriceOutput float64 `toml:"price_output"`
}

// ToolsConfig is [tools].
type ToolsConfig struct {
	WebSearch *WebSearchConfig `toml:"web_search"`
}

// WebSearchConfig is [tools.web_search] (docs/gateway.md#web-search).
type WebSearchConfig struct {
	Provider          string  `toml:"provider"`
	APIKey            Secret  `toml:"api_key"`
	BaseURL           *string `toml:"base_url"`
	DefaultCount      *int    `toml:"default_count"`
	MaxCount          *int    `toml:"max_count"`
	MaxPerHost        *int    `toml:"max_per_host"`
	DefaultFreshness  string  `toml:"default_freshness"`
	DefaultSafesearch string  `toml:"default_safesearch"`
	StripTracking     *bool   `toml:"strip_tracking"`
}

// Defaults of [tools.web_search].
const (
	DefaultSearchBase  = "https://api.search.brave.com/res/v1"
	DefaultSearchCount = 10
	DefaultSearchMax   = 20
	DefaultMaxPerHost  = 2
)

func intOr(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

// validate checks the rules of upstream's loader, in its order, and fills
// the defaults.
func (c *Config) validate() error {
	bad := func(format string, a ...any) error {
		return &ConfigError{Msg: "invalid config: " + fmt.Sprintf(format, a...)}
	}
	if len(c.LocalModels) > 0 || c.Local != nil {
		return &ConfigError{Msg: "[[local_model]] and [local] are not supported: forge-lsp's gateway does not " +
			"download or run llama-server. Start the model server yourself (llama-server, Ollama, vLLM) and add it " +
			"as an [[endpoint]] with protocol = \"openai\" and its base_url, with one [[model]] per model " +
			"(docs/gateway.md#local-models)"}
	}
	if s := c.Server; s != nil {
		if _, err := netip.ParseAddrPort(s.Bind); err != nil {
			return bad("server.bind %q must be an IP address and port, e.g. 127.0.0.1:8080", s.Bind)
		}
		if s.APIKey.Empty() {
			return bad("server.api_key must not be empty")
		}
	}
	if c.Queue.depth() < 1 {
		return bad("queue.max_depth must be at least 1")
	}
	devices := map[string]*DeviceConfig{}
	for i := range c.Devices {
		d := &c.Devices[i]
		if d.ID == "" {
			return bad("device id must not be empty")
		}
		if devices[d.ID] != nil {
			return bad("duplicate device id %s", d.ID)
		}
		devices[d.ID] = d
		if d.Type != "remote" && d.Type != "local" {
			return bad("device %s type must be remote or local, got %q", d.ID, d.Type)
		}
		if d.Concurrency != nil && *d.Concurrency < 1 {
			return bad("device %s concurrency must be at least 1", d.ID)
		}
		if d.Type == "remote" && len(d.Lanes) > 0 {
			return bad("remote device %s must not declare lanes", d.ID)
		}
		if d.Type == "local" && d.Concurrency != nil {
			return bad("local device %s uses lanes, not flat concurrency", d.ID)
		}
		lanes := map[string]bool{}
		for _, l := range d.Lanes {
			switch {
			case l.ID == "":
				return bad("device %s lane id must not be empty", d.ID)
			case lanes[l.ID]:
				return bad("duplicate lane id %s on device %s", l.ID, d.ID)
			case l.Concurrency < 1:
				return bad("device %s lane %s concurrency must be at least 1", d.ID, l.ID)
			case l.Device != nil && *l.Device != d.ID:
				return bad("lane %s device %s does not match parent device %s", l.ID, *l.Device, d.ID)
			}
			lanes[l.ID] = true
		}
	}
	endpoints := map[string]bool{}
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		if strings.TrimSpace(e.ID) == "" {
			return bad("endpoint id must not be empty")
		}
		if endpoints[e.ID] {
			return bad("duplicate endpoint id %s", e.ID)
		}
		endpoints[e.ID] = true
		if e.Protocol != "openai" {
			return bad("endpoint %s protocol must be \"openai\", got %q", e.ID, e.Protocol)
		}
		e.BaseURL = strings.TrimRight(strings.TrimSpace(e.BaseURL), "/")
		if err := httpURL("endpoint "+e.ID+" base_url", e.BaseURL); err != nil {
			return err
		}
		if e.Concurrency != nil && *e.Concurrency < 1 {
			return bad("endpoint %s concurrency must be at least 1", e.ID)
		}
		if e.Device != nil {
			d := devices[*e.Device]
			if d == nil {
				return bad("endpoint %s names undefined device %s", e.ID, *e.Device)
			}
			if d.Type != "remote" {
				return bad("endpoint %s references non-remote device %s", e.ID, *e.Device)
			}
		}
	}
	names := map[string]bool{}
	for i := range c.Models {
		m := &c.Models[i]
		if names[m.Name] {
			return bad("duplicate model name %s", m.Name)
		}
		names[m.Name] = true
		switch {
		case strings.TrimSpace(m.Name) == "":
			return bad("model name must not be empty")
		case strings.TrimSpace(m.Description) == "":
			return bad("model %s description must not be empty", m.Name)
		case strings.TrimSpace(m.Upstream) == "":
			return bad("model %s upstream must not be empty", m.Name)
		case m.Context <= 0 || m.Context > 1<<32-1:
			return bad("model %s context must be in 1..4294967295", m.Name)
		case m.DefaultMaxTokens != nil && *m.DefaultMaxTokens <= 0:
			return bad("model %s default_max_tokens must be greater than zero", m.Name)
		case m.PriceInput < 0 || m.PriceOutput < 0:
			return bad("model %s price_input and price_output must not be negative", m.Name)
		case len(m.Endpoints) == 0:
			return bad("model %s has no endpoints", m.Name)
		}
		if m.Thinking == "" {
			m.Thinking = "never"
		}
		if m.Thinking != "never" && m.Thinking != "always" && m.Thinking != "switchable" {
			return bad("model %s thinking must be never, always or switchable, got %q", m.Name, m.Thinking)
		}
		seen := map[string]bool{}
		for _, e := range m.Endpoints {
			if !endpoints[e] {
				return bad("model %s names undefined endpoint %s", m.Name, e)
			}
			if seen[e] {
				return bad("model %s lists duplicate endpoint %s", m.Name, e)
			}
			seen[e] = true
		}
	}
	if c.Tools != nil && c.Tools.WebSearch != nil {
		return c.Tools.WebSearch.validate()
	}
	return nil
}

func (w *WebSearchConfig) validate() error {
	bad := func(format string, a ...any) error {
		return &ConfigError{Msg: "invalid config: tools.web_search." + fmt.Sprintf(format, a...)}
	}
	if w.Provider != "brave" {
		return bad("provider must be \"brave\", got %q", w.Provider)
	}
	if w.APIKey.Empty() {
		return bad("api_key must not be empty")
	}
	if w.BaseURL == nil {
		s := DefaultSearchBase
		w.BaseURL = &s
	}
	*w.BaseURL = strings.TrimRight(strings.TrimSpace(*w.BaseURL), "/")
	def, max, per := intOr(w.DefaultCount, DefaultSearchCount), intOr(w.MaxCount, DefaultSearchMax), intOr(w.MaxPerHost, DefaultMaxPerHost)
	switch {
	case def < 1 || def > 255:
		return bad("default_count must be in 1..255")
	case max < 1 || max > 255:
		return bad("max_count must be in 1..255")
	case def > max:
		return bad("default_count must not exceed max_count")
	case per < 1 || per > 255:
		return bad("max_per_host must be in 1..255")
	case !validFreshness(w.DefaultFreshness, true):
		return bad("default_freshness %q is not one of pd/pw/pm/py, a YYYY-MM-DDtoYYYY-MM-DD range, or empty", w.DefaultFreshness)
	case !validSafesearch(w.DefaultSafesearch, true):
		return bad("default_safesearch %q is not off/moderate/strict or empty", w.DefaultSafesearch)
	}
	w.DefaultCount, w.MaxCount, w.MaxPerHost = &def, &max, &per
	if w.StripTracking == nil {
		t := true
		w.StripTracking = &t
	}
	return httpURL("tools.web_search.base_url", *w.BaseURL)
}

// httpURL checks an absolute http(s) URL with a host.
func httpURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &ConfigError{Msg: fmt.Sprintf("invalid config: %s is not a valid URL: %v", what, err)}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &ConfigError{Msg: fmt.Sprintf("invalid config: %s must use http or https, got %q", what, u.Scheme)}
	}
	if u.Hostname() == "" {
		return &ConfigError{Msg: fmt.Sprintf("invalid config: %s must include a host", what)}
	}
	if u.User != nil {
		return &ConfigError{Msg: fmt.Sprintf("invalid config: %s must not embed credentials; use api_key", what)}
	}
	return nil
}

func validFreshness(v string, emptyOK bool) bool {
	switch v {
	case "":
		return emptyOK
	case "pd", "pw", "pm", "py":
		return true
	}
	from, to, ok := strings.Cut(v, "to")
	return ok && isoDate(from) && isoDate(to)
}

func isoDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

func validSafesearch(v string, emptyOK bool) bool {
	switch v {
	case "":
		return emptyOK
	case "off", "moderate", "strict":
		return true
	}
	return false
}

// ConfigError is a gateway file that cannot be used. Its text names the
// file (and line, when known) and never holds a credential: interpolated
// values are not echoed.
type ConfigError struct {
	Msg string
}

func (e *ConfigError) Error() string { return e.Msg }
