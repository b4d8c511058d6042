// Package mcp is `forge-lsp mcp`: a Model Context Protocol server that
// runs a workspace's prompts for agent harnesses the way upstream
// PromptForge's promptforge-mcp-server does (four fixed tools over a
// catalog from prompts.toml), plus three authoring tools (check_prompt,
// lookup_docs, run_tests) for an agent that writes prompts. It is built on
// the official Go SDK; docs/mcp.md is its user documentation.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
)

// pageSize is how many prompts one list_prompts page holds.
const pageSize = 100

// maxCapability bounds need_prompt's description.
const maxCapability = 4096

// instructions is what the server tells a client at initialisation.
const instructions = "This server executes PromptForge prompts. It runs a prompt only when a caller names one: list_prompts reports the names it can run, and run_prompt takes one of those names. " +
	"A prompt's value is a finished artifact written for the user to read, so pass it through as it stands rather than restating it. " +
	"check_prompt, lookup_docs and run_tests help an agent that writes prompts: they report what `forge-lsp check` and `forge-lsp test` would."

// Server serves one catalog. It is safe for concurrent use by any number
// of client sessions.
type Server struct {
	cfg     atomic.Pointer[Config]
	catalog atomic.Pointer[Catalog]
	runs    *registry
	log     *slog.Logger
	// secrets are the strings no result, error or log line may carry.
	secretsMu sync.RWMutex
	secrets   []string
	// env reads the process environment (the gateway when prompts.toml has
	// no [gateway]); tests replace it.
	env gateway.LookupFunc
	mcp *sdk.Server
	// reloadMu serialises reloads.
	reloadMu sync.Mutex
	// resolvedPrint is the fingerprint of the files as the catalog was
	// first resolved from them, where Watch starts.
	resolvedPrint uint64
	// sessions holds, per client session, a channel closed when it ends.
	sessions sync.Map
	// models caches the gateway's model catalog (see modelCatalog).
	modelsMu     sync.Mutex
	models       []gateway.Model
	modelsFailed time.Time
	// prompts are the MCP prompts served, by name (see syncPrompts).
	promptsMu sync.Mutex
	prompts   map[string]*sdk.Prompt
	// tel exports each run's spans; nil when export is off.
	tel *telemetry.Telemetry
}

// Options are a Server's host choices.
type Options struct {
	// Version is forge-lsp's version, reported to clients.
	Version string
	// Log receives the server's log lines (never stdout on stdio); nil
	// discards them. Secrets are removed before they are written.
	Log io.Writer
	// Env reads environment variables; nil means os.LookupEnv.
	Env gateway.LookupFunc
	// Telemetry exports each run's span tree over OTLP; nil: off.
	Telemetry *telemetry.Telemetry
}

// NewServer resolves cfg's catalog (a broken prompt is listed with its
// problem; a fault of the configuration is an error) and builds the
// server.
func NewServer(cfg *Config, opts Options) (*Server, error) {
	s := &Server{runs: newRegistry(cfg.Server), env: opts.Env, tel: opts.Telemetry}
	if s.env == nil {
		s.env = os.LookupEnv
	}
	s.setConfig(cfg)
	s.resolvedPrint = s.fingerprint()
	// A broken prompt is listed with its problem, as after a live edit,
	// so that check_prompt stays usable to fix it; faults of the
	// configuration itself still stop the server.
	cat, err := Resolve(cfg, true)
	if err != nil {
		return nil, err
	}
	var lw logWriter = discard{}
	if opts.Log != nil {
		lw = opts.Log
	}
	s.log = newLogger(s, lw)
	for _, e := range cat.Entries {
		if e.Problem != "" {
			s.log.Warn("a prompt is broken: it is listed with its problem and cannot run until fixed", "prompt", e.Name, "path", rel(cfg.Prompts, e.Path), "problem", e.Problem)
		}
	}
	s.catalog.Store(cat)
	version := opts.Version
	if version == "" {
		version = "devel"
	}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "forge-lsp", Version: version}, &sdk.ServerOptions{
		Instructions: instructions,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Prompts: &sdk.PromptCapabilities{ListChanged: true}},
	})
	s.mcp.AddReceivingMiddleware(s.redactMiddleware, s.capMiddleware)
	s.addTools()
	s.prompts = map[string]*sdk.Prompt{}
	s.syncPrompts(cat)
	return s, nil
}

