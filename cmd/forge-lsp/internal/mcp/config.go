package mcp

import (
	"github.com/forge-lsp/forge-lsp/engine/envvar"

	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// Config is a prompts.toml (docs/mcp.md#configuration), with defaults
// applied, variables interpolated and every value checked.
type Config struct {
	// Path is the file it was read from; empty for a folder catalog.
	Path string
	// Server holds the [server] table.
	Server ServerConfig
	// Prompts is [paths] prompts, made absolute.
	Prompts string
	// Workspace is the repository the configuration (or the served
	// folder) belongs to: run_prompt's input_file and output_file stay
	// inside it (docs/security.md#repository-files).
	Workspace string
	// Include and Exclude are the [catalog] globs.
	Include, Exclude []string
	// WebFetch and WebSearch are the [tools] switches.
	WebFetch, WebSearch bool
	// Blocks are the [prompts.NAME] tables by name.
	Blocks map[string]PromptBlock
}

// ServerConfig is the [server] table. Bind and AllowedHosts may name only
// this machine; APIKey is always the user's PROMPTFORGE_MCP_SERVER_API_KEY
// (docs/security.md#repository-files).
type ServerConfig struct {
	Bind              string
	APIKey            string
	AllowedHosts      []string
	MaxConcurrentRuns int
	AdmissionTimeout  time.Duration
	ReplyDeadline     time.Duration
	RetainCompleted   time.Duration
	Watch             bool
	WatchDebounce     time.Duration
}

// PromptBlock is one [prompts.NAME] table.
type PromptBlock struct {
	Enabled bool
	// File is relative to the prompts folder; empty when not set.
	File string
}

// The defaults upstream documents (docs/mcp.md#defaults).
const (
	DefaultBind              = "127.0.0.1:9310"
	DefaultMaxConcurrentRuns = 4
	DefaultAdmissionTimeout  = 30 * time.Second
	DefaultReplyDeadline     = 240 * time.Second
	DefaultRetainCompleted   = time.Hour
	DefaultWatchDebounce     = 500 * time.Millisecond
	defaultPromptsDir        = "prompts"
)

// reservedNames are the tool names no prompt may take.
var reservedNames = []string{"list_prompts", "run_prompt", "check_run", "need_prompt"}

// promptNameRE is the shape of a prompt name and of a [prompts.NAME] key.
var promptNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`) })

type rawConfig struct {
	Server  rawServer            `toml:"server"`
	Paths   rawPaths             `toml:"paths"`
	Gateway *rawGateway          `toml:"gateway"`
	Catalog rawCatalog           `toml:"catalog"`
	Tools   rawTools             `toml:"tools"`
	Prompts map[string]rawPrompt `toml:"prompts"`
}

type rawServer struct {
	Bind              *string  `toml:"bind"`
	APIKey            *string  `toml:"api_key"`
	AllowedHosts      []string `toml:"allowed_hosts"`
	MaxConcurrentRuns *int64   `toml:"max_concurrent_runs"`
	AdmissionTimeout  *string  `toml:"admission_timeout"`
	ReplyDeadline     *string  `toml:"reply_deadline"`
	RetainCompleted   *string  `toml:"retain_completed"`
	Watch             *bool    `toml:"watch"`
	WatchDebounce     *string  `toml:"watch_debounce"`
}

type rawPaths struct {
	Prompts *string `toml:"prompts"`
}

type rawGateway struct {
	URL    *string `toml:"url"`
	APIKey *string `toml:"api_key"`
}

type rawCatalog struct {
	Include []string `toml:"include"`
	Exclude []string `toml:"exclude"`
}

type rawTools struct {
	WebFetch  *bool `toml:"web_fetch"`
	WebSearch *bool `toml:"web_search"`
}

type rawPrompt struct {
	Enabled *bool   `toml:"enabled"`
	File    *string `toml:"file"`
}

// LookupFunc reads one environment variable.
type LookupFunc func(string) (string, bool)

// The environment variables a repository file may name, each only as the
// whole value of one key: the bearer token and the gateway key are the
// user's, never the repository's (docs/security.md#repository-files).
const (
	EnvAPIKey = "PROMPTFORGE_MCP_SERVER_API_KEY"
	// envGatewayURL, envGatewayKey and envGatewayConfig are
	// gateway.EnvURL, gateway.EnvKey and gateway.EnvConfig.
	envGatewayURL    = "PROMPTFORGE_GATEWAY_URL"
	envGatewayKey    = "PROMPTFORGE_GATEWAY_API_KEY"
	envGatewayConfig = "PROMPTFORGE_GATEWAY_CONFIG"
)

// LoadConfig reads path and the name-matched .env beside it (prompts.env
// for prompts.toml). prompts.toml may belong to a repository, so ${VAR}
// reads only the variables that .env defines; env (the user's
// environment) supplies the bearer token and is what a [gateway] table
// must agree with. A relative [paths] prompts is taken from the working
// directory, as upstream does.
func LoadConfig(path string, env LookupFunc) (*Config, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	dotenv := readDotEnv(strings.TrimSuffix(path, filepath.Ext(path)) + ".env")
	c, err := ParseConfig(path, data, env, dotenv)
	if err != nil {
		return nil, err
	}
	c.Workspace = fsread.RepoRoot(filepath.Dir(path))
	return c, nil
}

// FolderConfig is the configuration of `forge-lsp mcp DIR`: every prompt
// under dir (`**/*.md`), the defaults for the rest, the gateway and the
// bearer token from env.
func FolderConfig(dir string, env LookupFunc) (*Config, error) {
	c, err := ParseConfig("", nil, env, nil)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c.Prompts = abs
	c.Include = []string{"**/*.md"}
	c.Workspace = fsread.RepoRoot(abs)
	return c, nil
}

