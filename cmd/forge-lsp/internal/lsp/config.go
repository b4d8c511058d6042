package lsp

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/session"
)

// configSection is the workspace/configuration section and the optional
// wrapper key in initializationOptions.
const configSection = "forge"

// Environment variables read at start-up (lowest precedence).
const (
	// envGatewayURL is the gateway API root (gatewayUrl).
	envGatewayURL = "PROMPTFORGE_GATEWAY_URL"
	// envAPIKey is the default name of the variable holding the gateway key.
	envAPIKey = "PROMPTFORGE_GATEWAY_API_KEY"
	// envAPIKeyEnv names another variable to read the key from (apiKeyEnv).
	envAPIKeyEnv = "FORGE_API_KEY_ENV"
	// envCassette is a replay cassette for offline runs (cassette).
	envCassette = "FORGE_CASSETTE"
	// envToolsFile is the workspace tools file (toolsFile).
	envToolsFile = "FORGE_TOOLS_FILE"
	// envGatewayConfig is a gateway file served in-process (gatewayConfig).
	envGatewayConfig = "PROMPTFORGE_GATEWAY_CONFIG"
)

// config is the model configuration for runs. Later sources override
// earlier ones field by field: environment, initializationOptions,
// workspace/configuration.
type config struct {
	// GatewayURL is the gateway API root including /v1.
	GatewayURL string `json:"gatewayUrl"`
	// GatewayConfig is a gateway file (docs/gateway.md) that runs serve
	// in-process; it wins over GatewayURL.
	GatewayConfig string `json:"gatewayConfig"`
	// APIKeyEnv names the environment variable that holds the key; the
	// key itself never travels through the protocol.
	APIKeyEnv string `json:"apiKeyEnv"`
	// Cassette is a replay cassette file: runs answer from it instead of
	// the network.
	Cassette string `json:"cassette"`
	// ToolsFile is the workspace tools file (the tool catalog).
	ToolsFile string `json:"toolsFile"`
	// ModelCatalog turns fetching the gateway's /models (for context
	// budget warnings and model inlay hints) on or off; on by default.
	ModelCatalog *bool `json:"modelCatalog"`
	// RunTimeout is the wall-clock deadline of a run started from the
	// editor, as a Go duration ("10m", "90s"); "0" means none. Empty means
	// session.DefaultTimeout.
	RunTimeout string `json:"runTimeout"`
	// LiveTools lets a replay (a test run, a run with a cassette) run
	// workspace commands and web_fetch when the cassette holds no recorded
	// result; off by default (docs/security.md#runs). Editors send it only
	// from the user's own settings (VS Code: a machine-scoped setting).
	LiveTools *bool `json:"liveTools"`
	// DiagnosticsDelay is how long after the last change a document is
	// analysed, in milliseconds (VS Code: promptforge.diagnostics.delay;
	// Neovim: diagnostics_delay); unset means defaultDebounce. A burst of
	// changes inside the delay is analysed once.
	DiagnosticsDelay *float64 `json:"diagnosticsDelay"`
}

// maxDiagnosticsDelay bounds diagnosticsDelay: a longer delay is taken as
// this one.
const maxDiagnosticsDelay = 10 * time.Second

// diagnosticsDelay is the configured delay, and false when none is set or
// the value is unusable (negative, not a number), which means the server's
// default.
func (c config) diagnosticsDelay() (time.Duration, bool) {
	if c.DiagnosticsDelay == nil {
		return 0, false
	}
	ms := *c.DiagnosticsDelay
	if ms != ms || ms < 0 { // NaN or negative
		return 0, false
	}
	return min(time.Duration(ms*float64(time.Millisecond)), maxDiagnosticsDelay), true
}

// liveToolsHint is the way out a replay's refusal names in the editor.
const liveToolsHint = "turn on the liveTools setting (VS Code: promptforge.tests.liveTools, a user setting) to run them on this machine"

func (c config) liveTools() bool { return c.LiveTools != nil && *c.LiveTools }

// runTimeout is the deadline of editor runs (0: none). An unreadable
// value keeps the default every host shares (session.DefaultTimeout).
func (c config) runTimeout() time.Duration {
	if c.RunTimeout == "" {
		return session.DefaultTimeout
	}
	d, err := time.ParseDuration(c.RunTimeout)
	if err != nil || d < 0 {
		return session.DefaultTimeout
	}
	return d
}

// gateway is the configuration's gateway settings as every run set-up
// reads them (engine/session).
func (c config) gateway() session.Gateway {
	return session.Gateway{Replay: c.Cassette, URL: c.GatewayURL, KeyEnv: c.APIKeyEnv, File: c.GatewayConfig}
}

func configFromEnv(getenv func(string) string) config {
	c := config{
		GatewayURL: strings.TrimSpace(getenv(envGatewayURL)),
		APIKeyEnv:  strings.TrimSpace(getenv(envAPIKeyEnv)),
		Cassette:   strings.TrimSpace(getenv(envCassette)),
		ToolsFile:  strings.TrimSpace(getenv(envToolsFile)),

		GatewayConfig: strings.TrimSpace(getenv(envGatewayConfig)),
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = envAPIKey
	}
	return c
}

// configFromJSON reads settings either flat or wrapped in {"forge": {...}};
// anything unreadable yields the zero config (keeps what was there).
func configFromJSON(raw json.RawMessage) config {
	var wrapped map[string]json.RawMessage
	if json.Unmarshal(raw, &wrapped) == nil {
		if inner, ok := wrapped[configSection]; ok {
			raw = inner
		}
	}
	var c config
	_ = json.Unmarshal(raw, &c)
	// A delay that is not a number is no setting (the decoder leaves a
	// zero behind it, which would turn the debounce off).
	var delay struct {
		D json.RawMessage `json:"diagnosticsDelay"`
	}
	if json.Unmarshal(raw, &delay) != nil || len(delay.D) == 0 || delay.D[0] != '-' && (delay.D[0] < '0' || delay.D[0] > '9') {
		c.DiagnosticsDelay = nil
	}
	return c
}

// merge returns c with every non-empty field of o applied.
func (c config) merge(o config) config {
	set := func(dst *string, v string) {
		if v = strings.TrimSpace(v); v != "" {
			*dst = v
		}
	}
	set(&c.GatewayURL, o.GatewayURL)
	set(&c.GatewayConfig, o.GatewayConfig)
	set(&c.APIKeyEnv, o.APIKeyEnv)
	set(&c.Cassette, o.Cassette)
	set(&c.ToolsFile, o.ToolsFile)
	if o.ModelCatalog != nil {
		c.ModelCatalog = o.ModelCatalog
	}
	set(&c.RunTimeout, o.RunTimeout)
	if o.LiveTools != nil {
		c.LiveTools = o.LiveTools
	}
	if o.DiagnosticsDelay != nil {
		c.DiagnosticsDelay = o.DiagnosticsDelay
	}
	return c
}
