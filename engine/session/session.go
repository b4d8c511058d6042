// Package session sets up and runs one prompt the way every host does:
// `forge-lsp run`, the language server's run commands, and the debugger
// and test runner built on them. A host fills Options (the prompt text,
// the section, the input, where model requests go, an Observer), calls
// Open, then Run, then Close:
//
//	s, err := session.Open(session.Options{Path: path, Source: text, Observer: obs})
//	if err != nil { ... } // *NotAPromptError, *ParseError or *SetupError
//	defer s.Close()
//	result, err := s.Run(ctx) // err is a *run.RunError
//
// Open does what a run needs before it starts, and owns the run policy
// every host shares: it refuses a file that does not declare promptforge,
// parses and validates the prompt once (run.Validate), finds the section,
// opens the gateway client (a cassette to replay or record, a configured
// gateway, or the environment, read when a model is first needed), loads
// the workspace tools file (the configured one, else the nearest
// forge-tools.json at or above the prompt's folder), seeds the store from
// a folder, applies the limit defaults (DefaultTimeout among them), picks
// an execution id and starts the trace (Options.TraceFile or
// Options.Trace). Hosts pass their inputs (flags, settings) and keep only
// their own presentation: how they print errors, stream events and
// handle interrupts. A host that needs the gateway without a run (the
// server's model catalog, a test runner's live gateway) asks the same
// Gateway value: Gateway.Config, Gateway.Open and Gateway.Models.
//
// The package lives in engine/ because it needs nothing from a host: no
// LSP or CLI type crosses its API, so every face of forge-lsp imports it
// and none imports another face.
package session

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/forge-lsp/forge-lsp/engine/tools"
	"github.com/forge-lsp/forge-lsp/engine/trace"
)

// DefaultTimeout is the wall-clock deadline of a run when its host's
// user chose none (`run --timeout`, the editor's runTimeout, the MCP
// server's runs; docs/language.md#limits): Open applies it to a zero
// Limits.Timeout. The run's budgets stop runaway Lua long before, so it
// only ends a run stuck on something no budget counts. A run past it
// fails with kind Quota.
const DefaultTimeout = 10 * time.Minute

// DefaultCaseTimeout is the wall-clock deadline of one test case's run
// (`forge-lsp test --timeout`, docs/language.md#limits), shorter than a
// run's: a suite runs many.
const DefaultCaseTimeout = 5 * time.Minute

// NoTimeout, as Limits.Timeout, runs without a wall-clock deadline (a
// user's `--timeout 0`, a debugged run that waits at breakpoints).
const NoTimeout time.Duration = -1

// UserTimeout is the Limits.Timeout of a wall-clock limit as users write
// it (`run --timeout`, the editor's runTimeout, `test --timeout`): 0
// means none (docs/language.md#limits).
func UserTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return NoTimeout
	}
	return d
}