// readBounded reads prompts.toml or its .env through the one reader for
// repository files (regular files only, the configuration size cap).
func readBounded(path string) ([]byte, error) {
	return fsread.ReadFile(path, fsread.Config)
}

// readDotEnv reads KEY=VALUE lines; a missing or unreadable file gives
// nothing. Values may be quoted; # starts a comment line. A line that is
// not KEY=VALUE is skipped (its text is never logged: it may hold a
// secret).
func readDotEnv(path string) map[string]string {
	out := map[string]string{}
	data, err := readBounded(path)
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), int(fsread.Config.Max))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out
}

// configError is a problem in prompts.toml, located when the TOML decoder
// knows where.
func configError(path string, line int, format string, a ...any) error {
	loc := path
	if loc == "" {
		loc = "configuration"
	}
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, line)
	}
	return fmt.Errorf("%s: %s", loc, fmt.Sprintf(format, a...))
}

// ParseConfig decodes data (the contents of path). ${VAR} reads dotenv
// (the variables of the file's own .env) only; env is the user's
// environment, which supplies the bearer token and which a [gateway] table
// must agree with.
func ParseConfig(path string, data []byte, env LookupFunc, dotenv map[string]string) (*Config, error) {
	var raw rawConfig
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			e := strict.Errors[0]
			row, _ := e.Position()
			return nil, configError(path, row, "unknown key %q (the keys are listed in docs/mcp.md#configuration)", strings.Join(e.Key(), "."))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, configError(path, row, "%s", de.Error())
		}
		return nil, configError(path, 0, "%v", err)
	}
	c := &Config{Path: path, Blocks: map[string]PromptBlock{}}
	if wd, err := os.Getwd(); err == nil {
		c.Workspace = fsread.RepoRoot(wd)
	}
	in := interpolator{path: path, lookup: func(k string) (string, bool) {
		v, ok := dotenv[k]
		return v, ok
	}}
	s := raw.Server
	// The bearer token is the user's: a token committed to a repository
	// is a token anyone who reads it can use.
	if s.APIKey != nil && *s.APIKey != "${"+EnvAPIKey+"}" {
		return nil, configError(path, 0, "[server] api_key: the bearer token comes from the environment, never from a file a repository may hold; set %s and write api_key = \"${%s}\" or remove the key", EnvAPIKey, EnvAPIKey)
	}
	if k, ok := env(EnvAPIKey); ok && strings.TrimSpace(k) != "" {
		c.Server.APIKey = k
	}
	c.Server.Bind = in.str("server.bind", s.Bind, DefaultBind)
	if in.err == nil && s.Bind != nil {
		if host, _, err := net.SplitHostPort(c.Server.Bind); err == nil && !isLoopbackHost(host) {
			in.err = configError(path, 0, "[server] bind %q is not a loopback address: a file a repository may hold cannot open the server to other machines; pass --http ADDR on the command line", c.Server.Bind)
		}
	}
	for _, h := range s.AllowedHosts {
		h = in.str("server.allowed_hosts", &h, "")
		if in.err == nil && !isLoopbackHost(hostOnly(h)) {
			in.err = configError(path, 0, "[server] allowed_hosts %q: a file a repository may hold may allow only this machine (localhost, 127.0.0.1, ::1); pass --allow-host %s on the command line", h, h)
		}
		c.Server.AllowedHosts = append(c.Server.AllowedHosts, h)
	}
	c.Server.MaxConcurrentRuns = DefaultMaxConcurrentRuns
	if s.MaxConcurrentRuns != nil {
		if *s.MaxConcurrentRuns < 1 || *s.MaxConcurrentRuns > 1024 {
			return nil, configError(path, 0, "[server] max_concurrent_runs is %d; want 1..1024", *s.MaxConcurrentRuns)
		}
		c.Server.MaxConcurrentRuns = int(*s.MaxConcurrentRuns)
	}
	c.Server.AdmissionTimeout = in.dur("server.admission_timeout", s.AdmissionTimeout, DefaultAdmissionTimeout)
	c.Server.ReplyDeadline = in.dur("server.reply_deadline", s.ReplyDeadline, DefaultReplyDeadline)
	c.Server.RetainCompleted = in.dur("server.retain_completed", s.RetainCompleted, DefaultRetainCompleted)
	c.Server.WatchDebounce = in.dur("server.watch_debounce", s.WatchDebounce, DefaultWatchDebounce)
	c.Server.Watch = s.Watch == nil || *s.Watch
	if _, _, err := net.SplitHostPort(c.Server.Bind); err != nil && in.err == nil {
		in.err = configError(path, 0, "[server] bind %q is not HOST:PORT", c.Server.Bind)
	}

	prompts := in.str("paths.prompts", raw.Paths.Prompts, defaultPromptsDir)
	abs, err := filepath.Abs(prompts)
	if err != nil && in.err == nil {
		in.err = err
	}
	c.Prompts = abs

	if g := raw.Gateway; g != nil && in.err == nil {
		in.err = checkGateway(path, g, env)
	}
	for _, p := range raw.Catalog.Include {
		c.Include = append(c.Include, in.glob("catalog.include", p))
	}
	if len(raw.Catalog.Include) == 0 {
		// The documented default (docs/mcp.md#configuration): without
		// [catalog] include, every prompt in the prompts folder is served.
		c.Include = []string{"**/*.md"}
	}
	for _, p := range raw.Catalog.Exclude {
		c.Exclude = append(c.Exclude, in.glob("catalog.exclude", p))
	}
	c.WebFetch = raw.Tools.WebFetch != nil && *raw.Tools.WebFetch
	c.WebSearch = raw.Tools.WebSearch != nil && *raw.Tools.WebSearch
	for _, name := range sortedKeys(raw.Prompts) {
		b := raw.Prompts[name]
		if !promptNameRE().MatchString(name) {
			return nil, configError(path, 0, "[prompts.%s]: the name is not ^[a-z][a-z0-9_]{0,47}$", name)
		}
		if isReserved(name) {
			return nil, configError(path, 0, "[prompts.%s]: the name is reserved: a built-in tool already answers to it", name)
		}
		pb := PromptBlock{Enabled: b.Enabled == nil || *b.Enabled}
		if b.File != nil {
			pb.File = in.str("prompts."+name+".file", b.File, "")
			if err := relativeInside(pb.File); err != nil && in.err == nil {
				in.err = configError(path, 0, "[prompts.%s] file %q: %v", name, pb.File, err)
			}
		}
		c.Blocks[name] = pb
	}
	if in.err != nil {
		return nil, in.err
	}
	return c, nil
}

