package dap

// A debug run's life: started once the client has launched and
// configured, run through engine/session with the debugger's hooks,
// stopped or replaced; its output and the prompt text it reads.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	godap "github.com/google/go-dap"
)

// maybeStart starts the run once the client has launched and finished
// its configuration.
func (s *server) maybeStart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.launched || !s.configured || s.cur != nil {
		return
	}
	s.startLocked()
}

// startLocked opens a session for the launch arguments and starts it on
// its own goroutine. Setup failures end the debug session as a failed
// run would.
func (s *server) startLocked() {
	d := s.newRun()
	s.runs++
	d.runNo = s.runs
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	s.cur = d
	s.running.Add(1)
	go d.run(ctx)
}

// newRun is a run of the launch, not started; needs s.mu.
func (s *server) newRun() *debugRun {
	a := *s.launch
	d := &debugRun{s: s, args: a, src: sourceOf(a.Program), done: make(chan struct{}), resumeCh: make(chan struct{}), threads: map[int]*thread{},
		armThreads: map[any]*thread{}, sectionThreads: map[int64]*thread{}, nextThread: 2}
	d.threads[mainThread] = newThread(mainThread, "main")
	return d
}

// stopRun cancels the current run and waits for it to end. quiet (a
// restart, or the session ending) keeps the run's terminated and exited
// events from being sent.
func (s *server) stopRun(quiet bool) {
	s.mu.Lock()
	s.dropAheadLocked()
	d := s.cur
	if d != nil {
		d.quiet = d.quiet || quiet
	}
	s.mu.Unlock()
	if d == nil {
		return
	}
	d.cancel()
	select {
	case <-d.done:
	case <-time.After(s.opts.Grace):
	}
}

// run runs the prompt and reports its end.
func (d *debugRun) run(ctx context.Context) {
	s := d.s
	defer s.running.Done()
	defer close(d.done)
	code, res, rerr := d.runSession(ctx)
	path := d.args.Program
	s.mu.Lock()
	// A run ahead that was never adopted ends unseen.
	quiet := d.quiet || d.ahead != nil
	s.mu.Unlock()
	switch {
	case quiet:
		// Restarted, or the session ended: nobody wants this run's end.
	case rerr != nil:
		re := run.AsRunError(rerr)
		msg := re.Located(path) + "\n"
		var pe *session.ParseError
		if errors.As(rerr, &pe) {
			msg = ""
			for _, p := range pe.Problems {
				msg += fmt.Sprintf("%s:%d: %s\n", path, p.Line, p.Message)
			}
		}
		d.output("stderr", msg, re.Line)
	default:
		out := res
		if !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		d.output("stdout", out, 0)
	}
	s.mu.Lock()
	if s.cur == d {
		s.cur = nil
		// Nothing to step back from any more.
		s.dropAheadLocked()
	}
	d.ended = true
	s.mu.Unlock()
	if quiet {
		return
	}
	s.send(&godap.TerminatedEvent{Event: event("terminated")})
	s.send(&godap.ExitedEvent{Event: event("exited"), Body: godap.ExitedEventBody{ExitCode: code}})
}

// Exit codes as `forge-lsp run` gives them.
const (
	exitOK        = 0
	exitRunError  = 1
	exitUsage     = 2
	exitInterrupt = 130
)