// Options is everything a host decides about one run.
type Options struct {
	// Path names the prompt in messages (the file name or the editor's
	// document name).
	Path string
	// Source is the prompt text: the file, or an editor's unsaved buffer.
	Source []byte
	// Parsed, when set, is Source as parse.Parse parsed it under Path (an
	// earlier session's Session.Prompt, the editor's snapshot): the parse
	// is not made again, nor the probe unless the parse found errors. A
	// host re-running one text many times (the debugger's step
	// back) or holding its parse already (the editor) sets it; it is
	// ignored unless its name is Path and its text exactly Source.
	Parsed *parse.Prompt
	// Section, when set ("## Name"), runs the H1 and then only that
	// section (docs/language.md#running-one-section). It is looked up
	// anywhere in the tree.
	Section string
	// Input is the run input (Lua `args`).
	Input string
	// Observer receives the run's events; nil means none.
	Observer run.Observer
	// Store is the run's store; nil means a fresh one. Session.Store
	// returns it after the run (for a store dump).
	Store *store.Store
	// StoreDir, when set and Store is nil, seeds the store with the files
	// under it (SeedStore: `run --store`, the debugger's store setting);
	// a folder that cannot seed it is a SetupError (OptStore).
	StoreDir string
	// Limits are the run limits; zero fields take the defaults
	// (run.Limits.WithDefaults). A zero Timeout is DefaultTimeout;
	// NoTimeout (any negative value) means no wall-clock deadline.
	Limits run.Limits
	// Gateway says where model requests go.
	Gateway Gateway
	// ToolsFile is the workspace tools file. When empty, the nearest
	// forge-tools.json at or above ToolsDir is used, if any
	// (toolcat.Resolve, the resolver the checker uses too).
	ToolsFile string
	// ToolsDir is where the search for forge-tools.json starts. Empty
	// means the prompt's folder when Path is a file on disk
	// (toolcat.PromptDir), else no search (an unsaved buffer).
	ToolsDir string
	// Tools, when set, keeps the tools file search and read between the
	// sessions a host opens with the same ToolsFile and ToolsDir (the
	// debugger's re-runs): see ToolsCache.
	Tools *ToolsCache
	// Env reads the host's environment: the gateway settings and
	// tools.WebFetchAllowPrivateEnv. nil means os.LookupEnv.
	Env gateway.LookupFunc
	// Execution is the execution id (sys.execution). Empty means
	// ExecutionPrefix followed by 16 random hex digits; a test runner sets
	// a fixed one so that recorded requests repeat.
	Execution string
	// ExecutionPrefix is put before the random execution id, so that a
	// host's runs can be told apart.
	ExecutionPrefix string
	// DisableWebFetch and DisableWebSearch leave the built-in tools out of
	// the catalog (the MCP server's [tools] switches, docs/mcp.md).
	DisableWebFetch, DisableWebSearch bool
	// ModelCatalog, when set, is the gateway's model catalog, fetched once
	// by a host that runs many prompts against one gateway (the MCP
	// server); nil fetches it at the run's first model binding.
	ModelCatalog []gateway.Model
	// LiveTools lets a replay run workspace commands and web_fetch on this
	// machine when the cassette holds no recorded result for a call
	// (`--live-tools`, or a trusted workspace in the editor). Without it
	// a replay runs nothing (docs/security.md#runs). Live runs and
	// recordings run the tools (the user chose to run the prompt live).
	LiveTools bool
	// LiveToolsHint says how the user allows live tools in this host, for
	// the error of a replay that would have run one; empty means
	// LiveToolsHint.
	LiveToolsHint string
	// Retake, when set, re-runs from the tape of an earlier run (the
	// debugger's what-if, docs/debugging.md#what-if).
	Retake *Retake
	// Now and Nonce pin the run's clock and envelope nonce (run.Config);
	// a host that re-runs a prompt from its recording pins them, with
	// Execution, so that unchanged requests repeat byte for byte.
	Now   func() time.Time
	Nonce string
	// Client, when set, carries the run's model requests and the model
	// catalog instead of the Gateway settings: a host that answers them
	// itself (engine/render's symbolic client, which never reaches a
	// network). Close closes it as any other.
	Client *gateway.Client
	// ModelPicker, when set, replaces the model picker's thresholds
	// (run.ModelConfig.Picker).
	ModelPicker *toolrule.PickerConfig
	// TraceFile, when set, is the file the run's JSON-lines trace
	// (docs/debugging.md#run-traces) goes to: Open creates it (replacing
	// one there) before anything else, so a run Open refuses is traced
	// too, and it is flushed and closed when the run ends, or by Open
	// when it refuses the run, or by Close. A file that cannot be created
	// is a SetupError (OptTrace); Session.TraceErr reports a failed
	// write.
	TraceFile string
	// Trace, when set and TraceFile is not, receives the trace instead,
	// for a host that puts it somewhere of its own (the editor's
	// .forge/runs, a test runner's memory). The host owns the writer (it
	// flushes and closes it after Run or a failed Open).
	Trace io.Writer
}

