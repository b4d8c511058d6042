// Package lsp is the forge-lsp language server: LSP over stdio (or any
// jsonrpc2 stream) for PromptForge prompts.
//
// One file per method, each a registry entry and a thin adapter from
// protocol types into the editor features (cmd/forge-lsp/internal/features,
// which know nothing of the protocol), the engine and the analysis driver:
// byte offsets are converted to LSP positions only here, through
// engine/source.File. The handler chain is
// recover → cancel → dispatch. Notifications and lifecycle requests run in
// order under the server lock, and are cheap: an edit replaces the text
// and schedules diagnostics. Each document version has one snapshot
// (documents.go): its parse is made outside the lock and never changes,
// and what is derived from it (findings, semantic tokens, prose budgets)
// lives in memos the snapshot owns. A request on a document pins the
// version when it arrives, prepares what it needs and runs its handler
// outside the lock (requests.go), so one document's slow work never
// delays another's requests; diagnostics and runs run in goroutines with their own
// cancellation. Params are decoded before the lock is taken, and nothing
// is written to the client under it: replies and notifications go
// through one queue (outbox, inputs.go) in order. A snapshot holds every
// input it was analysed with (the configuration, the tool and model
// catalogs); didModify is the one path that makes new snapshots, for an
// edit and for a change of those inputs.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	fastjson "github.com/goccy/go-json"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// options configures a server. The zero value is usable.
type options struct {
	// Version is reported in serverInfo.
	Version string
	// Log receives the server's own log lines; nil discards them. It must
	// never be the protocol stream (stdout).
	Log io.Writer
	// Debounce is the delay between a change and its published
	// diagnostics unless the client's diagnosticsDelay setting says
	// otherwise (the analysis does not wait for it when a core is free:
	// diagnostics.go). Zero means the default (defaultDebounce); a
	// negative value publishes as soon as the analysis is done.
	Debounce time.Duration
	// Getenv reads the environment (model configuration); nil means
	// os.Getenv. Tests inject a map.
	Getenv func(string) string
	// MaxAnalyzedSize is the largest document (bytes) that is parsed and
	// analysed; larger ones get a single diagnostic saying so. Zero means
	// DefaultMaxAnalyzedSize.
	MaxAnalyzedSize int
	// RetainBudget bounds the bytes the open documents keep between their
	// versions (snapshots and parse reuse, estimated from their text:
	// retain.go). Zero means defaultRetainBudget.
	RetainBudget int64
}

// defaultDebounce is the delay between an edit and its published
// diagnostics: long enough that they do not flicker while you type,
// short enough that they follow a pause at once. The analysis runs
// inside it (an edit of a 10,000-line prompt takes a few milliseconds),
// so they are usually ready when it ends. Pull diagnostics never wait
// for it.
const defaultDebounce = 100 * time.Millisecond

// defaultMaxAnalyzedSize is the default document size limit for analysis.
const defaultMaxAnalyzedSize = 4 << 20

// Main serves LSP over stdio and returns the exit code: 0 after an orderly
// shutdown+exit, 1 when the client went away or exited without shutdown,
// 2 for bad flags.
func Main(ctx context.Context, version string, args []string) int {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			fmt.Fprintln(os.Stdout, "usage: forge-lsp serve\n\nSpeaks the Language Server Protocol over stdin/stdout. See docs/lsp.md.")
			return 0
		case "--stdio", "-stdio":
			// Accepted for clients that always pass it; stdio is the only transport.
		default:
			fmt.Fprintf(os.Stderr, "forge-lsp serve: unknown argument %q\n", a)
			return 2
		}
	}
	// Nothing but protocol may reach stdout: keep the real stdout for the
	// stream and point os.Stdout at stderr, so a stray Print anywhere in
	// the process (gopher-lua's print, a library) cannot corrupt framing.
	out := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = out }()
	if testHookStdoutSwapped != nil {
		testHookStdoutSwapped()
	}

	rwc := stdio{in: os.Stdin, out: out}
	err := serve(ctx, newStream(rwc), options{Version: version, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "forge-lsp serve:", err)
		return 1
	}
	return 0
}

// testHookServer lets a test see the server Serve created (the marker
// tests compare document text after edits).
var testHookServer func(*server)

// testHookAnswered sees each call's reply when it is queued for the
// client (the blocked-stream test's clock).
var testHookAnswered func(method string)

// testHookHandler runs before a document request's handler, in the
// request's goroutine and without the server lock (a test makes one
// document's feature slow with it).
var testHookHandler func(method string, uri protocol.DocumentURI)