// config is the configuration as last loaded.
func (s *Server) config() *Config { return s.cfg.Load() }

// setConfig publishes cfg and remembers its secrets: the gateway key
// (from the environment) and the bearer token.
func (s *Server) setConfig(cfg *Config) {
	k, _ := s.env(gateway.EnvKey)
	keys := append([]string{cfg.Server.APIKey, k}, gatewayFileSecrets(s.env)...)
	s.secretsMu.Lock()
	for _, k := range keys {
		if len(k) >= 4 && !slices.Contains(s.secrets, k) {
			s.secrets = append(s.secrets, k)
		}
	}
	s.secretsMu.Unlock()
	s.cfg.Store(cfg)
}

// gatewayFileSecrets are the keys of the gateway file the user named, if
// any: an endpoint that echoes its key must not hand it to the client.
func gatewayFileSecrets(env gateway.LookupFunc) []string {
	file, ok := env(gateway.EnvConfig)
	if !ok || file == "" {
		return nil
	}
	c, err := gatewayd.Load(file, env)
	if err != nil {
		return nil // the run reports it
	}
	var keys []string
	if c.Server != nil {
		keys = append(keys, c.Server.APIKey.Expose())
	}
	for _, e := range c.Endpoints {
		keys = append(keys, e.APIKey.Expose())
	}
	if c.Tools != nil && c.Tools.WebSearch != nil {
		keys = append(keys, c.Tools.WebSearch.APIKey.Expose())
	}
	return keys
}

func (s *Server) secretList() []string {
	s.secretsMu.RLock()
	defer s.secretsMu.RUnlock()
	return s.secrets
}

// MCP is the SDK server, for a transport to serve.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Catalog is the catalog as it stands.
func (s *Server) Catalog() *Catalog { return s.catalog.Load() }

// Shutdown cancels the runs still going and waits for them until ctx ends.
func (s *Server) Shutdown(ctx context.Context) {
	s.runs.cancelAll()
	s.runs.wait(ctx)
}

type logWriter = io.Writer