// Gateway says where a run's model requests go. Replay wins; then Record;
// then File; then URL. With none of them, the gateway comes from the environment
// (gateway.EnvURL and the key), read only when a model is first needed, so
// a prompt that calls no model runs without any configuration.
//
// It is the one place a host's gateway settings meet the environment: a
// run (Open), a model catalog (Gateway.Open) and a live test run
// (Gateway.Config) read them the same way.
type Gateway struct {
	// Replay runs offline against a cassette recorded with Record.
	Replay string
	// Record records every exchange to this cassette file; the gateway
	// comes from URL or the environment and must be configured.
	Record string
	// URL is the gateway API root (including /v1) configured by the host;
	// empty reads gateway.EnvURL.
	URL string
	// KeyEnv names the environment variable holding the API key; empty
	// means gateway.EnvKey. Errors about the key name this variable.
	KeyEnv string
	// Key is the API key itself, for a host that has it already (a test
	// runner's live gateway); empty reads KeyEnv.
	Key string
	// File is a gateway file (docs/gateway.md) served in-process; it wins
	// over URL. Empty reads gateway.EnvConfig.
	File string
}

// lookup is the environment as the gateway sees it: URL, Key and File win
// over the variables, and gateway.EnvKey reads KeyEnv.
func (g Gateway) lookup(env gateway.LookupFunc) gateway.LookupFunc {
	if env == nil {
		env = os.LookupEnv
	}
	return func(k string) (string, bool) {
		switch k {
		case gateway.EnvURL:
			if g.URL != "" {
				return g.URL, true
			}
		case gateway.EnvKey:
			if g.Key != "" {
				return g.Key, true
			}
			k = g.keyEnv()
		case gateway.EnvConfig:
			if g.File != "" {
				return g.File, true
			}
		}
		return env(k)
	}
}

func (g Gateway) keyEnv() string {
	if g.KeyEnv == "" {
		return gateway.EnvKey
	}
	return g.KeyEnv
}

// Config reads the live gateway now (URL or gateway.EnvURL, and the key)
// from env (nil means os.LookupEnv). Its error is a gateway configuration
// error (IsGatewayConfig) that names the key variable the host chose.
func (g Gateway) Config(env gateway.LookupFunc) (gateway.Config, error) {
	c, err := gateway.FromLookup(g.lookup(env), gatewayd.OpenFile)
	if g.File == "" {
		// The gateway file came from the environment: messages name the
		// variable the user set, not the flag.
		const flag = "--gateway-config "
		c.Source = strings.Replace(c.Source, flag, gateway.EnvConfig+"=", 1)
		if err != nil && strings.HasPrefix(err.Error(), flag) {
			err = renamedError{err, gateway.EnvConfig + "=" + strings.TrimPrefix(err.Error(), flag)}
		}
	}
	if err != nil && g.keyEnv() != gateway.EnvKey {
		err = renamedError{err, strings.ReplaceAll(err.Error(), gateway.EnvKey, g.keyEnv())}
	}
	return c, err
}

// Open opens the client the settings name: the cassette to replay, the
// gateway to record (into Record), or the configured gateway (File or
// URL). With
// none of them it returns nil and no error: a run then reads the
// environment when a model is first needed. Close the client.
func (g Gateway) Open(env gateway.LookupFunc) (*gateway.Client, error) {
	switch {
	case g.Replay != "":
		c, err := gateway.NewReplay(g.Replay)
		if err != nil {
			return nil, &SetupError{Option: OptReplay, Err: err}
		}
		return c, nil
	case g.Record != "":
		cfg, err := g.Config(env)
		if err != nil {
			return nil, &SetupError{Option: OptRecord, Err: err}
		}
		c, err := gateway.NewRecording(cfg, g.Record)
		if err != nil {
			return nil, &SetupError{Option: OptRecord, Err: err}
		}
		return c, nil
	case g.URL != "" || g.File != "":
		cfg, err := g.Config(env)
		if err != nil {
			return nil, &SetupError{Option: OptGateway, Err: err}
		}
		return gateway.New(cfg), nil
	}
	return nil, nil
}