// testHookStdoutSwapped lets a test print after the swap without racing it.
var testHookStdoutSwapped func()

type stdio struct {
	in  io.ReadCloser
	out io.WriteCloser
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s stdio) Close() error {
	err := s.in.Close()
	if err2 := s.out.Close(); err == nil {
		err = err2
	}
	return err
}

// errNoShutdown is returned by Serve when the client exited (or vanished)
// without a shutdown request first.
var errNoShutdown = errors.New("connection ended without a shutdown request")

// serve runs a server on stream until the client sends exit, the stream
// fails or ctx is cancelled. It returns nil after shutdown followed by
// exit. Use newStream for the framing: it survives malformed input.
func serve(ctx context.Context, rw jsonrpc2.Stream, opts options) error {
	s := newServer(opts)
	if testHookServer != nil {
		testHookServer(s)
	}
	// The collector is paced for editing while the server runs (gcpace.go).
	defer startGCPacer()()
	if st, ok := rw.(*stream); ok {
		// A stream wrapped in another keeps its messages' params.
		st.predecodeOn = true
		s.predecoded = st.predecoded
	}
	conn := jsonrpc2.NewConn(rw)
	s.conn = conn
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx = ctx
	s.goBackground("outbox", func() { s.out.run(ctx, s.write) })
	conn.Go(ctx, s.handler())
	select {
	case <-conn.Done():
	case <-s.exit:
		// Closing stdin does not interrupt a read blocked on it, so do not
		// wait for the reader after exit: close and return.
		conn.Close()
	case <-ctx.Done():
		conn.Close()
		<-conn.Done()
	}
	cancel()
	s.stop()
	s.mu.Lock()
	clean := s.state == stateShutdown && s.exited
	s.mu.Unlock()
	if !clean {
		return errNoShutdown
	}
	return nil
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateRunning
	stateShutdown
)

// server is one client connection's state.
type server struct {
	opts   options
	logger *log.Logger
	conn   jsonrpc2.Conn
	// ctx lives as long as the connection: notifications are published
	// with it, never with a request's context.
	ctx context.Context

	// mu guards everything below; dispatch holds it for every message.
	mu     sync.Mutex
	state  lifecycle
	exited bool
	exit   chan struct{} // closed by the exit notification
	client clientInfo
	docs   map[string]*document
	// useTick orders document use for snapshot eviction.
	useTick uint64
	cfg     config
	// toolsFile mirrors cfg.ToolsFile for the analysis, which runs
	// outside mu (setConfig keeps them equal).
	toolsFile atomic.Pointer[string]
	// modelCatalog is the gateway's /models, fetched once (budget.go).
	modelCatalog    []gateway.Model
	modelCatalogKey string
	// roots are the workspace folders (file system paths).
	roots []string
	ws    workspaceState
	wg    sync.WaitGroup // background goroutines, drained on stop
	// cats are the tool catalogs the server's snapshots were resolved
	// with, one per tools file version (safe without mu).
	cats *toolcat.Cache
	// folders are the configurations and tools files found from the
	// open documents' folders (inputs.go; safe without mu).
	folders *folderInputs
	// out queues notifications for the client (inputs.go): nothing is
	// written to the stream under mu.
	out *outbox
	// analysisSlots bounds concurrent parse+analysis work and orders it:
	// due work first (slots.go).
	analysisSlots *slots
	// predecoded returns the params the stream decoded for a message
	// while reading it (stream.predecode), or nil.
	predecoded func(jsonrpc2.Request) any

	// reqMu guards in-flight request and run bookkeeping; it is separate
	// from mu so that $/cancelRequest never waits for a slow handler.
	reqMu    sync.Mutex
	inflight map[jsonrpc2.ID]context.CancelFunc
	runs     map[string]context.CancelFunc // progress token -> cancel
	nextTok  int

	// tests keeps the last forge.runTest result of each case.
	tests *testResults
}

type clientInfo struct {
	workDoneProgress bool
	configuration    bool
	initOptions      json.RawMessage
	features         featureClientCaps
	// watchRegistration: the client accepts a dynamic file watcher.
	watchRegistration bool
	// diagnosticRefresh: the client accepts workspace/diagnostic/refresh.
	diagnosticRefresh bool
	// encoding is the position encoding agreed in initialize
	// (negotiateEncoding): every LSP position the server reads or writes
	// counts columns in it.
	encoding source.Encoding
}

