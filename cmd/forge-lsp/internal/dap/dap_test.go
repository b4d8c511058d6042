package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/session"
	godap "github.com/google/go-dap"
)

// program walks ## Main (an execute into ## Helper, a prose block with a
// local tool), then ## Next (a fanout over ### Arm, a jump over
// ## Skipped to ## Last). The comments are the file lines.
const program = "---\nname: t\ndescription: a test prompt\npromptforge: 1\n---\n\n" +
	"# T\n\n" + // 7
	"```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\n```\n\n" + // 9-11
	"## Main\n\n" + // 13
	"```lua\n" + // 15
	"var.count = 1\n" +
	"store.write(\"notes.md\", \"hello\")\n" +
	"local sub = execute(\"## Helper\", \"x\")\n" +
	"log(\"helper said \" .. sub)\n" + // 19
	"tools.add_local(\"echo\", \"echo text back\", {text = \"string\"}, function(a) return \"E:\" .. a.text end)\n" +
	"```\n\n" + // 21
	"Say hi to {{ args }}.\n\n" + // 23
	"## Next\n\n" + // 25
	"```lua\n" + // 27
	"local rs = fanout(\"### Arm\", {\"a\", \"b\"})\n" +
	"jump(\"## Last\")\n" +
	"```\n\n" + // 30
	"### Arm\n\n" + // 32
	"```lua\n" + // 34
	"return \"arm:\" .. item\n" +
	"```\n\n" + // 36
	"## Skipped\n\n" + // 38
	"```lua\nreturn \"never\"\n```\n\n" + // 40-42
	"## Last\n\n" + // 44
	"```lua\nreturn \"last \" .. reply\n```\n\n" + // 46-48
	"## Helper\n\n" + // 50
	"```lua\nreturn \"h:\" .. args\n```\n" // 52-54

const execution = "dap-test"

// fixture writes the program and records its cassette against a scripted
// gateway (a tool-call turn, then "done").
func fixture(t *testing.T) (prog, cassette string) {
	t.Helper()
	return fixtureOf(t, program, "last done")
}

// fixtureOf writes src and records its cassette (the same model turns as
// fixture's); want is the run's result.
func fixtureOf(t *testing.T, src, want string) (prog, cassette string) {
	t.Helper()
	dir := t.TempDir()
	prog = filepath.Join(dir, "p.md")
	cassette = filepath.Join(dir, "p.cassette")
	if err := os.WriteFile(prog, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := gatewaytest.New(t, "k")
	srv.Enqueue(gatewaytest.Calls("echo", `{"text":"x"}`), gatewaytest.Text("done"))
	s, err := session.Open(session.Options{Path: prog, Source: []byte(src), Input: "Ann", Execution: execution,
		Gateway: session.Gateway{Record: cassette}, Env: gatewayEnv(srv.BaseURL())})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if cerr := s.Close(); err != nil || cerr != nil || res != want {
		t.Fatalf("recording: %q %v %v", res, err, cerr)
	}
	return prog, cassette
}

func gatewayEnv(url string) gateway.LookupFunc {
	return func(k string) (string, bool) {
		switch k {
		case gateway.EnvURL:
			return url, true
		case gateway.EnvKey:
			return "k", true
		}
		return "", false
	}
}

// client drives a server over a pipe with go-dap's codec.
type client struct {
	t      testing.TB
	conn   net.Conn
	r      *bufio.Reader
	seq    int
	events []godap.Message
	done   chan error
}

func start(t testing.TB, opts Options) *client {
	t.Helper()
	cs, ss := net.Pipe()
	c := &client{t: t, conn: cs, r: bufio.NewReader(cs), done: make(chan error, 1)}
	if opts.Env == nil {
		opts.Env = func(string) (string, bool) { return "", false }
	}
	go func() {
		err := Serve(ss, ss, opts)
		ss.Close()
		c.done <- err
	}()
	t.Cleanup(func() {
		cs.Close()
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not end")
		}
	})
	return c
}

func (c *client) send(command string, args any) int {
	c.t.Helper()
	c.seq++
	m := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		m["arguments"] = args
	}
	b, _ := json.Marshal(m)
	if err := godap.WriteBaseMessage(c.conn, b); err != nil {
		c.t.Fatal(err)
	}
	return c.seq
}