// Models fetches the gateway's model catalog (GET /models,
// docs/language.md#model-catalog) as a run would reach the gateway: from
// the cassette to replay, else the gateway file or URL, else the
// environment's gateway. Record is ignored: a catalog fetch writes no
// cassette. Hosts that show or pass on the catalog without a run (the
// language server's budgets, the MCP server's runs) fetch it here; ctx
// bounds the fetch (each request has gateway.DefaultCatalogTimeout).
func (g Gateway) Models(ctx context.Context, env gateway.LookupFunc) ([]gateway.Model, error) {
	g.Record = ""
	c, err := g.Open(env)
	if err != nil {
		return nil, err
	}
	if c == nil {
		cfg, err := g.Config(env)
		if err != nil {
			return nil, err
		}
		c = gateway.New(cfg)
	}
	defer c.Close()
	return c.Models(ctx)
}

// Retake re-runs a prompt from an earlier run's tape: requests are answered
// from Prior while they match it, then from the configured gateway, or,
// when Offline, fail with their first difference from the recording.
// Every exchange of the run, model calls and tool results, lands on
// Record.
type Retake struct {
	Prior, Record *gateway.Tape
	Offline       bool
	// Diverged is told once, at the first request Prior cannot answer.
	Diverged func(*gateway.Divergence)
	// Gate, when set, is asked before the first live call; an error
	// fails the call instead (a debugger's run started ahead of time
	// waits there until the user reaches it).
	Gate func() error
}

// client wraps base (the configured client, or nil for the environment's,
// opened on first need) in the retake.
func (rt *Retake) client(base *gateway.Client, g Gateway, env gateway.LookupFunc) *gateway.Client {
	r := gateway.Retake{Prior: rt.Prior, Record: rt.Record, Diverged: rt.Diverged}
	if !rt.Offline {
		r.Live = func() (*gateway.Client, error) {
			if rt.Gate != nil {
				if err := rt.Gate(); err != nil {
					return nil, err
				}
			}
			if base != nil {
				return base, nil
			}
			cfg, err := g.Config(env)
			if err != nil {
				return nil, err
			}
			return gateway.New(cfg), nil
		}
	}
	return gateway.NewRetake(r)
}

// Option names the setting a SetupError is about.
type Option string

// The settings Open checks.
const (
	OptSection   Option = "section"
	OptReplay    Option = "replay"
	OptRecord    Option = "record"
	OptGateway   Option = "gateway"
	OptToolsFile Option = "tools file"
	OptStore     Option = "store"
	OptTrace     Option = "trace"
)

// SetupError is a setting that keeps the run from starting: an unknown
// section, an unreadable cassette, a gateway that is not configured for
// recording, a broken tools file, a store folder that cannot seed the
// store, a trace file that cannot be created. Nothing has run.
type SetupError struct {
	// Option is the setting at fault.
	Option Option
	// Err says what is wrong with it.
	Err error
}

func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *SetupError) Unwrap() error { return e.Err }

// ParseError is a prompt refused because it does not parse. Nothing has
// run.
type ParseError struct {
	// Path is Options.Path.
	Path string
	// Problems are the parse errors in file order.
	Problems []Problem
}

// Problem is one parse error.
type Problem struct {
	// Line is the 1-based file line.
	Line int
	// Message says what is wrong and how to fix it.
	Message string
}

// maxSummary is how many problems ParseError.Error names.
const maxSummary = 5

