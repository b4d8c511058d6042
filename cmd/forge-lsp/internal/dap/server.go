// Package dap is `forge-lsp dap`: a Debug Adapter Protocol server over
// stdio (github.com/google/go-dap's codec) that runs one prompt under a
// debugger. It drives the engine through run.Hook: the run stops at
// section entries, before Lua blocks, before prose blocks' model rounds
// and before tool calls, where breakpoints, steps and pause requests
// hold it. docs/debugging.md describes what a client sees.
package dap

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	// PROMPTFORGE_GATEWAY_CONFIG in the adapter's environment, served
	// in-process; never a launch argument: launch.json is a repository
	// file, and a gateway file decides where keys are sent
	// (docs/gateway.md#how-runs-find-the-file).
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	godap "github.com/google/go-dap"
)

// LaunchArgs are the `launch` request's arguments.
type LaunchArgs struct {
	// Program is the prompt file.
	Program string `json:"program"`
	// Input is the run input (Lua `args`).
	Input string `json:"input"`
	// Section, when set ("## Name"), runs only that section.
	Section string `json:"section"`
	// Store is a folder whose files seed the store.
	Store string `json:"store"`
	// Replay and Record are cassettes, as for `forge-lsp run`.
	Replay string `json:"replay"`
	Record string `json:"record"`
	// Gateway is the gateway API root (with /v1); the key comes from the
	// environment.
	Gateway string `json:"gateway"`
	// StopOnEntry stops before the H1's first block.
	StopOnEntry bool `json:"stopOnEntry"`
	// Trace, when set, also writes a JSON-lines run trace to this file.
	Trace string `json:"trace"`
	// Execution fixes sys.execution (a recorded cassette repeats only
	// with the execution id it was recorded with).
	Execution string `json:"execution"`
	// NoDebug runs without stopping (VS Code's "Run Without Debugging").
	NoDebug bool `json:"noDebug"`
	// Offline makes no live model or tool call: re-runs are answered from
	// the recording while their requests match it, and stop with the
	// first changed request after (implied by Replay).
	Offline bool `json:"offline"`
}

// pathsInside refuses a trace, cassette or store folder outside the
// program's repository and outside the temporary folder (links resolved):
// launch.json belongs to the repository, and a debug session must not
// write or read elsewhere (docs/security.md#writes). The temporary folder
// is where editors put a session's own trace.
func (a *LaunchArgs) pathsInside() error {
	root := fsread.RepoRoot(filepath.Dir(a.Program))
	for _, p := range []struct{ path, what string }{{a.Trace, "trace"}, {a.Record, "record cassette"}, {a.Replay, "replay cassette"}, {a.Store, "store folder"}} {
		if p.path == "" {
			continue
		}
		err := fsread.Inside(root, p.path, p.what)
		if err != nil && fsread.Inside(os.TempDir(), p.path, p.what) == nil {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("%v, or in the temporary folder %s", err, filepath.ToSlash(os.TempDir()))
		}
	}
	return nil
}

// gatewayFromUser refuses a `gateway` that differs from the user's own
// PROMPTFORGE_GATEWAY_URL: the gateway key goes to that URL, and
// launch.json belongs to the repository, which must not choose where the
// user's key is sent (docs/security.md#secrets).
func (a *LaunchArgs) gatewayFromUser(env gateway.LookupFunc) error {
	if a.Gateway == "" {
		return nil
	}
	if u, ok := env(gateway.EnvURL); ok && strings.TrimRight(u, "/") == strings.TrimRight(a.Gateway, "/") {
		return nil
	}
	return fmt.Errorf("gateway %q is not your %s: launch.json belongs to the repository and may not choose where your gateway key is sent; set the URL in your own settings (VS Code: promptforge.gateway.url; or %s in the environment) and drop `gateway` from the launch", a.Gateway, gateway.EnvURL, gateway.EnvURL)
}