func (c *client) read() godap.Message {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	m, err := godap.ReadProtocolMessage(c.r)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// call sends a request and returns its response; events that come first
// are kept for expectEvent.
func (c *client) call(command string, args any) godap.ResponseMessage {
	c.t.Helper()
	seq := c.send(command, args)
	for {
		m := c.read()
		if r, ok := m.(godap.ResponseMessage); ok && r.GetResponse().RequestSeq == seq {
			if !r.GetResponse().Success {
				c.t.Fatalf("%s failed: %s", command, r.GetResponse().Message)
			}
			return r
		}
		c.events = append(c.events, m)
	}
}

// callErr sends a request that must fail and returns its message.
func (c *client) callErr(command string, args any) string {
	c.t.Helper()
	seq := c.send(command, args)
	for {
		m := c.read()
		if r, ok := m.(godap.ResponseMessage); ok && r.GetResponse().RequestSeq == seq {
			if r.GetResponse().Success {
				c.t.Fatalf("%s succeeded", command)
			}
			return r.GetResponse().Message
		}
		c.events = append(c.events, m)
	}
}

// event waits for the next event named name, keeping the others.
func (c *client) event(name string) godap.Message {
	c.t.Helper()
	for i, m := range c.events {
		if e, ok := m.(godap.EventMessage); ok && e.GetEvent().Event == name {
			c.events = append(c.events[:i:i], c.events[i+1:]...)
			return m
		}
	}
	for {
		m := c.read()
		if e, ok := m.(godap.EventMessage); ok && e.GetEvent().Event == name {
			return m
		}
		c.events = append(c.events, m)
	}
}

func (c *client) stopped() *godap.StoppedEvent {
	c.t.Helper()
	return c.event("stopped").(*godap.StoppedEvent)
}

// launch initializes and launches with args, sets breakpoints and ends
// the configuration.
func (c *client) launch(args LaunchArgs, lines []int, conds map[int]string, funcs ...string) []godap.Breakpoint {
	c.t.Helper()
	c.call("initialize", map[string]any{"adapterID": "promptforge", "linesStartAt1": true})
	c.event("initialized")
	c.call("launch", args)
	var bps []godap.SourceBreakpoint
	for _, l := range lines {
		bps = append(bps, godap.SourceBreakpoint{Line: l, Condition: conds[l]})
	}
	r := c.call("setBreakpoints", godap.SetBreakpointsArguments{Source: godap.Source{Path: args.Program}, Breakpoints: bps}).(*godap.SetBreakpointsResponse)
	if len(funcs) > 0 {
		var fbs []godap.FunctionBreakpoint
		for _, f := range funcs {
			fbs = append(fbs, godap.FunctionBreakpoint{Name: f})
		}
		c.call("setFunctionBreakpoints", godap.SetFunctionBreakpointsArguments{Breakpoints: fbs})
	}
	c.call("configurationDone", nil)
	return r.Body.Breakpoints
}

func (c *client) frames(thread int) []godap.StackFrame {
	c.t.Helper()
	return c.call("stackTrace", godap.StackTraceArguments{ThreadId: thread}).(*godap.StackTraceResponse).Body.StackFrames
}

// at checks that the run stopped on thread at line with reason.
func (c *client) at(reason string, line int) (*godap.StoppedEvent, godap.StackFrame) {
	c.t.Helper()
	ev := c.stopped()
	fs := c.frames(ev.Body.ThreadId)
	if len(fs) == 0 {
		c.t.Fatalf("stopped (%s) without frames", ev.Body.Reason)
	}
	if ev.Body.Reason != reason || fs[0].Line != line {
		c.t.Fatalf("stopped (%s) at %s line %d; want %s at line %d", ev.Body.Reason, fs[0].Name, fs[0].Line, reason, line)
	}
	return ev, fs[0]
}

// step sends a next, stepIn or stepOut request for thread and checks that
// the run stopped with reason "step" at line.
func (c *client) step(command string, thread, line int) (*godap.StoppedEvent, godap.StackFrame) {
	c.t.Helper()
	switch command {
	case "next":
		c.call(command, godap.NextArguments{ThreadId: thread})
	case "stepIn":
		c.call(command, godap.StepInArguments{ThreadId: thread})
	case "stepOut":
		c.call(command, godap.StepOutArguments{ThreadId: thread})
	default:
		c.t.Fatalf("step: %q is not a stepping request", command)
	}
	return c.at("step", line)
}

// scope returns the variables of the named scope of frame, by name.
func (c *client) scope(frame int, name string) map[string]godap.Variable {
	c.t.Helper()
	ss := c.call("scopes", godap.ScopesArguments{FrameId: frame}).(*godap.ScopesResponse).Body.Scopes
	for _, s := range ss {
		if s.Name == name {
			return c.vars(s.VariablesReference)
		}
	}
	c.t.Fatalf("no scope %q in %+v", name, ss)
	return nil
}

func (c *client) vars(ref int) map[string]godap.Variable {
	c.t.Helper()
	vs := c.call("variables", godap.VariablesArguments{VariablesReference: ref}).(*godap.VariablesResponse).Body.Variables
	m := map[string]godap.Variable{}
	for _, v := range vs {
		m[v.Name] = v
	}
	return m
}

func (c *client) eval(frame int, expr string) string {
	c.t.Helper()
	return c.call("evaluate", godap.EvaluateArguments{Expression: expr, FrameId: frame, Context: "repl"}).(*godap.EvaluateResponse).Body.Result
}

// finish waits for the end of the run and returns the stdout output and
// the exit code.
func (c *client) finish() (string, int) {
	c.t.Helper()
	var out strings.Builder
	for {
		m := c.event("output")
		o := m.(*godap.OutputEvent)
		if o.Body.Category == "stdout" {
			out.WriteString(o.Body.Output)
			break
		}
		if o.Body.Category == "stderr" {
			out.WriteString(o.Body.Output)
			break
		}
	}
	c.event("terminated")
	ex := c.event("exited").(*godap.ExitedEvent)
	return out.String(), ex.Body.ExitCode
}

// disconnect ends the session and waits for the server to return (every
// run ended, its trace written).
func (c *client) disconnect() {
	c.t.Helper()
	c.call("disconnect", godap.DisconnectArguments{})
	select {
	case err := <-c.done:
		c.done <- err
	case <-time.After(30 * time.Second):
		c.t.Fatal("the server did not end")
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
