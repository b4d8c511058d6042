package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
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
	// Gateway is the [gateway] table; a zero URL means the gateway comes
	// from the environment, as for `forge-lsp run`.
	Gateway GatewayConfig
	// Include and Exclude are the [catalog] globs.
	Include, Exclude []string
	// WebFetch and WebSearch are the [tools] switches.
	WebFetch, WebSearch bool
	// Blocks are the [prompts.NAME] tables by name.
	Blocks map[string]PromptBlock
}

// ServerConfig is the [server] table.
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

// GatewayConfig is the [gateway] table.
type GatewayConfig struct {
	URL, APIKey string
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

// LoadConfig reads path and the name-matched .env beside it (prompts.env
// for prompts.toml). Variables come from env first, then from the .env
// file. A relative [paths] prompts is taken from the working directory,
// as upstream does.
func LoadConfig(path string, env LookupFunc) (*Config, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	dotenv := readDotEnv(strings.TrimSuffix(path, filepath.Ext(path)) + ".env")
	lookup := func(k string) (string, bool) {
		if v, ok := env(k); ok {
			return v, true
		}
		v, ok := dotenv[k]
		return v, ok
	}
	c, err := ParseConfig(path, data, lookup)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// FolderConfig is the configuration of `forge-lsp mcp DIR`: every prompt
// under dir (`**/*.md`), the defaults for the rest, and the gateway from
// the environment.
func FolderConfig(dir string) (*Config, error) {
	c, err := ParseConfig("", nil, func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c.Prompts = abs
	c.Include = []string{"**/*.md"}
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

// ParseConfig decodes data (the contents of path) with lookup for ${VAR}.
func ParseConfig(path string, data []byte, lookup LookupFunc) (*Config, error) {
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
	in := interpolator{path: path, lookup: lookup}
	s := raw.Server
	// An unset variable in [server] api_key drops the key, so that a stdio
	// install boots without a credential its transport never reads.
	if s.APIKey != nil {
		if v, err := in.expand("server.api_key", *s.APIKey); err == nil {
			if strings.TrimSpace(v) == "" {
				return nil, configError(path, 0, "[server] api_key must not be empty; remove it or set a token")
			}
			c.Server.APIKey = v
		} else if !isUnset(err) {
			return nil, err
		}
	}
	c.Server.Bind = in.str("server.bind", s.Bind, DefaultBind)
	for _, h := range s.AllowedHosts {
		c.Server.AllowedHosts = append(c.Server.AllowedHosts, in.str("server.allowed_hosts", &h, ""))
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

	if g := raw.Gateway; g != nil {
		c.Gateway.URL = in.str("gateway.url", g.URL, "")
		c.Gateway.APIKey = in.str("gateway.api_key", g.APIKey, "")
		if in.err == nil {
			if err := checkGatewayURL(c.Gateway.URL); err != nil {
				in.err = configError(path, 0, "%v", err)
			} else if strings.TrimSpace(c.Gateway.APIKey) == "" {
				in.err = configError(path, 0, "[gateway] api_key must not be empty")
			}
		}
	}
	for _, p := range raw.Catalog.Include {
		c.Include = append(c.Include, in.glob("catalog.include", p))
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

func checkGatewayURL(s string) error {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("[gateway] url must be an http or https URL such as http://127.0.0.1:8081/v1")
	}
	if u.Host == "" {
		return fmt.Errorf("[gateway] url must have a host")
	}
	if u.User != nil {
		return fmt.Errorf("[gateway] url must not carry credentials; put the key in [gateway] api_key")
	}
	return nil
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

// unsetError is a ${VAR} that names no variable.
type unsetError struct{ error }

func isUnset(err error) bool {
	var u unsetError
	return errors.As(err, &u)
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

// expand replaces ${VAR} with its value and $$ with $. A lone $ stays.
func (in *interpolator) expand(key, s string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", configError(in.path, 0, "%s: unclosed ${ (write $$ for a literal dollar)", key)
			}
			name := s[i+2 : i+2+end]
			v, ok := in.lookup(name)
			if !ok {
				return "", unsetError{configError(in.path, 0, "%s: ${%s} is not set in the environment or in the .env file beside the configuration", key, name)}
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
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
