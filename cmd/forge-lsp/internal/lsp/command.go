package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// requestFailed is LSP's RequestFailed error code: the command ran and
// the run failed.
const requestFailed jsonrpc2.Code = -32803

// reasonGatewayConfig is the "reason" in the data of a run's error reply
// when the gateway is missing or misconfigured. The message names the
// server settings; an editor that sees this reason adds where its own
// users set them (a settings page, a key command).
const reasonGatewayConfig = "gatewayConfig"

// gatewayHint follows a gateway configuration error: where a client sets
// the gateway through this server.
const gatewayHint = " (server settings: gatewayConfig (a gateway file, docs/gateway.md), or gatewayUrl and cassette, with the key in the environment variable named by apiKeyEnv, default " + envAPIKey + "; see docs/lsp.md)"

// executeParams is ExecuteCommandParams with the client's optional
// work-done token kept as raw JSON (a string or an integer).
type executeParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken"`
}

// runResult is what forge.runSection and forge.runPrompt return.
type runResult struct {
	// Result is the run's result text.
	Result string `json:"result"`
	// Section is the section that ran ("" for the whole prompt).
	Section string `json:"section,omitempty"`
	// Version is the document version that ran (the unsaved buffer).
	Version int32 `json:"version"`
	// DurationMs is the run's wall time.
	DurationMs int64 `json:"durationMs"`
}

// executeCommand starts a run and replies when it ends. It returns at once
// so the connection keeps reading: $/cancelRequest and progress
// cancellation must get through while the run is going.
func (s *server) executeCommand(ctx context.Context, raw json.RawMessage, reply jsonrpc2.Replier) {
	var p executeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err))
		return
	}
	if p.Command == commandRunTest {
		s.runTestCommand(ctx, p, reply)
		return
	}
	if h, ok := commands[p.Command]; ok {
		h(s, ctx, p, reply)
		return
	}
	if p.Command != commandRunSection && p.Command != commandRunPrompt {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q (this server executes %s)", p.Command, strings.Join(commandNames(), ", ")))
		return
	}
	var args runArgs
	if len(p.Arguments) != 1 || json.Unmarshal(p.Arguments[0], &args) != nil || args.URI == "" {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes one argument object {uri, section?, input?}", p.Command))
		return
	}
	if p.Command == commandRunSection && strings.TrimSpace(args.Section) == "" {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s needs a section (\"## Name\")", commandRunSection))
		return
	}
	if p.Command == commandRunPrompt {
		args.Section = ""
	}

	s.mu.Lock()
	d := s.docs[uriKey(args.URI)]
	var text []byte
	var version int32
	var parsed *parse.Prompt
	if d != nil {
		text, version = d.text, d.version
		if d.snap != nil && d.snap.version == version {
			// The run starts from the version's parse (the session uses
			// it only for exactly this text and name).
			parsed = d.snap.prompt
		}
	}
	cfg := s.cfg
	progress := s.client.workDoneProgress
	s.mu.Unlock()
	if d == nil {
		_ = reply(ctx, nil, docNotOpen(args.URI))
		return
	}
	tok, clientTok := progressToken(p.WorkDoneToken)
	if tok == "" {
		s.reqMu.Lock()
		s.nextTok++
		tok = fmt.Sprintf("forge-run-%d", s.nextTok)
		s.reqMu.Unlock()
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.reqMu.Lock()
	s.runs[tok] = cancel
	s.reqMu.Unlock()

	s.goBackground("run", func() {
		defer func() {
			s.reqMu.Lock()
			delete(s.runs, tok)
			s.reqMu.Unlock()
			cancel()
		}()
		r := &runner{s: s, token: tok, progress: progress || clientTok, tokenJSON: p.WorkDoneToken, parsed: parsed}
		if progress && !clientTok {
			// Server-initiated progress must be created first; a client
			// that refuses gets no $/progress (the run still goes on).
			var res json.RawMessage
			if _, err := s.conn.Call(runCtx, protocol.MethodWorkDoneProgressCreate, map[string]any{"token": tok}, &res); err != nil {
				r.progress = false
			}
		}
		res, err := r.run(runCtx, args, text, version, cfg)
		if err != nil {
			_ = reply(ctx, nil, err)
			return
		}
		_ = reply(ctx, res, nil)
	})
}

// progressToken reads a client-supplied work-done token.
func progressToken(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, true
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return fmt.Sprintf("%d", int64(n)), true
	}
	return "", false
}