// Options configure a server.
type Options struct {
	// Env reads the environment (gateway settings); nil means
	// os.LookupEnv.
	Env gateway.LookupFunc
	// Grace bounds how long terminate and disconnect wait for a cancelled
	// run to end; zero means 5s.
	Grace time.Duration
	// Now is the clock a launch pins for all its runs; nil means
	// time.Now.
	Now func() time.Time
	// Telemetry exports each run's span tree over OTLP; nil: off.
	Telemetry *telemetry.Telemetry

	// ahead, in tests, hears what becomes of runs started ahead of a step
	// back: "started", "ready" (at its stop), "adopted", "dropped".
	ahead func(what string)
}

// Main serves one debug session on stdin/stdout and returns the exit
// status.
func Main(args []string) int {
	var otelOn, otelContent bool
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "otel":
			otelOn = true
		case "otel-content":
			otelContent = true
		default:
			fmt.Fprintln(os.Stderr, "usage: forge-lsp dap [--otel] [--otel-content] (a Debug Adapter Protocol server on stdin/stdout; --otel exports each run's spans over OTLP, docs/observability.md)")
			return 2
		}
	}
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{Enabled: otelOn, Content: otelContent})
	if err != nil {
		fmt.Fprintf(os.Stderr, "forge-lsp dap: --otel: %v\n", err)
		return 2
	}
	defer tel.Shutdown()
	if err := Serve(os.Stdin, os.Stdout, Options{Telemetry: tel}); err != nil {
		fmt.Fprintf(os.Stderr, "forge-lsp dap: %v\n", err)
		return 1
	}
	return 0
}

// Serve runs a debug session over r and w until the client disconnects
// or r ends. Every run the session started has ended when it returns.
func Serve(r io.Reader, w io.Writer, opts Options) error {
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	if opts.Grace == 0 {
		opts.Grace = 5 * time.Second
	}
	s := &server{r: bufio.NewReader(r), w: w, opts: opts, bps: map[string][]*lineBp{}, funcBps: map[string]*funcBp{},
		wake: make(chan struct{}, 1)}
	stop, written := make(chan struct{}), make(chan struct{})
	go s.writeLoop(stop, written)
	defer func() {
		s.stopRun(true)
		s.awaitRuns()
		close(stop)
		<-written
	}()
	rd := &reader{r: s.r}
	for {
		msg, err := rd.next()
		var bad *badFrame
		switch {
		case errors.As(err, &bad):
			// A malformed message: answer it and go on.
			s.fail(&godap.Request{ProtocolMessage: godap.ProtocolMessage{Seq: bad.seq}, Command: bad.command}, bad.msg)
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil
		case err != nil:
			return err
		case msg == nil:
			continue
		}
		if s.safeHandle(msg) {
			return nil
		}
	}
}

// safeHandle is handle, with a panic answered as a failed request: one
// request the adapter gets wrong must not end the session.
func (s *server) safeHandle(m godap.Message) (end bool) {
	defer func() {
		if p := recover(); p != nil {
			if rm, ok := m.(godap.RequestMessage); ok {
				r := rm.GetRequest()
				s.fail(r, fmt.Sprintf("internal error in %s: %v (please report it)", r.Command, p))
			}
			end = false
		}
	}()
	return s.handle(m)
}

// server is one debug session.
type server struct {
	r    *bufio.Reader
	w    io.Writer
	opts Options

	// wmu guards seq and the outgoing queue.
	wmu   sync.Mutex
	seq   int
	queue []godap.Message
	wake  chan struct{}

	// mu guards everything below and the state of the current run.
	mu         sync.Mutex
	launch     *LaunchArgs
	launched   bool
	configured bool
	bps        map[string][]*lineBp
	funcBps    map[string]*funcBp
	nextBpID   int
	cur        *debugRun
	// tape is what the session's last run recorded, which the next re-run
	// is answered from; pin the clock, nonce and execution id every run
	// of the launch shares (whatif.go).
	tape *gateway.Tape
	pin  pin
	// aheads are the runs started ahead of the next step backs, the next
	// one's first (ahead.go).
	aheads []*debugRun
	// aheadGen counts the times the runs ahead were dropped.
	aheadGen int
	// parsed is the last run's prompt, reused while the file's text is
	// the same (session.Options.Parsed).
	parsed *parse.Prompt
	// tools keeps the launch's tools file search and read for its
	// re-runs; prompt is the prompt's text as last read (readPrompt).
	tools  *session.ToolsCache
	prompt promptText
	// stmtLines are the statement lines of the chunks runs asked to stop
	// in (stmtLinesOf).
	stmtLines map[*parse.Chunk][]int
	// runs counts the runs of the launch: a re-run keeps the trace of the
	// run before it beside its own (keptTrace).
	runs int
	// running counts the runs' goroutines: replaced and dropped runs end
	// after the request that replaced them was answered.
	running sync.WaitGroup
}