func newServer(opts options) *server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Debounce == 0 {
		opts.Debounce = defaultDebounce
	}
	if opts.Debounce < 0 {
		opts.Debounce = 0
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.MaxAnalyzedSize <= 0 {
		opts.MaxAnalyzedSize = defaultMaxAnalyzedSize
	}
	if opts.RetainBudget <= 0 {
		opts.RetainBudget = defaultRetainBudget
	}
	s := &server{
		opts:     opts,
		logger:   log.New(opts.Log, "forge-lsp: ", log.LstdFlags|log.Lmicroseconds),
		docs:     make(map[string]*document),
		inflight: make(map[jsonrpc2.ID]context.CancelFunc),
		runs:     make(map[string]context.CancelFunc),
		exit:     make(chan struct{}),
		tests:    newTestResults(),
		cats:     &toolcat.Cache{},
		folders:  &folderInputs{},
		out:      newOutbox(),
		// One slot per CPU: analysis is CPU-bound.
		analysisSlots: newSlots(runtime.GOMAXPROCS(0)),
	}
	s.setConfig(configFromEnv(opts.Getenv))
	return s
}

// stop cancels background work and waits for it.
func (s *server) stop() {
	s.mu.Lock()
	for _, d := range s.docs {
		d.cancelDiagnostics()
	}
	s.mu.Unlock()
	s.reqMu.Lock()
	for _, c := range s.inflight {
		c()
	}
	for _, c := range s.runs {
		c()
	}
	s.reqMu.Unlock()
	s.wg.Wait()
}

// handler builds the chain. Every layer returns nil: an error returned to
// the library closes the connection.
func (s *server) handler() jsonrpc2.Handler {
	return s.recoverLayer(s.cancelLayer(s.dispatch))
}

// recoverLayer turns a panic in any handler into an InternalError reply
// (for calls) and a log line; the connection stays up.
func (s *server) recoverLayer(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) (err error) {
		var once sync.Once
		replied := false
		guarded := func(ctx context.Context, result any, rerr error) error {
			var werr error
			once.Do(func() {
				replied = true
				werr = reply(ctx, result, rerr)
			})
			return werr
		}
		defer func() {
			if r := recover(); r != nil {
				s.logger.Printf("panic in %s: %v\n%s", req.Method(), r, debug.Stack())
				if !replied {
					_ = guarded(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", req.Method(), r))
				}
			}
			err = nil
		}()
		if herr := next(ctx, guarded, req); herr != nil {
			s.logger.Printf("%s: %v", req.Method(), herr)
		}
		return nil
	}
}

// cancelLayer gives every call a cancellable context registered under its
// id and handles $/cancelRequest itself: the library's CancelHandler never
// matches numeric ids, which decode as float64.
func (s *server) cancelLayer(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == protocol.MethodCancelRequest {
			var p struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(req.Params(), &p); err == nil {
				if id, ok := parseID(p.ID); ok {
					s.cancelRequest(id)
				}
			}
			return nil
		}
		call, ok := req.(*jsonrpc2.Call)
		if !ok {
			return next(ctx, reply, req)
		}
		id := call.ID()
		ctx, cancel := context.WithCancel(ctx)
		s.reqMu.Lock()
		s.inflight[id] = cancel
		s.reqMu.Unlock()
		wrapped := func(rctx context.Context, result any, err error) error {
			s.reqMu.Lock()
			delete(s.inflight, id)
			s.reqMu.Unlock()
			if err == nil && ctx.Err() != nil && result == nil {
				err = jsonrpc2.NewError(requestCancelled, "request cancelled")
			}
			cancel()
			if testHookAnswered != nil {
				testHookAnswered(req.Method())
			}
			// Queued behind the notifications sent before it (outbox).
			s.out.sendReply(func() {
				if err := reply(s.ctx, result, err); err != nil {
					s.logger.Printf("reply to %s: %v", req.Method(), err)
				}
			})
			return nil
		}
		return next(ctx, wrapped, req)
	}
}

// requestCancelled is LSP's RequestCancelled error code.
const requestCancelled jsonrpc2.Code = -32800

func (s *server) cancelRequest(id jsonrpc2.ID) {
	s.reqMu.Lock()
	c := s.inflight[id]
	s.reqMu.Unlock()
	if c != nil {
		c()
	}
}

// parseID reads a JSON-RPC id: an integer (sent as a JSON number, which
// generic decoders turn into float64) or a string.
func parseID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return jsonrpc2.NewNumberID(int32(f)), true
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return jsonrpc2.NewStringID(str), true
	}
	return jsonrpc2.ID{}, false
}