func (s *server) progressCancel(ctx context.Context, p *struct {
	Token json.RawMessage `json:"token"`
}) (any, error) {
	tok, ok := progressToken(p.Token)
	if !ok {
		return nil, nil
	}
	s.reqMu.Lock()
	c := s.runs[tok]
	s.reqMu.Unlock()
	if c != nil {
		c()
	}
	return nil, nil
}

// runner is one editor-initiated run: it reports progress and streams the
// transcript while the engine works.
type runner struct {
	s         *server
	token     string
	tokenJSON json.RawMessage
	progress  bool
	mu        sync.Mutex // the observer is called from fanout arms concurrently
	sections  int
	rounds    int
	calls     int
	// streams holds the rounds whose answer is streaming (runtext.go).
	streams map[roundKey]*streamed
	// parsed is the document's parse of the text the run runs, if any.
	parsed *parse.Prompt
}

// progressParams is $/progress with the token in the client's own form.
type progressParams struct {
	Token any `json:"token"`
	Value any `json:"value"`
}

func (r *runner) tokenValue() any {
	if len(r.tokenJSON) > 0 && string(r.tokenJSON) != "null" {
		return r.tokenJSON
	}
	return r.token
}

func (r *runner) report(kind, msg string, title string) {
	if !r.progress {
		return
	}
	var v any
	switch kind {
	case "begin":
		v = &protocol.WorkDoneProgressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: title, Cancellable: true, Message: msg}
	case "report":
		v = &protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Cancellable: true, Message: msg}
	default:
		v = &protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: msg}
	}
	r.s.notify(protocol.MethodProgress, &progressParams{Token: r.tokenValue(), Value: v})
}

// transcript streams one line of the run's transcript as window/logMessage.
func (r *runner) transcript(format string, a ...any) {
	r.s.logMessage(protocol.MessageTypeLog, "[forge run "+r.token+"] "+fmt.Sprintf(format, a...))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func (r *runner) SectionEnter(ev run.SectionEvent) {
	r.mu.Lock()
	r.sections++
	r.mu.Unlock()
	name := ev.Address
	if name == "" {
		name = "# " + ev.Name + " (H1)"
	}
	r.report("report", "section "+name, "")
	r.transcript("enter %s (id %d, depth %d)", name, ev.ID, ev.Depth)
}

func (r *runner) SectionExit(ev run.SectionEvent) {
	if ev.Err != nil {
		r.transcript("exit %s with error: %v", ev.Address, ev.Err)
	}
}

func (r *runner) ModelRound(ev run.ModelRoundEvent) {
	r.mu.Lock()
	r.rounds++
	r.mu.Unlock()
	r.report("report", fmt.Sprintf("%s: model round %d (%s)", ev.Section, ev.Round, ev.Model), "")
	if r.endStream(ev) {
		switch {
		case ev.Err != nil:
			r.transcript("model round %d in %s: error: %v", ev.Round, ev.Section, ev.Err)
		case ev.Text == nil:
			r.transcript("model round %d in %s: (tool calls)", ev.Round, ev.Section)
		}
		return
	}
	reply := "(tool calls)"
	if ev.Text != nil {
		reply = clip(*ev.Text, 4000)
	}
	if ev.Err != nil {
		reply = "error: " + ev.Err.Error()
	}
	r.transcript("model round %d in %s (%s)\n>>> %s\n<<< %s", ev.Round, ev.Section, ev.Model, clip(ev.Prompt, 4000), reply)
}

func (r *runner) ToolCall(ev run.ToolCallEvent) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	r.report("report", fmt.Sprintf("%s: tool %s", ev.Section, ev.Alias), "")
	res := clip(ev.Result, 4000)
	if ev.Err != nil {
		res = "error: " + ev.Err.Error()
	}
	r.transcript("tool call %s (%s) in %s\nargs: %s\nresult: %s", ev.Alias, ev.Tool, ev.Section, clip(ev.Args, 2000), res)
}

func (r *runner) Log(ev run.LogEvent) {
	r.transcript("Lua: %s", ev.Message)
}