// awaitRuns waits, at most the grace period, for every run to end: a run
// a re-run replaced may still be writing its trace.
func (s *server) awaitRuns() {
	ended := make(chan struct{})
	go func() {
		s.running.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(s.opts.Grace):
	}
}

// pin is what makes a re-run send the requests its recording holds.
type pin struct {
	execution, nonce string
	now              time.Time
}

func (s *server) newPin(execution string) pin {
	var b [16]byte
	_, _ = rand.Read(b[:])
	if execution == "" {
		execution = "dap-" + hex.EncodeToString(b[:8])
	}
	_, _ = rand.Read(b[:])
	now := time.Now
	if s.opts.Now != nil {
		now = s.opts.Now
	}
	return pin{execution: execution, nonce: hex.EncodeToString(b[:]), now: now()}
}

// send queues a message for the client. Messages go out in order from
// their own goroutine, so that reading requests never waits for a client
// that is busy writing.
func (s *server) send(m godap.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.seq++
	switch x := m.(type) {
	case godap.ResponseMessage:
		x.GetResponse().Seq = s.seq
	case godap.EventMessage:
		x.GetEvent().Seq = s.seq
	}
	s.queue = append(s.queue, m)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued messages until stop is closed and the queue
// is empty, or a write fails.
func (s *server) writeLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		s.wmu.Lock()
		q := s.queue
		s.queue = nil
		s.wmu.Unlock()
		for _, m := range q {
			if err := godap.WriteProtocolMessage(s.w, m); err != nil {
				return
			}
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-s.wake:
		case <-stop:
			s.wmu.Lock()
			empty := len(s.queue) == 0
			s.wmu.Unlock()
			if empty {
				return
			}
		}
	}
}

func (s *server) response(reqSeq int, command string, ok bool, msg string) godap.Response {
	return godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"}, RequestSeq: reqSeq, Command: command, Success: ok, Message: msg}
}

func event(name string) godap.Event {
	return godap.Event{ProtocolMessage: godap.ProtocolMessage{Type: "event"}, Event: name}
}

func (s *server) fail(req *godap.Request, msg string) {
	s.send(&godap.ErrorResponse{Response: s.response(req.Seq, req.Command, false, msg),
		Body: godap.ErrorResponseBody{Error: &godap.ErrorMessage{Id: 1, Format: msg, ShowUser: true}}})
}

func (s *server) ok(req *godap.Request) godap.Response {
	return s.response(req.Seq, req.Command, true, "")
}