func (d *debugRun) runSession(ctx context.Context) (code int, res string, err error) {
	a := d.args
	s := d.s
	src, err := s.readPrompt(a.Program)
	if err != nil {
		return exitUsage, "", &run.RunError{Kind: run.KindInternal, Msg: err.Error()}
	}
	s.mu.Lock()
	d.text = src
	ahead := d.ahead
	s.mu.Unlock()
	var traceTo io.Writer
	traceFile := ""
	switch {
	case a.Trace != "" && ahead != nil:
		// Into the trace file only if the run is adopted (ahead.go).
		defer ahead.trace.Close()
		traceTo = ahead.trace
	case a.Trace != "":
		if d.runNo > 1 {
			// A re-run: the trace of the run before stays, for comparing.
			_ = os.Rename(a.Trace, keptTrace(a.Trace, d.runNo-1))
		}
		traceFile = a.Trace
	}
	s.mu.Lock()
	prior, pn, parsed, toolsCache := s.tape, s.pin, s.parsed, s.tools
	if d.prior != nil {
		prior = d.prior
	}
	s.mu.Unlock()
	if prior == nil && a.Replay != "" {
		if prior, err = gateway.LoadTape(a.Replay); err != nil {
			return exitUsage, "", &run.RunError{Kind: run.KindInternal, Msg: fmt.Sprintf("%s: %v", session.OptReplay, err)}
		}
	}
	rec := &gateway.Tape{}
	var gate func() error
	if ahead != nil {
		// A run ahead makes no live call before it is adopted.
		gate = func() error { return ahead.gate(ctx) }
	}
	obs, spans := d.startSpans(ahead != nil)
	sess, err := session.Open(session.Options{
		Path: a.Program, Source: src, Parsed: parsed, Section: a.Section, Input: a.Input, Observer: obs,
		StoreDir: a.Store, Trace: traceTo, TraceFile: traceFile, Tools: toolsCache,
		Gateway: session.Gateway{URL: a.Gateway}, Env: d.s.opts.Env, Execution: pn.execution,
		// A debugged run waits at breakpoints: no wall-clock deadline.
		Limits: run.Limits{Timeout: session.NoTimeout},
		// Every run records on a tape; a re-run is answered from the last
		// one's while its requests match (whatif.go).
		Retake: &session.Retake{Prior: prior, Record: rec, Offline: a.Offline || a.Replay != "", Diverged: d.diverged, Gate: gate},
		Now:    func() time.Time { return pn.now }, Nonce: pn.nonce,
		// launch.json belongs to the repository: a debugged replay never
		// runs tools (docs/security.md#runs).
		LiveToolsHint: "debug a live run instead (no replay) to run them",
	})
	if err != nil {
		spans.End(err)
		var se *session.SetupError
		var np *session.NotAPromptError
		if errors.As(err, &se) {
			if se.Option == session.OptStore {
				return exitUsage, "", &run.RunError{Kind: run.KindStore, Msg: "store folder: " + se.Err.Error()}
			}
			return exitUsage, "", &run.RunError{Kind: run.KindInternal, Msg: fmt.Sprintf("%s: %v", se.Option, se.Err)}
		}
		if errors.As(err, &np) {
			return exitUsage, "", err
		}
		return exitRunError, "", err
	}
	s.mu.Lock()
	d.sess = sess
	// The next re-run of the same text skips the probe and the parse.
	s.parsed = sess.Prompt()
	s.mu.Unlock()
	res, err = sess.Run(spans.Context(ctx))
	spans.End(err)
	carry := sess.Carry()
	s.mu.Lock()
	// A run a re-run replaced handed its tape over already (rerun).
	if !d.replaced {
		s.tape = carry
	}
	s.mu.Unlock()
	cerr := sess.Close()
	s.mu.Lock()
	dropped := d.ahead != nil
	s.mu.Unlock()
	if a.Record != "" && !dropped {
		key, _ := d.s.opts.Env(gateway.EnvKey)
		if werr := rec.WriteFile(a.Record, key); werr != nil && cerr == nil {
			cerr = werr
		}
	}
	if err != nil {
		if run.AsRunError(err).IsCancelled() {
			return exitInterrupt, res, err
		}
		return exitRunError, res, err
	}
	if cerr != nil && a.Record != "" {
		return exitRunError, res, &run.RunError{Kind: run.KindInternal, Msg: "record: " + cerr.Error()}
	}
	return exitOK, res, nil
}

// keptTrace is where the trace of run n of a launch is kept when a re-run
// writes trace: p.jsonl becomes p.n.jsonl (docs/debugging.md#what-if).
func keptTrace(trace string, n int) string {
	ext := filepath.Ext(trace)
	return strings.TrimSuffix(trace, ext) + "." + strconv.Itoa(n) + ext
}

// output sends an output event; line > 0 points at src.
func (s *server) output(src *godap.Source, category, text string, line int) {
	s.send(outputEvent(src, category, text, line))
}

func outputEvent(src *godap.Source, category, text string, line int) *godap.OutputEvent {
	body := godap.OutputEventBody{Category: category, Output: text}
	if line > 0 && src != nil {
		body.Source, body.Line = src, line
	}
	return &godap.OutputEvent{Event: event("output"), Body: body}
}

// sourceOf is a program as a DAP source.
func sourceOf(p string) *godap.Source {
	p = absPath(p)
	return &godap.Source{Name: filepath.Base(p), Path: p}
}

// parseFile parses a prompt for breakpoint placement.
func parseFile(path string) (*parse.Prompt, error) {
	src, err := fsread.ReadFile(path, fsread.Source)
	if err != nil {
		return nil, err
	}
	return parse.Parse(path, src), nil
}

// promptText is the prompt file's text as a run of the launch last read
// it, with the file's stamp then.
type promptText struct {
	path  string
	stamp fsread.Stamp
	text  []byte
}

// readPrompt reads the prompt at path, or returns the text read last
// when the file's size and modification time are the ones it had then
// (and old enough to vouch for it: fsread.StampOf): a step back re-runs
// the prompt, and a stat costs less than a read. The text is shared by
// the runs and only read. Needs s.mu not held.
func (s *server) readPrompt(path string) ([]byte, error) {
	st, vouched := fsread.StampOf(path)
	s.mu.Lock()
	c := s.prompt
	s.mu.Unlock()
	if vouched && c.text != nil && c.path == path && c.stamp.Size == st.Size && c.stamp.ModTime.Equal(st.ModTime) {
		return c.text, nil
	}
	src, err := fsread.ReadFile(path, fsread.Prompt)
	if err != nil {
		return nil, err
	}
	if vouched {
		s.mu.Lock()
		s.prompt = promptText{path: path, stamp: st, text: src}
		s.mu.Unlock()
	}
	return src, nil
}