// newLogger logs text lines to w with the secrets removed.
func newLogger(s *Server, w logWriter) *slog.Logger {
	return slog.New(slog.NewTextHandler(&redactWriter{w: w, s: s}, nil))
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// redactWriter removes secrets from log lines.
type redactWriter struct {
	w logWriter
	s *Server
}

func (r *redactWriter) Write(b []byte) (int, error) {
	if _, err := r.w.Write([]byte(r.s.redact(string(b)))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// redact replaces every secret (the gateway key, the bearer token) in t.
func (s *Server) redact(t string) string {
	for _, k := range s.secretList() {
		t = strings.ReplaceAll(t, k, "[redacted]")
	}
	return t
}

// redactMiddleware makes sure no tool result or error carries a secret,
// whatever produced it (a gateway that echoes the key, a prompt that
// prints its environment).
func (s *Server) redactMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if len(s.secretList()) == 0 {
			return res, err
		}
		if err != nil {
			if we, ok := err.(*jsonrpc.Error); ok {
				c := *we
				c.Message = s.redact(c.Message)
				err = &c
			} else if red := s.redact(err.Error()); red != err.Error() {
				err = fmt.Errorf("%s", red)
			}
		}
		if tr, ok := res.(*sdk.CallToolResult); ok && tr != nil {
			b, merr := json.Marshal(tr)
			if merr == nil {
				red := s.redactJSON(string(b))
				if red != string(b) {
					var clean sdk.CallToolResult
					if json.Unmarshal([]byte(red), &clean) == nil {
						return &clean, err
					}
				}
			}
		}
		return res, err
	}
}

// redactJSON replaces the secrets in JSON text, in their JSON-escaped
// spelling as well as the plain one.
func (s *Server) redactJSON(t string) string {
	for _, k := range s.secretList() {
		q, _ := json.Marshal(k)
		esc := string(q[1 : len(q)-1])
		t = strings.ReplaceAll(t, esc, "[redacted]")
		t = strings.ReplaceAll(t, k, "[redacted]")
	}
	return t
}

// Tool inputs. The descriptions are the ones upstream publishes.
type listPromptsIn struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"A pagination cursor from a previous listing's next_cursor, to read the page after it. Omitting it reads the first page."`
}

type runPromptIn struct {
	Prompt     string `json:"prompt" jsonschema:"The exact name of the prompt to run, as list_prompts reports it."`
	Args       string `json:"args,omitempty" jsonschema:"The prompt's input, as one raw string. Omitting it passes the empty string."`
	InputFile  string `json:"input_file,omitempty" jsonschema:"Filesystem path to read into the prompt's store. Mutually exclusive with input_text."`
	InputText  string `json:"input_text,omitempty" jsonschema:"Text to place directly in the prompt's store. Mutually exclusive with input_file."`
	OutputFile string `json:"output_file,omitempty" jsonschema:"Filesystem path to write the prompt's output file to. Omit to return output inline."`
}

type checkRunIn struct {
	RunID string `json:"run_id" jsonschema:"The run id from an earlier result whose status was running."`
}

const capabilityHelp = `State the capability the way a tool author would document it: an imperative phrase naming the operation and what it acts on, with no entity names, task specifics, or conversational framing. Good: "Build a stakeholder position report for one entity." Bad: "I need to know what Herb Sutter has said about ABI stability."`

type needPromptIn struct {
	// Its description is capabilityHelp, set in addTools (a struct tag
	// cannot hold its quotes).
	Capability string `json:"capability"`
}

// PromptInfo is one list_prompts entry.
type PromptInfo struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Problem     *string    `json:"problem"`
	Input       *IODeclare `json:"input,omitempty"`
	Output      *IODeclare `json:"output,omitempty"`
}

// IODeclare is a prompt's declared input or output store file.
type IODeclare struct {
	Path        string `json:"path"`
	Description string `json:"description"`
}

func (s *Server) addTools() {
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "list_prompts",
		Description: "Names the PromptForge prompts this server can run. Each entry carries the prompt's name, its description, and any problem that currently stops it running. The listing is read from the catalog as it stands, so a prompt written or edited since this conversation began is already in it. run_prompt takes a name from this listing."},
		s.listPrompts)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "run_prompt",
		Description: "Runs the named PromptForge prompt and returns what it produced. This server executes prompts the caller names; the prompt argument is that name, as list_prompts reports it. A prompt's value is a finished artifact written for the user to read, so pass it through as it stands rather than restating it."},
		s.runPrompt)
	needSchema, err := jsonschema.For[needPromptIn](nil)
	if err != nil {
		panic(err) // a fixed type
	}
	needSchema.Properties["capability"].Description = capabilityHelp
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "need_prompt", InputSchema: needSchema,
		Description: "Resolves a described PromptForge prompt to the names of the closest prompts, up to three, best first. It is for a caller who was given a prompt by description rather than by name; it returns names and runs nothing, and run_prompt takes one of them. " + capabilityHelp},
		s.needPrompt)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "check_run",
		Description: "Collects a PromptForge run that outlived the call which started it. Takes the run id from a result whose status was running, and reports that run's status now, with its value once it has finished. A prompt's value is a finished artifact written for the user to read, so pass it through as it stands rather than restating it."},
		s.checkRun)
	s.addAuthoringTools()
	s.addOutlineTool()
}

// structured is a tool result with its JSON text beside it.
func structured(v any, isError bool) (*sdk.CallToolResult, any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b), IsError: isError}, nil, nil
}

// textError is a result the calling model reads and acts on.
func textError(msg string) (*sdk.CallToolResult, any, error) {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}, IsError: true}, nil, nil
}

func invalidParams(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

func (s *Server) listPrompts(_ context.Context, _ *sdk.CallToolRequest, in listPromptsIn) (*sdk.CallToolResult, any, error) {
	cat := s.Catalog()
	start := 0
	if in.Cursor != "" {
		n, err := strconv.Atoi(in.Cursor)
		if err != nil || n < 0 {
			return nil, nil, invalidParams("cursor %q is not a valid pagination cursor; pass a next_cursor from a previous listing, or none for the first page", in.Cursor)
		}
		start = n
	}
	end := min(start+pageSize, len(cat.Entries))
	start = min(start, end)
	out := struct {
		Prompts    []PromptInfo `json:"prompts"`
		NextCursor string       `json:"next_cursor,omitempty"`
	}{Prompts: []PromptInfo{}}
	for _, e := range cat.Entries[start:end] {
		pi := PromptInfo{Name: e.Name, Description: e.Description}
		if e.Problem != "" {
			p := e.Problem
			pi.Problem = &p
		}
		if e.Input != nil {
			pi.Input = &IODeclare{e.Input.Path, e.Input.Description}
		}
		if e.Output != nil {
			pi.Output = &IODeclare{e.Output.Path, e.Output.Description}
		}
		out.Prompts = append(out.Prompts, pi)
	}
	if end < len(cat.Entries) {
		out.NextCursor = strconv.Itoa(end)
	}
	return structured(out, false)
}

func (s *Server) needPrompt(_ context.Context, _ *sdk.CallToolRequest, in needPromptIn) (*sdk.CallToolResult, any, error) {
	if len(in.Capability) > maxCapability {
		return textError(fmt.Sprintf("capability is %d bytes, over the %d-byte limit; state it as one short imperative phrase.", len(in.Capability), maxCapability))
	}
	if strings.TrimSpace(in.Capability) == "" {
		return textError("capability is empty; " + capabilityHelp)
	}
	type cand struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	out := struct {
		Prompts []cand `json:"prompts"`
	}{Prompts: []cand{}}
	for _, e := range s.Catalog().Closest(in.Capability, 3) {
		out.Prompts = append(out.Prompts, cand{e.Name, e.Description})
	}
	return structured(out, false)
}

func (s *Server) checkRun(_ context.Context, _ *sdk.CallToolRequest, in checkRunIn) (*sdk.CallToolResult, any, error) {
	res, ok := s.runs.check(in.RunID)
	if !ok {
		return textError(s.runs.unknown(in.RunID))
	}
	return runResult(res)
}

func runResult(r RunResult) (*sdk.CallToolResult, any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.text()}}, StructuredContent: json.RawMessage(b), IsError: r.Status == StatusFailed}, nil, nil
}

func failed(prompt, msg string, turns int, elapsed time.Duration) RunResult {
	return RunResult{Prompt: prompt, Status: StatusFailed, Error: &msg, Turns: turns, ElapsedMS: elapsed.Milliseconds()}
}

func (s *Server) runPrompt(ctx context.Context, req *sdk.CallToolRequest, in runPromptIn) (*sdk.CallToolResult, any, error) {
	if in.InputFile != "" && in.InputText != "" {
		return nil, nil, invalidParams("input_file and input_text are mutually exclusive; specify one, not both")
	}
	cat := s.Catalog()
	e := cat.Lookup(in.Prompt)
	if e == nil {
		msg := fmt.Sprintf("there is no prompt named %q, so nothing was run. ", in.Prompt)
		if names := cat.Nearest(in.Prompt); len(names) > 0 {
			msg += "Enabled prompts, closest first: " + strings.Join(names, ", ") + "."
		} else {
			msg += "No prompts are enabled."
		}
		return textError(msg)
	}
	if e.Problem != "" {
		r := failed(e.Name, e.Problem, 0, 0)
		r.RunID = newRunID()
		return runResult(r)
	}
	prog := newProgress(ctx, req)
	p, bad := s.prepare(e, in, prog)
	if bad != nil {
		prog.stop()
		return runResult(*bad)
	}
	release, ok := s.runs.admit(ctx)
	if !ok {
		prog.stop()
		p.sess.Close()
		p.spans.End(errRefused)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		s.log.Warn("no run slot came free: refusing the call, which can be retried", "prompt", e.Name)
		return textError(s.runs.refusal())
	}
	rec := s.runs.start(e.Name, func(runCtx context.Context, rec *record) RunResult {
		defer release()
		return s.execute(runCtx, e, in, p)
	})
	// A client that disconnects while its call waits cancels the run.
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	if req.Session != nil {
		closed := s.sessionClosed(req.Session)
		go func() {
			select {
			case <-closed:
				stop()
			case <-callCtx.Done():
			}
		}()
	}
	res, err := s.runs.settle(callCtx, rec)
	prog.stop()
	if err != nil {
		s.log.Info("the client went away; the run is cancelled", "run_id", rec.id, "prompt", e.Name)
		return nil, nil, err
	}
	return runResult(res)
}

// sessionClosed is a channel closed when ss ends.
func (s *Server) sessionClosed(ss *sdk.ServerSession) <-chan struct{} {
	ch := make(chan struct{})
	got, loaded := s.sessions.LoadOrStore(ss, ch)
	if !loaded {
		go func() {
			_ = ss.Wait()
			close(ch)
			s.sessions.Delete(ss)
		}()
	}
	return got.(chan struct{})
}

// modelCatalog is the gateway's model catalog, fetched on first need and
// kept until a reload, as upstream fetches it once at start-up: every run
// then saves a round trip. nil when it cannot be fetched; a run then
// fetches it itself and reports what went wrong.
func (s *Server) modelCatalog() []gateway.Model {
	s.modelsMu.Lock()
	defer s.modelsMu.Unlock()
	if s.models != nil || time.Since(s.modelsFailed) < modelRetry {
		return s.models
	}
	ctx, cancel := context.WithTimeout(context.Background(), modelFetchTimeout)
	defer cancel()
	models, err := session.Gateway{}.Models(ctx, s.env)
	if err != nil || len(models) == 0 {
		s.modelsFailed = time.Now()
		return nil
	}
	s.models = models
	return models
}

// How long the catalog fetch may take, and how long after a failed one
// runs fetch the catalog themselves without the server trying again.
const (
	modelFetchTimeout = 5 * time.Second
	modelRetry        = 30 * time.Second
)

// forgetModels drops the cached model catalog.
func (s *Server) forgetModels() {
	s.modelsMu.Lock()
	s.models, s.modelsFailed = nil, time.Time{}
	s.modelsMu.Unlock()
}

// prepared is a run set up and waiting for a slot.
type prepared struct {
	sess  *session.Session
	st    *store.Store
	obs   *observer
	spans *telemetry.Run // nil with OpenTelemetry export off
}

// prepare does what a run needs before it takes a slot, as upstream
// parses before admission: it reads the input into the store and opens
// the run through engine/session (the set-up and budgets of `forge-lsp
// run`). Nothing reaches the gateway yet. A failure is the run's result.
func (s *Server) prepare(e *Entry, in runPromptIn, prog *progress) (*prepared, *RunResult) {
	fail := func(msg string) (*prepared, *RunResult) {
		r := failed(e.Name, msg, 0, 0)
		r.RunID = newRunID()
		return nil, &r
	}
	st := store.New()
	cfg := s.config()
	if in.OutputFile != "" {
		if err := outputInside(cfg.Workspace, in.OutputFile); err != nil {
			return fail(err.Error())
		}
	}
	content, hasInput := "", false
	switch {
	case in.InputFile != "":
		if err := fsread.Inside(cfg.Workspace, in.InputFile, "input_file"); err != nil {
			return fail(fmt.Sprintf("cannot read input_file: %v (docs/security.md#repository-files)", err))
		}
		b, err := fsread.ReadFile(in.InputFile, fsread.StoreSeed)
		if err != nil {
			return fail(fmt.Sprintf("cannot read input_file %q: %v", in.InputFile, err))
		}
		content, hasInput = string(b), true
	case in.InputText != "":
		content, hasInput = in.InputText, true
	}
	if hasInput {
		if e.Input == nil {
			return fail("input_file or input_text was provided but the prompt declares no input")
		}
		if err := st.Write(e.Input.Path, content); err != nil {
			return fail(fmt.Sprintf("cannot place the input at %q in the store: %v", e.Input.Path, err))
		}
	}
	obs := &observer{prog: prog}
	hook, spans := s.startSpans(e, obs)
	// The budgets of `forge-lsp run`, its wall-clock default included
	// (zero Limits: the session's defaults).
	opts := session.Options{
		Path: e.Path, Source: e.Source, Input: in.Args, Observer: hook, Store: st,
		ExecutionPrefix: "mcp-",
		DisableWebFetch: !cfg.WebFetch, DisableWebSearch: !cfg.WebSearch,
		Env: s.env,
	}
	opts.ModelCatalog = s.modelCatalog()
	sess, err := session.Open(opts)
	if err != nil {
		spans.End(err)
		return fail(err.Error())
	}
	return &prepared{sess: sess, st: st, obs: obs, spans: spans}, nil
}

// execute runs a prepared prompt, then moves the declared output to
// output_file or into the value.
func (s *Server) execute(ctx context.Context, e *Entry, in runPromptIn, p *prepared) RunResult {
	started := time.Now()
	value, err := p.sess.Run(p.spans.Context(ctx))
	p.spans.End(err)
	if cerr := p.sess.Close(); cerr != nil && err == nil {
		s.log.Warn("closing the gateway client", "prompt", e.Name, "error", cerr.Error())
	}
	turns := int(p.obs.turns.Load())
	elapsed := time.Since(started)
	if err != nil {
		msg := run.AsRunError(err).Error()
		if ctx.Err() != nil {
			msg = "the run was cancelled: " + msg
		}
		s.log.Info("run failed", "prompt", e.Name, "turns", turns, "elapsed_ms", elapsed.Milliseconds())
		return failed(e.Name, msg, turns, elapsed)
	}
	if e.Output != nil {
		out, rerr := p.st.Read(e.Output.Path)
		switch {
		case rerr != nil:
			value += fmt.Sprintf("\n\n[note: the prompt declares output %q but it was not produced]", e.Output.Path)
		case in.OutputFile == "":
			value = out
		default:
			// Checked again: a link may have been planted since prepare.
			werr := outputInside(s.config().Workspace, in.OutputFile)
			if werr == nil {
				werr = os.WriteFile(in.OutputFile, []byte(out), 0o644)
			}
			if werr != nil {
				value += fmt.Sprintf("\n\n[note: could not write output to %q: %v]", in.OutputFile, werr)
			}
		}
	}
	s.log.Info("run completed", "prompt", e.Name, "turns", turns, "elapsed_ms", elapsed.Milliseconds())
	return RunResult{Prompt: e.Name, Status: StatusCompleted, Value: &value, Turns: turns, ElapsedMS: elapsed.Milliseconds()}
}

// outputInside refuses an output_file that resolves, links included,
// outside the workspace, or into a .git folder (a hook written there runs
// at the next git command).
func outputInside(workspace, path string) error {
	if err := fsread.Inside(workspace, path, "output_file"); err != nil {
		return fmt.Errorf("cannot write output_file: %v (docs/security.md#repository-files)", err)
	}
	abs, _ := filepath.Abs(path)
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	if w, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = w
	}
	if rel, err := filepath.Rel(workspace, abs); err == nil {
		for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
			if strings.EqualFold(seg, ".git") {
				return fmt.Errorf("cannot write output_file %s: it is inside .git (docs/security.md#repository-files)", filepath.ToSlash(path))
			}
		}
	}
	return nil
}