// method is one LSP method. A call's result (possibly nil) is the reply;
// for notifications it is ignored. async methods reply themselves.
type method struct {
	fn func(s *server, ctx context.Context, params json.RawMessage) (any, error)
	// bind decodes the params (outside s.mu: didOpen and didChange carry
	// whole documents) and returns the handler bound to them, which runs
	// under s.mu; set by handle.
	bind func(params json.RawMessage) func(s *server, ctx context.Context) (any, error)
	// bound returns the handler bound to params the stream decoded
	// (stream.predecode), or nil when they are not of its type; set by
	// handle.
	bound func(params any) func(s *server, ctx context.Context) (any, error)
	async func(s *server, ctx context.Context, params json.RawMessage, reply jsonrpc2.Replier)
	// doc marks a request on one document: it runs as requests.go says,
	// with the derived data needs names made ready outside s.mu.
	doc   bool
	needs needs
	// allDocs marks a request that reads every open document.
	allDocs bool
}

// handle adapts a typed handler: params that do not decode are an
// InvalidParams reply, never a dropped connection.
func handle[P any](f func(s *server, ctx context.Context, p *P) (any, error)) method {
	bind := func(raw json.RawMessage) func(s *server, ctx context.Context) (any, error) {
		p := new(P)
		if len(raw) > 0 && string(raw) != "null" {
			// goccy/go-json: didOpen/didChange carry whole documents, and
			// it decodes them about 2.7x faster than segmentio (the
			// library's) and 4.5x faster than the standard library
			// (BenchmarkDecodeDidChange).
			if err := fastjson.Unmarshal(raw, p); err != nil {
				err = jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err)
				return func(*server, context.Context) (any, error) { return nil, err }
			}
		}
		return func(s *server, ctx context.Context) (any, error) { return f(s, ctx, p) }
	}
	bound := func(params any) func(s *server, ctx context.Context) (any, error) {
		if p, ok := params.(*P); ok {
			return func(s *server, ctx context.Context) (any, error) { return f(s, ctx, p) }
		}
		return nil
	}
	return method{bind: bind, bound: bound, fn: func(s *server, ctx context.Context, raw json.RawMessage) (any, error) {
		return bind(raw)(s, ctx)
	}}
}

// dispatch runs one message, enforcing the lifecycle: before initialize
// only initialize and exit are served, after shutdown only exit. Document
// requests continue in their own goroutine (requests.go); the rest run
// here under the server lock.
func (s *server) dispatch(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	_, isCall := req.(*jsonrpc2.Call)
	name := req.Method()

	if name == protocol.MethodExit {
		s.mu.Lock()
		if !s.exited {
			s.exited = true
			close(s.exit)
		}
		s.mu.Unlock()
		return nil
	}

	s.mu.Lock()
	state := s.state
	f, known := methods()[name]
	m := f.serve
	s.mu.Unlock()

	switch {
	case state == stateNew && name != protocol.MethodInitialize:
		if isCall {
			return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "server not initialized: send initialize first"))
		}
		return nil
	case state == stateShutdown:
		if isCall {
			return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "server is shut down: only exit is accepted"))
		}
		return nil
	case state == stateRunning && name == protocol.MethodInitialize:
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "server already initialized"))
	}

	if !known {
		if isCall {
			return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", name))
		}
		return nil // unknown notifications ($/setTrace, ...) are ignored
	}
	if m.async != nil {
		if !isCall {
			return nil
		}
		m.async(s, ctx, req.Params(), reply)
		return nil
	}
	// The params are decoded before the lock is taken (in the reader's
	// goroutine for notifications, so message order is kept).
	// What the stream predecoded is taken here, on the reader's
	// goroutine: the next Read replaces it, and bind may run on a
	// request's own goroutine.
	var pre any
	if s.predecoded != nil && m.bound != nil {
		pre = s.predecoded(req)
	}
	var bound func(s *server, ctx context.Context) (any, error)
	bind := func() {
		if pre != nil {
			if bound = m.bound(pre); bound != nil {
				return
			}
		}
		if m.bind != nil {
			bound = m.bind(req.Params())
		} else {
			bound = func(s *server, ctx context.Context) (any, error) { return m.fn(s, ctx, req.Params()) }
		}
	}
	locked := func(ctx context.Context) func() (any, error) {
		return func() (any, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return bound(s, ctx)
		}
	}
	// A document request's handler runs without s.mu (requests.go, step
	// 3): it reads the pinned snapshot, which nothing changes.
	unlocked := func(ctx context.Context, uri protocol.DocumentURI) func() (any, error) {
		return func() (any, error) {
			if testHookHandler != nil {
				testHookHandler(name, uri)
			}
			return bound(s, ctx)
		}
	}
	// Only a document request's params are probed for its URI: probing
	// every message decoded each didChange's whole text a second time,
	// with the standard library (8 % of the CPU of a full-text edit of a
	// 10,000-line prompt in BenchmarkDidChangeToDiagnostics).
	if uri, ok := docURIOfRequest(m, isCall, req.Params()); ok {
		// Step 1 of requests.go: pin the version now, in message order.
		s.mu.Lock()
		var pin *docPin
		if d := s.docs[uriKey(uri)]; d != nil {
			p := s.pinDoc(d)
			pin = &p
		}
		roots := append([]string(nil), s.roots...)
		s.mu.Unlock()
		s.goRequest(name, reply, func() {
			bind()
			ctx := withPin(ctx, s.prepare(ctx, uri, pin, m.needs, roots))
			_ = s.finish(ctx, name, true, reply, unlocked(ctx, uri))
		})
		return nil
	}
	if m.allDocs && isCall {
		s.mu.Lock()
		pins := make(map[string]docPin, len(s.docs))
		for key, d := range s.docs {
			pins[key] = s.pinDoc(d)
		}
		s.mu.Unlock()
		s.goRequest(name, reply, func() {
			bind()
			ctx := withPin(ctx, s.prepareAll(pins))
			_ = s.finish(ctx, name, true, reply, unlocked(ctx, ""))
		})
		return nil
	}
	bind()
	return s.finish(ctx, name, isCall, reply, locked(ctx))
}