func isReserved(name string) bool {
	for _, r := range reservedNames {
		if r == name {
			return true
		}
	}
	return false
}

// checkGateway checks a [gateway] table, kept for upstream's format: the
// gateway and its key are the user's (PROMPTFORGE_GATEWAY_URL and
// PROMPTFORGE_GATEWAY_API_KEY, or a gateway file), so the table may only
// repeat them. Runs use the environment either way.
func checkGateway(path string, g *rawGateway, env LookupFunc) error {
	way := "the gateway and its key are the user's, never a repository file's: set " + envGatewayURL + " and " + envGatewayKey + " (or pass --gateway-config), and remove [gateway] from " + filepath.Base(path)
	if g.APIKey != nil && *g.APIKey != "${"+envGatewayKey+"}" {
		return configError(path, 0, "[gateway] api_key must be written \"${%s}\"; %s", envGatewayKey, way)
	}
	if g.URL == nil {
		return nil
	}
	u := strings.TrimSpace(*g.URL)
	if strings.Contains(u, "$") {
		return configError(path, 0, "[gateway] url: variables are never expanded into a URL; %s", way)
	}
	if err := checkGatewayURL(u); err != nil {
		return configError(path, 0, "%v", err)
	}
	if f, ok := env(envGatewayConfig); ok && f != "" {
		// A gateway file the user named wins over both.
		return nil
	}
	mine, _ := env(envGatewayURL)
	if strings.TrimRight(strings.TrimSpace(mine), "/") != strings.TrimRight(u, "/") {
		if mine == "" {
			return configError(path, 0, "[gateway] url %s is not your gateway (%s is not set); %s", u, envGatewayURL, way)
		}
		return configError(path, 0, "[gateway] url %s is not your gateway (%s is %s); %s", u, envGatewayURL, mine, way)
	}
	return nil
}

func checkGatewayURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("[gateway] url must be an http or https URL such as http://127.0.0.1:8081/v1")
	}
	if u.Host == "" {
		return fmt.Errorf("[gateway] url must have a host")
	}
	if u.User != nil {
		return fmt.Errorf("[gateway] url must not carry credentials")
	}
	return nil
}

// isLoopbackHost reports whether host (no port) names this machine only.
func isLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly drops the port of an allowed_hosts entry.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// relativeInside refuses an absolute path or one that climbs out with "..".
func relativeInside(p string) error {
	if p == "" {
		return errors.New("is empty")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return errors.New("must be relative to [paths] prompts")
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return errors.New(`must not contain ".."`)
		}
	}
	return nil
}

// interpolator expands ${VAR} and $$ in string values and keeps the first
// error.
type interpolator struct {
	path   string
	lookup LookupFunc
	err    error
}

func (in *interpolator) str(key string, v *string, def string) string {
	if v == nil {
		return def
	}
	s, err := in.expand(key, *v)
	if err != nil && in.err == nil {
		in.err = err
	}
	return s
}

func (in *interpolator) dur(key string, v *string, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	s := in.str(key, v, "")
	d, err := ParseHumanDuration(s)
	if err != nil && in.err == nil {
		in.err = configError(in.path, 0, "%s: %v", key, err)
	}
	return d
}

func (in *interpolator) glob(key, v string) string {
	s := in.str(key, &v, "")
	if err := relativeInside(s); err != nil && in.err == nil {
		in.err = configError(in.path, 0, "[catalog] pattern %q: %v", s, err)
	}
	if _, err := compileGlob(s); err != nil && in.err == nil {
		in.err = configError(in.path, 0, "[catalog] pattern %q: %v", s, err)
	}
	return s
}

// expand replaces ${VAR} with its value and $$ with $ (engine/envvar,
// the syntax gateway files share). A lone $ stays.
func (in *interpolator) expand(key, s string) (string, error) {
	out, err := envvar.Expand(s, in.lookup)
	var unset *envvar.UnsetError
	switch {
	case errors.Is(err, envvar.ErrUnclosed):
		return "", configError(in.path, 0, "%s: unclosed ${ (write $$ for a literal dollar)", key)
	case errors.As(err, &unset):
		return "", configError(in.path, 0, "%s: ${%s} is not defined in the .env file beside the configuration (a file a repository may hold reads no other variable: docs/security.md#repository-files)", key, unset.Name)
	}
	return out, err
}

// humanUnits are the humantime units upstream's durations accept.
var humanUnits = sync.OnceValue(func() map[string]time.Duration {
	return map[string]time.Duration{
		"ns": time.Nanosecond, "nsec": time.Nanosecond,
		"us": time.Microsecond, "usec": time.Microsecond, "µs": time.Microsecond,
		"ms": time.Millisecond, "msec": time.Millisecond, "millis": time.Millisecond,
		"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
		"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
		"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	}
})

// ParseHumanDuration reads a humantime duration: one or more NUMBER UNIT
// pairs ("30s", "5m", "1h 30m", "500ms").
func ParseHumanDuration(s string) (time.Duration, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("empty duration (write e.g. \"30s\", \"5m\", \"500ms\")")
	}
	var total time.Duration
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("duration %q: expected a number at %q (write e.g. \"30s\", \"5m\", \"500ms\")", s, rest)
		}
		n, err := strconv.ParseInt(rest[:i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("duration %q: %v", s, err)
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := 0
		for j < len(rest) && rest[j] != ' ' && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		unit, ok := humanUnits()[rest[:j]]
		if !ok {
			return 0, fmt.Errorf("duration %q: unknown unit %q (use ms, s, m, h, d)", s, rest[:j])
		}
		if n > int64(1<<62)/int64(unit) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += time.Duration(n) * unit
		rest = strings.TrimLeft(rest[j:], " ")
	}
	return total, nil
}