// observer counts a run's model rounds and reports its progress.
type observer struct {
	turns atomic.Int64
	prog  *progress
}

func (o *observer) SectionEnter(ev run.SectionEvent) {
	if ev.ID == 0 {
		o.prog.send("running the H1")
		return
	}
	o.prog.send("entering " + ev.Address)
}
func (o *observer) SectionExit(run.SectionEvent) {}
func (o *observer) ModelRound(ev run.ModelRoundEvent) {
	n := o.turns.Add(1)
	o.prog.send(fmt.Sprintf("model round %d done", n))
}
func (o *observer) ToolCall(ev run.ToolCallEvent) { o.prog.send("tool call " + ev.Alias) }
func (o *observer) Log(run.LogEvent)              {}

// progress sends notifications/progress for a call that carries a
// progressToken, from a queue so the run never waits for the client;
// frames that find the queue full are dropped. stop flushes what is
// queued, so the notifications come before the call's answer, and ends
// the reporting (a run that goes on in the background reports nothing
// more).
type progress struct {
	frames   chan string
	done     chan struct{}
	finished chan struct{}
	once     sync.Once
}

func newProgress(ctx context.Context, req *sdk.CallToolRequest) *progress {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return nil
	}
	p := &progress{frames: make(chan string, 64), done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(p.finished)
		n := 0.0
		notify := func(m string) {
			n++
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: n, Message: m})
		}
		for {
			select {
			case m := <-p.frames:
				notify(m)
			case <-ctx.Done():
				return
			case <-p.done:
				for {
					select {
					case m := <-p.frames:
						notify(m)
					default:
						return
					}
				}
			}
		}
	}()
	return p
}

func (p *progress) send(m string) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
	case p.frames <- m:
	default:
	}
}

// stop flushes the queued frames and ends the reporting.
func (p *progress) stop() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.done) })
	<-p.finished
}