// goRequest runs a request's work in a tracked goroutine; a panic is
// logged and answered with InternalError, as recoverLayer does for the
// handlers it runs.
func (s *server) goRequest(name string, reply jsonrpc2.Replier, work func()) {
	s.goBackground(name, func() {
		defer func() {
			if r := recover(); r != nil {
				s.logger.Printf("panic in %s: %v\n%s", name, r, debug.Stack())
				_ = reply(s.ctx, nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", name, r))
			}
		}()
		work()
	})
}

// finish runs a handler and replies with its result (calls) or logs its
// error (notifications).
func (s *server) finish(ctx context.Context, name string, isCall bool, reply jsonrpc2.Replier, run func() (any, error)) error {
	result, err := run()
	if !isCall {
		if err != nil {
			s.logger.Printf("%s: %v", name, err)
		}
		return nil
	}
	if err != nil {
		var rpcErr *jsonrpc2.Error
		if !errors.As(err, &rpcErr) {
			err = jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
		}
		return reply(ctx, nil, err)
	}
	return reply(ctx, result, nil)
}

// notify queues a notification for the client (outbox); it never writes
// to the stream itself, so it may be called with s.mu held.
func (s *server) notify(method string, params any) {
	s.out.send(method, params)
}

// write sends a notification with the connection's context: the
// outbox's writer.
func (s *server) write(method string, params any) {
	if err := s.conn.Notify(s.ctx, method, params); err != nil {
		s.logger.Printf("notify %s: %v", method, err)
	}
}

// logMessage sends window/logMessage.
func (s *server) logMessage(typ protocol.MessageType, msg string) {
	s.notify(protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: typ, Message: msg})
}

// goBackground runs f in a tracked goroutine that recovers panics.
func (s *server) goBackground(name string, f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				s.logger.Printf("panic in %s: %v\n%s", name, r, debug.Stack())
			}
		}()
		f()
	}()
}

// setConfig replaces the configuration. Called with s.mu held (or before
// the server serves).
func (s *server) setConfig(c config) {
	changed := c.ToolsFile != s.cfg.ToolsFile
	s.cfg = c
	tf := c.ToolsFile
	s.toolsFile.Store(&tf)
	if changed && s.state == stateRunning {
		// The tools file is an input of every snapshot.
		s.didModify(nil, 0)
	}
}

// debounce is the delay between a change and its analysis: the client's
// diagnosticsDelay setting, else the server's option. Called with s.mu
// held.
func (s *server) debounce() time.Duration {
	if d, ok := s.cfg.diagnosticsDelay(); ok {
		return d
	}
	return s.opts.Debounce
}

// analysisToolsFile is the configured workspace tools file ("" when
// none); safe without s.mu.
func (s *server) analysisToolsFile() string {
	if p := s.toolsFile.Load(); p != nil {
		return *p
	}
	return ""
}