// Error summarises the problems on one line (the first few of them).
func (e *ParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the prompt has %d parse error(s); fix them first:", len(e.Problems))
	for i, p := range e.Problems {
		if i == maxSummary {
			b.WriteString(" …")
			break
		}
		fmt.Fprintf(&b, " line %d: %s;", p.Line, p.Message)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// notAPromptMsg is the refusal of a file that does not declare
// promptforge in its frontmatter.
const notAPromptMsg = "not a promptforge prompt: no promptforge version (add `promptforge: 1` to the frontmatter)"

// NotAPromptError refuses a file that does not declare promptforge in its
// frontmatter (docs/language.md#versions): nothing has run. It unwraps to
// a *run.RunError of kind Parse at line 1, so hosts that print run errors
// print it as one; hosts that treat it as a usage error find it with
// errors.As.
type NotAPromptError struct {
	// Path is the file refused.
	Path string
}

func (e *NotAPromptError) Error() string { return notAPromptMsg }

// Unwrap returns the refusal as a run error.
func (e *NotAPromptError) Unwrap() error {
	return &run.RunError{Kind: run.KindParse, Line: 1, Msg: notAPromptMsg}
}

// CheckPrompt returns a *NotAPromptError when src does not declare
// promptforge, nil otherwise. It reads only the frontmatter, leniently,
// so a host can refuse a file before anything else (the debugger's
// breakpoints do).
func CheckPrompt(path string, src []byte) error {
	if _, ok := parse.Probe(src); !ok {
		return &NotAPromptError{Path: path}
	}
	return nil
}

// Session is one prepared run. Run it once, then Close it.
type Session struct {
	prompt *parse.Prompt
	// valid is prompt, validated once by Open; invalid is why it cannot
	// run when it parsed (an unsupported version), returned by Run.
	valid   *run.Valid
	invalid error
	section *parse.Section
	cfg     run.Config
	client  *gateway.Client
	// base is the configured client under a retake (Close closes it).
	base *gateway.Client

	liveTools bool
	liveHint  string
	trace     *trace.Writer
	// traceFile is Options.TraceFile, open until the run ends.
	traceFile *traceFile
}

// traceFile is a trace file Open created: buffered, flushed and closed
// once.
type traceFile struct {
	f    *os.File
	w    *bufio.Writer
	done bool
	err  error
}

func createTrace(path string) (*traceFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &traceFile{f: f, w: bufio.NewWriter(f)}, nil
}

// close flushes and closes the file; its error is the first failure.
func (t *traceFile) close() error {
	if t == nil || t.done {
		return nil
	}
	t.done = true
	t.err = t.w.Flush()
	if err := t.f.Close(); t.err == nil {
		t.err = err
	}
	return t.err
}

// Open prepares a run. Its error is a *NotAPromptError for a file that is
// not a prompt at all, a *ParseError for a prompt with parse errors, or a
// *SetupError.
func Open(opts Options) (*Session, error) {
	var tw *trace.Writer
	var tf *traceFile
	to := opts.Trace
	if opts.TraceFile != "" {
		var err error
		if tf, err = createTrace(opts.TraceFile); err != nil {
			return nil, &SetupError{Option: OptTrace, Err: err}
		}
		to = tf.w
	}
	if to != nil {
		tw = trace.NewWriter(to, opts.Path, opts.Input)
		opts.Observer = trace.Multi(opts.Observer, tw)
	}
	// The store folder is read first, as the hosts did before the
	// session seeded it: a bad folder is named whatever the prompt holds.
	var err error
	if opts.Store == nil && opts.StoreDir != "" {
		if opts.Store, err = SeedStore(opts.StoreDir); err != nil {
			err = &SetupError{Option: OptStore, Err: err}
		}
	}
	var s *Session
	if err == nil {
		s, err = prepare(&opts)
	}
	if err != nil {
		if tw != nil {
			tw.End("", err)
		}
		_ = tf.close()
		return nil, err
	}
	s.trace, s.traceFile = tw, tf
	return s, nil
}

// Validate is the one check of a prompt's text before it runs: it refuses
// a file that does not declare promptforge (a *NotAPromptError, decided
// by the lenient probe before parsing, docs/language.md#versions), parses
// it and refuses parse errors (a *ParseError naming them all), then
// validates it for the run (run.Validate). The prompt is returned when it
// parsed, with the run's error for one that parsed but cannot run (an
// unsupported version). parsed, when it is src as parse.Parse made it
// under path, is used instead of parsing again.
func Validate(path string, src []byte, parsed *parse.Prompt) (*run.Valid, *parse.Prompt, error) {
	p := parsed
	if p == nil || p.File == nil || p.File.Name != path || !bytes.Equal(p.File.Content, src) {
		p = nil
	}
	// A parse without errors that found the version is a prompt by any
	// test; anything else is probed, so that a file that is not a prompt
	// is refused as one whoever parsed it.
	if p == nil || len(p.Errors) > 0 || p.Frontmatter == nil || p.Frontmatter.Version == nil {
		if err := CheckPrompt(path, src); err != nil {
			return nil, nil, err
		}
	}
	if p == nil {
		p = parse.Parse(path, src)
	}
	v, err := run.Validate(p)
	if pe := ParseErrors(path, p); err != nil && pe != nil {
		return nil, nil, pe
	}
	return v, p, err
}

// ParseErrors is the refusal of p for its parse errors, nil when it has
// none: what Open and Validate return, for a host that lists a prompt's
// problems before any run (the MCP server's catalog).
func ParseErrors(path string, p *parse.Prompt) *ParseError {
	if len(p.Errors) == 0 {
		return nil
	}
	pe := &ParseError{Path: path}
	for _, e := range p.Errors {
		pe.Problems = append(pe.Problems, Problem{Line: p.File.Line(e.Span.Start), Message: e.Message})
	}
	return pe
}

func prepare(opts *Options) (*Session, error) {
	v, p, verr := Validate(opts.Path, opts.Source, opts.Parsed)
	if p == nil {
		return nil, verr
	}
	// A version this build does not run fails the run, not its set-up.
	s := &Session{prompt: p, valid: v, invalid: verr, liveTools: opts.LiveTools, liveHint: opts.LiveToolsHint}
	if s.liveHint == "" {
		s.liveHint = LiveToolsHint
	}
	if opts.Section != "" {
		sec, err := parse.FindSection(p, opts.Section)
		if err != nil {
			return nil, &SetupError{Option: OptSection, Err: err}
		}
		s.section = sec
	}
	env := opts.Env
	if env == nil {
		env = os.LookupEnv
	}
	s.cfg = run.Config{
		Input:     opts.Input,
		Execution: opts.Execution,
		Store:     opts.Store,
		Observer:  opts.Observer,
		Limits:    opts.Limits,
		Now:       opts.Now,
		Nonce:     opts.Nonce,
	}
	switch t := s.cfg.Limits.Timeout; {
	case t == 0:
		s.cfg.Limits.Timeout = DefaultTimeout
	case t < 0:
		s.cfg.Limits.Timeout = 0
	}
	if s.cfg.Execution == "" {
		s.cfg.Execution = opts.ExecutionPrefix + randomID()
	}
	if s.cfg.Store == nil {
		s.cfg.Store = store.New()
	}
	allow, _ := env(tools.WebFetchAllowPrivateEnv)
	s.cfg.Tools.WebFetchAllowPrivate = allow == "1"
	s.cfg.Tools.DisableWebSearch = opts.DisableWebSearch
	client := opts.Client
	if client == nil {
		var err error
		if client, err = opts.Gateway.Open(env); err != nil {
			return nil, err
		}
	}
	if opts.Retake != nil {
		s.base = client
		client = opts.Retake.client(client, opts.Gateway, env)
	}
	s.client = client
	gw := opts.Gateway
	s.cfg.Models = run.ModelConfig{Client: client, Catalog: opts.ModelCatalog,
		Connect: func() (gateway.Config, error) { return gw.Config(env) }}
	if opts.ModelPicker != nil {
		s.cfg.Models.Picker = *opts.ModelPicker
	}
	dir := opts.ToolsDir
	if dir == "" {
		dir = toolcat.PromptDir(opts.Path)
	}
	var extra []tools.Tool
	var err error
	if opts.Tools != nil {
		extra, err = opts.Tools.load(opts.ToolsFile, dir)
	} else {
		extra, err = workspaceTools(opts.ToolsFile, dir)
	}
	if err != nil {
		s.Close()
		return nil, &SetupError{Option: OptToolsFile, Err: err}
	}
	// web_fetch and the workspace commands act on this machine: they go
	// through the replay gate, web_fetch first as the run would add it.
	var machine []tools.Tool
	if !opts.DisableWebFetch {
		machine = append(machine, tools.NewGuardedWebFetch(s.cfg.Tools.WebFetchAllowPrivate))
	}
	s.cfg.Tools.DisableWebFetch = true
	s.cfg.Tools.Extra = s.gate(append(machine, extra...))
	return s, nil
}

// renamedError is a gateway error whose text names the host's key
// variable; errors.As still finds the gateway error.
type renamedError struct {
	err error
	msg string
}

func (e renamedError) Error() string { return e.msg }
func (e renamedError) Unwrap() error { return e.err }

// workspaceTools loads file, or the forge-tools.json found at or above
// dir; neither gives no tools.
func workspaceTools(file, dir string) ([]tools.Tool, error) {
	file = toolcat.Resolve(file, dir)
	if file == "" {
		return nil, nil
	}
	return tools.LoadWorkspaceTools(file)
}

// Prompt is the parsed prompt.
func (s *Session) Prompt() *parse.Prompt { return s.prompt }

// Section is the section that runs, nil for the whole prompt.
func (s *Session) Section() *parse.Section { return s.section }

// Store is the run's store, readable after Run.
func (s *Session) Store() *store.Store { return s.cfg.Store }

// Client is the run's gateway client, open until Close: a host may send
// its own requests after Run (the test runner's judge), recorded in or
// replayed from the same cassette as the run's.
func (s *Session) Client() *gateway.Client { return s.client }

// Execution is the run's execution id (sys.execution).
func (s *Session) Execution() string { return s.cfg.Execution }

// Run runs the prompt (or the H1 and the one section,
// docs/language.md#running-one-section)
// and returns its result. Cancelling ctx stops the run; its error is then
// a *run.RunError for which IsCancelled is true. Every error is a
// *run.RunError.
func (s *Session) Run(ctx context.Context) (string, error) {
	var res string
	var err error
	switch {
	case s.invalid != nil:
		err = s.invalid
	case s.section != nil:
		res, err = s.valid.RunSection(ctx, s.section, s.cfg)
	default:
		res, err = s.valid.Run(ctx, s.cfg)
	}
	if err != nil {
		err = run.AsRunError(err)
	}
	if s.trace != nil {
		s.trace.End(res, err)
	}
	_ = s.traceFile.close()
	return res, err
}

// TraceErr is the first failed write of the trace (Options.TraceFile or
// Options.Trace), its flush and close included, nil when all went well
// or there is no trace.
func (s *Session) TraceErr() error {
	if s.trace == nil {
		return nil
	}
	if err := s.trace.Err(); err != nil {
		return err
	}
	if s.traceFile != nil {
		return s.traceFile.err
	}
	return nil
}

// Close releases the gateway client. For a recording it writes the
// cassette, and its error means the cassette is incomplete; for a replay
// it reports recorded exchanges the run did not use.
func (s *Session) Close() error {
	_ = s.traceFile.close()
	if s.base != nil {
		b := s.base
		s.base, s.client = nil, nil
		return b.Close()
	}
	if s.client == nil {
		return nil
	}
	c := s.client
	s.client = nil
	return c.Close()
}

// Carry is the tape a retake of this run starts from (gateway.Client.Carry):
// this run's exchanges, then the prior tape's it did not ask for; nil when
// the run is not a retake. Call it before Close.
func (s *Session) Carry() *gateway.Tape { return s.client.Carry() }

// IsGatewayConfig reports whether err (from Open or Run) is about a
// missing or invalid gateway configuration, for which a host may add its
// own advice on where to set it.
func IsGatewayConfig(err error) bool { return gateway.IsConfig(err) }

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