// run executes the buffer text and turns every failure into a reply error
// plus a window/showMessage, so that clients that ignore the reply still
// tell the user.
func (r *runner) run(ctx context.Context, args runArgs, text []byte, version int32, cfg config) (*runResult, error) {
	s := r.s
	title := "Run prompt"
	if args.Section != "" {
		title = "Run " + strings.TrimSpace(args.Section)
	}
	r.report("begin", "starting", title)
	start := time.Now()
	res, err := r.exec(ctx, args, text, cfg)
	if err != nil {
		msg := err.Error()
		// A located run error reads as `forge-lsp run` prints it: the
		// file and line once, then the message.
		if re := (*run.RunError)(nil); errors.As(err, &re) && re.Line > 0 {
			msg = re.Located(filepath.Base(fileName(args.URI)))
		}
		code := requestFailed
		var data *json.RawMessage
		var ba *badArgs
		switch {
		case ctx.Err() != nil:
			msg = "run cancelled"
			code = requestCancelled
		case errors.As(err, &ba):
			code = jsonrpc2.InvalidParams
		case session.IsGatewayConfig(err):
			msg += gatewayHint
			raw := json.RawMessage(`{"reason":"` + reasonGatewayConfig + `"}`)
			data = &raw
		}
		r.report("end", msg, "")
		r.transcript("failed: %s", msg)
		s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: "forge: " + title + ": " + msg})
		return nil, &jsonrpc2.Error{Code: code, Message: msg, Data: data}
	}
	r.mu.Lock()
	summary := fmt.Sprintf("done: %d sections, %d model rounds, %d tool calls", r.sections, r.rounds, r.calls)
	r.mu.Unlock()
	r.report("end", summary, "")
	r.transcript("%s\nresult: %s", summary, clip(res, 8000))
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeInfo, Message: "forge: " + title + " → " + clip(res, 2000)})
	return &runResult{Result: res, Section: strings.TrimSpace(args.Section), Version: version, DurationMs: time.Since(start).Milliseconds()}, nil
}

func (r *runner) exec(ctx context.Context, args runArgs, text []byte, cfg config) (string, error) {
	name := fileName(args.URI)
	opts := session.Options{
		Path:            name,
		Source:          text,
		Parsed:          r.parsed,
		Section:         args.Section,
		Input:           args.Input,
		Observer:        r,
		Gateway:         cfg.gateway(),
		ToolsFile:       cfg.ToolsFile,
		Limits:          run.Limits{Timeout: session.UserTimeout(cfg.runTimeout())},
		Env:             r.s.lookupEnv,
		ExecutionPrefix: "lsp-",
		LiveTools:       cfg.liveTools(),
		LiveToolsHint:   liveToolsHint,
	}
	if strings.HasPrefix(string(args.URI), "file:") {
		opts.ToolsDir = filepath.Dir(name)
	}
	if strings.HasPrefix(string(args.URI), "file:") {
		var end func()
		if opts.Trace, end = r.s.runTrace(name); opts.Trace != nil {
			defer end()
		}
	}
	sess, err := session.Open(opts)
	if err != nil {
		var se *session.SetupError
		if errors.As(err, &se) {
			switch se.Option {
			case session.OptSection:
				return "", &badArgs{err}
			case session.OptToolsFile:
				return "", fmt.Errorf("workspace tools file: %w", err)
			}
		}
		return "", err
	}
	defer sess.Close()
	return sess.Run(ctx)
}

// lookupEnv reads the server's environment (Options.Getenv); an empty
// variable counts as unset.
func (s *server) lookupEnv(k string) (string, bool) {
	v := s.opts.Getenv(k)
	return v, v != ""
}

// badArgs marks a failure caused by the command's arguments (an unknown
// section), answered with InvalidParams rather than RequestFailed.
type badArgs struct{ err error }

func (b *badArgs) Error() string { return b.err.Error() }
func (b *badArgs) Unwrap() error { return b.err }

// commands are the workspace/executeCommand commands a feature file adds
// with registerCommand, next to its handler (render.go); the handler
// replies itself, as executeCommand does.
var commands = map[string]func(s *server, ctx context.Context, p executeParams, reply jsonrpc2.Replier){}

// registerCommand adds a command; it returns a value so that a file can
// call it from a package-level var.
func registerCommand(name string, h func(s *server, ctx context.Context, p executeParams, reply jsonrpc2.Replier)) bool {
	commands[name] = h
	return true
}

// commandNames is every command the server executes, for the
// capability.
func commandNames() []string {
	names := []string{commandRunSection, commandRunPrompt, commandRunTest}
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names[3:])
	return names
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodWorkspaceExecuteCommand, serve: method{async: (*server).executeCommand},
		advertise: func(c *serverCapabilities) {
			c.ExecuteCommandProvider = &protocol.ExecuteCommandOptions{
				Commands: commandNames(),
			}
		}},
		feature{method: protocol.MethodWorkDoneProgressCancel, serve: handle((*server).progressCancel)}}
})