// handle answers one request; it reports true when the session ends.
func (s *server) handle(m godap.Message) bool {
	switch req := m.(type) {
	case *godap.InitializeRequest:
		s.send(&godap.InitializeResponse{Response: s.ok(&req.Request), Body: godap.Capabilities{
			SupportsConfigurationDoneRequest:      true,
			SupportsFunctionBreakpoints:           true,
			SupportsConditionalBreakpoints:        true,
			SupportsEvaluateForHovers:             true,
			SupportsRestartRequest:                true,
			SupportsTerminateRequest:              true,
			SupportTerminateDebuggee:              true,
			SupportsSingleThreadExecutionRequests: false,
			SupportsSetVariable:                   true,
			SupportsSetExpression:                 true,
			SupportsRestartFrame:                  true,
			SupportsStepBack:                      true,
		}})
		s.send(&godap.InitializedEvent{Event: event("initialized")})
	case *godap.LaunchRequest:
		var a LaunchArgs
		if err := json.Unmarshal(req.Arguments, &a); err != nil {
			s.fail(&req.Request, "launch: bad arguments: "+err.Error())
			return false
		}
		if a.Program == "" {
			s.fail(&req.Request, `launch: "program" is required (the prompt file to run)`)
			return false
		}
		if err := fsread.Stat(a.Program, fsread.Prompt); err != nil {
			s.fail(&req.Request, "launch: "+err.Error())
			return false
		}
		if err := a.pathsInside(); err != nil {
			s.fail(&req.Request, "launch: "+err.Error())
			return false
		}
		if err := a.gatewayFromUser(s.opts.Env); err != nil {
			s.fail(&req.Request, "launch: "+err.Error())
			return false
		}
		s.mu.Lock()
		s.launch, s.launched = &a, true
		s.tape, s.pin, s.runs = nil, s.newPin(a.Execution), 0
		s.tools, s.prompt = &session.ToolsCache{}, promptText{}
		s.mu.Unlock()
		s.send(&godap.LaunchResponse{Response: s.ok(&req.Request)})
		s.maybeStart()
	case *godap.AttachRequest:
		s.fail(&req.Request, "attach is not supported: use launch")
	case *godap.ConfigurationDoneRequest:
		s.mu.Lock()
		s.configured = true
		s.mu.Unlock()
		s.send(&godap.ConfigurationDoneResponse{Response: s.ok(&req.Request)})
		s.maybeStart()
	case *godap.SetBreakpointsRequest:
		// Breakpoints decide which points a run counts: a run ahead
		// started with others is not the step back's.
		s.dropAhead()
		bps := s.setBreakpoints(req.Arguments)
		s.send(&godap.SetBreakpointsResponse{Response: s.ok(&req.Request), Body: godap.SetBreakpointsResponseBody{Breakpoints: bps}})
	case *godap.SetFunctionBreakpointsRequest:
		s.dropAhead()
		bps := s.setFunctionBreakpoints(req.Arguments.Breakpoints)
		s.send(&godap.SetFunctionBreakpointsResponse{Response: s.ok(&req.Request), Body: godap.SetFunctionBreakpointsResponseBody{Breakpoints: bps}})
	case *godap.SetExceptionBreakpointsRequest:
		s.send(&godap.SetExceptionBreakpointsResponse{Response: s.ok(&req.Request)})
	case *godap.ThreadsRequest:
		s.send(&godap.ThreadsResponse{Response: s.ok(&req.Request), Body: godap.ThreadsResponseBody{Threads: s.threads()}})
	case *godap.StackTraceRequest:
		frames := s.stackTrace(req.Arguments.ThreadId)
		s.send(&godap.StackTraceResponse{Response: s.ok(&req.Request), Body: godap.StackTraceResponseBody{StackFrames: frames, TotalFrames: len(frames)}})
	case *godap.ScopesRequest:
		scopes, err := s.scopes(req.Arguments.FrameId)
		if err != nil {
			s.fail(&req.Request, err.Error())
			return false
		}
		s.send(&godap.ScopesResponse{Response: s.ok(&req.Request), Body: godap.ScopesResponseBody{Scopes: scopes}})
	case *godap.VariablesRequest:
		// Answered from the thread's goroutine (vars.go).
		s.variables(req.Arguments.VariablesReference, func(vars []godap.Variable, err error) {
			if err != nil {
				s.fail(&req.Request, err.Error())
				return
			}
			s.send(&godap.VariablesResponse{Response: s.ok(&req.Request), Body: godap.VariablesResponseBody{Variables: vars}})
		})
	case *godap.EvaluateRequest:
		s.evaluate(req.Arguments, func(body godap.EvaluateResponseBody, err error) {
			if err != nil {
				s.fail(&req.Request, err.Error())
				return
			}
			s.send(&godap.EvaluateResponse{Response: s.ok(&req.Request), Body: body})
		})
	case *godap.ContinueRequest:
		s.resume(req.Arguments.ThreadId, stepNone)
		s.send(&godap.ContinueResponse{Response: s.ok(&req.Request), Body: godap.ContinueResponseBody{AllThreadsContinued: true}})
	case *godap.NextRequest:
		s.resume(req.Arguments.ThreadId, stepOver)
		s.send(&godap.NextResponse{Response: s.ok(&req.Request)})
	case *godap.StepInRequest:
		s.resume(req.Arguments.ThreadId, stepIn)
		s.send(&godap.StepInResponse{Response: s.ok(&req.Request)})
	case *godap.StepOutRequest:
		s.resume(req.Arguments.ThreadId, stepOut)
		s.send(&godap.StepOutResponse{Response: s.ok(&req.Request)})
	case *godap.PauseRequest:
		s.mu.Lock()
		if s.cur != nil {
			s.cur.pauseReq = true
		}
		s.mu.Unlock()
		s.send(&godap.PauseResponse{Response: s.ok(&req.Request)})
	case *godap.RestartRequest:
		if len(req.Arguments) > 0 {
			var ra struct {
				Arguments *LaunchArgs `json:"arguments"`
			}
			if err := json.Unmarshal(req.Arguments, &ra); err == nil && ra.Arguments != nil && ra.Arguments.Program != "" {
				s.mu.Lock()
				s.launch = ra.Arguments
				s.mu.Unlock()
			}
		}
		s.stopRun(true)
		s.mu.Lock()
		if s.launch != nil {
			s.tape, s.pin, s.runs = nil, s.newPin(s.launch.Execution), 0
			s.tools, s.prompt = &session.ToolsCache{}, promptText{}
		}
		s.mu.Unlock()
		s.send(&godap.RestartResponse{Response: s.ok(&req.Request)})
		s.maybeStart()
	case *godap.SetVariableRequest:
		s.setVariable(req.Arguments, func(v godap.Variable, err error) {
			if err != nil {
				s.fail(&req.Request, "setVariable: "+err.Error())
				return
			}
			s.send(&godap.SetVariableResponse{Response: s.ok(&req.Request), Body: godap.SetVariableResponseBody{Value: v.Value, Type: v.Type, VariablesReference: v.VariablesReference}})
		})
	case *godap.SetExpressionRequest:
		s.setExpression(req.Arguments, func(v godap.Variable, err error) {
			if err != nil {
				s.fail(&req.Request, "setExpression: "+err.Error())
				return
			}
			s.send(&godap.SetExpressionResponse{Response: s.ok(&req.Request), Body: godap.SetExpressionResponseBody{Value: v.Value, Type: v.Type, VariablesReference: v.VariablesReference}})
		})
	case *godap.RestartFrameRequest:
		if err := s.restartFrame(req.Arguments.FrameId); err != nil {
			s.fail(&req.Request, "restartFrame: "+err.Error())
			return false
		}
		s.send(&godap.RestartFrameResponse{Response: s.ok(&req.Request)})
	case *godap.StepBackRequest:
		show, err := s.stepBack(false)
		if err != nil {
			s.fail(&req.Request, "stepBack: "+err.Error())
			return false
		}
		s.send(&godap.StepBackResponse{Response: s.ok(&req.Request)})
		if show != nil {
			show()
		}
	case *godap.ReverseContinueRequest:
		show, err := s.stepBack(true)
		if err != nil {
			s.fail(&req.Request, "reverseContinue: "+err.Error())
			return false
		}
		s.send(&godap.ReverseContinueResponse{Response: s.ok(&req.Request)})
		if show != nil {
			show()
		}
	case *godap.TerminateRequest:
		s.stopRun(false)
		s.send(&godap.TerminateResponse{Response: s.ok(&req.Request)})
	case *godap.DisconnectRequest:
		s.stopRun(false)
		s.send(&godap.DisconnectResponse{Response: s.ok(&req.Request)})
		return true
	case godap.RequestMessage:
		r := req.GetRequest()
		s.fail(r, "unsupported request "+r.Command)
	}
	return false
}
