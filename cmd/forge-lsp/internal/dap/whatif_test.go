package dap

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/session"
	godap "github.com/google/go-dap"
)

// threeRounds asks the model three times, each round's prose built from
// the one before; the comments are the file lines.
const threeRounds = "---\nname: w\ndescription: what if\npromptforge: 1\n---\n\n" +
	"# W\n\n" + // 7
	"```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\n```\n\n" + // 9-11
	"## First\n\n" + // 13
	"```lua\n" + // 15
	"var.tone = \"calm\"\n" + // 16
	"```\n\n" + // 17
	"Write about cats.\n\n" + // 19
	"## Second\n\n" + // 21
	"```lua\n" + // 23
	"var.first = reply\n" + // 24
	"```\n\n" + // 25
	"Summarise in a {{ var.tone }} tone: {{ reply }}\n\n" + // 27
	"## Third\n\n" + // 29
	"Title for: {{ reply }}\n\n" + // 31
	"```lua\n" + // 33
	"return var.first .. \" / \" .. reply\n" + // 34
	"```\n" // 35

// liveWhatIf writes src and starts a debug session against a scripted
// gateway that answers with replies.
func liveWhatIf(t *testing.T, src string, replies ...string) (*client, *gatewaytest.Server, string) {
	t.Helper()
	prog := filepath.Join(t.TempDir(), "w.md")
	writeFile(t, prog, src)
	srv := gatewaytest.New(t, "k")
	for _, r := range replies {
		srv.Enqueue(gatewaytest.Text(r))
	}
	return start(t, Options{Env: gatewayEnv(srv.BaseURL())}), srv, prog
}

// chats are the user messages of the chat requests the gateway got.
func chats(srv *gatewaytest.Server) []string {
	var out []string
	for _, r := range srv.ChatRequests() {
		out = append(out, gatewaytest.LastUserContent(r))
	}
	return out
}

// scopeRef is the variables reference of frame's scope name.
func (c *client) scopeRef(frame int, name string) int {
	c.t.Helper()
	for _, s := range c.call("scopes", godap.ScopesArguments{FrameId: frame}).(*godap.ScopesResponse).Body.Scopes {
		if s.Name == name {
			return s.VariablesReference
		}
	}
	c.t.Fatalf("no scope %q", name)
	return 0
}

func (c *client) setVar(frame int, scope, name, value string) string {
	c.t.Helper()
	ref := c.scopeRef(frame, scope)
	r := c.call("setVariable", godap.SetVariableArguments{VariablesReference: ref, Name: name, Value: value}).(*godap.SetVariableResponse)
	return r.Body.Value
}

// console collects console output events until the next stopped event.
// resumeToStop sends a request that lets the run go on (or re-runs it)
// and returns the stop it comes to, with the console text before it; the
// run may have written some, or even stopped, before the response came.
func (c *client) resumeToStop(command string, args any) (*godap.StoppedEvent, string) {
	c.t.Helper()
	n := len(c.events)
	c.call(command, args)
	early := c.events[n:]
	c.events = c.events[:n:n]
	var b strings.Builder
	for i, m := range early {
		switch e := m.(type) {
		case *godap.StoppedEvent:
			c.events = append(c.events, early[i+1:]...)
			return e, b.String()
		case *godap.OutputEvent:
			b.WriteString(e.Body.Output)
		case *godap.TerminatedEvent:
			c.t.Fatalf("the run ended before stopping; output: %s", b.String())
		default:
			c.events = append(c.events, m)
		}
	}
	ev, more := c.stoppedAfterConsole()
	return ev, b.String() + more
}

func (c *client) stoppedAfterConsole() (*godap.StoppedEvent, string) {
	c.t.Helper()
	var b strings.Builder
	for {
		m := c.read()
		switch e := m.(type) {
		case *godap.StoppedEvent:
			return e, b.String()
		case *godap.OutputEvent:
			b.WriteString(e.Body.Output)
		case *godap.TerminatedEvent:
			c.t.Fatalf("the run ended before stopping; output: %s", b.String())
		}
	}
}

func TestSetVarThenRestartFrame(t *testing.T) {
	c, srv, prog := liveWhatIf(t, threeRounds, "cats essay", "an angry summary", "A Title")
	c.launch(LaunchArgs{Program: prog}, []int{24}, nil)
	_, f := c.at("breakpoint", 24)
	if got := chats(srv); len(got) != 1 {
		t.Fatalf("before the stop: %q", got)
	}
	if v := c.setVar(f.Id, "var", "tone", `"angry"`); v != `"angry"` {
		t.Errorf("setVariable answered %s", v)
	}
	// A bad value changes nothing.
	ref := c.scopeRef(f.Id, "var")
	if msg := c.callErr("setVariable", godap.SetVariableArguments{VariablesReference: ref, Name: "tone", Value: `"unclosed`}); !strings.Contains(msg, "setVariable") {
		t.Errorf("bad value: %q", msg)
	}
	if v := c.scope(f.Id, "var")["tone"].Value; v != `"angry"` {
		t.Errorf("after a bad value tone is %s", v)
	}
	c.call("restartFrame", godap.RestartFrameArguments{FrameId: f.Id})
	ev, frame := c.at("restart", 21)
	_ = ev
	if frame.Name != "## Second" {
		t.Errorf("restarted in %q", frame.Name)
	}
	if v := c.scope(frame.Id, "var")["tone"].Value; v != `"angry"` {
		t.Errorf("at the frame's entry tone is %s", v)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.at("breakpoint", 24)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	out, code := c.finish()
	if code != 0 || out != "cats essay / A Title\n" {
		t.Errorf("end: %q %d", out, code)
	}
	// ## First's round came from the recording: the gateway saw it once.
	got := chats(srv)
	if len(got) != 3 || got[0] != "Write about cats." || !strings.Contains(got[1], "angry tone") {
		t.Errorf("requests the gateway got: %q", got)
	}
}

func TestEditReply(t *testing.T) {
	c, srv, prog := liveWhatIf(t, threeRounds, "cats essay", "summary", "A Title")
	c.launch(LaunchArgs{Program: prog}, []int{19}, nil)
	c.at("breakpoint", 19)
	// next: the stop after the model's reply.
	_, f := c.step("next", mainThread, 19)
	if v := c.scope(f.Id, "Run")["reply"].Value; v != `"cats essay"` {
		t.Fatalf("reply at the stop after the round: %s", v)
	}
	if v := c.setVar(f.Id, "Run", "reply", "dogs essay"); v != `"dogs essay"` {
		t.Errorf("setVariable reply answered %s", v)
	}
	// args cannot be changed.
	ref := c.scopeRef(f.Id, "Run")
	if msg := c.callErr("setVariable", godap.SetVariableArguments{VariablesReference: ref, Name: "args", Value: `"x"`}); !strings.Contains(msg, "only `reply`") {
		t.Errorf("args: %q", msg)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	out, code := c.finish()
	if code != 0 || out != "dogs essay / A Title\n" {
		t.Errorf("end: %q %d", out, code)
	}
	if got := chats(srv); len(got) != 3 || !strings.Contains(got[1], "dogs essay") {
		t.Errorf("the rest of the run did not see the new reply: %q", got)
	}
}

func TestRewordLaterSectionRerunsOnlyIt(t *testing.T) {
	c, srv, prog := liveWhatIf(t, threeRounds, "cats essay", "summary", "A Title", "A Better Title")
	trace := filepath.Join(filepath.Dir(prog), "w.trace.jsonl")
	c.launch(LaunchArgs{Program: prog, Trace: trace}, []int{34}, nil)
	_, f := c.at("breakpoint", 34)
	if got := chats(srv); len(got) != 3 {
		t.Fatalf("before the stop: %q", got)
	}
	writeFile(t, prog, strings.Replace(threeRounds, "Title for:", "A short title for:", 1))
	c.call("restartFrame", godap.RestartFrameArguments{FrameId: f.Id})
	_, f = c.at("restart", 29)
	if f.Name != "## Third" {
		t.Errorf("restarted at %+v", f)
	}
	ev, console := c.resumeToStop("continue", godap.ContinueArguments{ThreadId: mainThread})
	if !strings.Contains(console, "diverged") || !strings.Contains(console, "A short title") {
		t.Errorf("the console did not say where the run diverged: %q", console)
	}
	if ev.Body.Reason != "breakpoint" {
		t.Errorf("stopped: %+v", ev.Body)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	out, code := c.finish()
	if code != 0 || out != "cats essay / A Better Title\n" {
		t.Errorf("end: %q %d", out, code)
	}
	got := chats(srv)
	if len(got) != 4 || !strings.HasPrefix(got[3], "A short title for: summary") {
		t.Errorf("only ## Third's reworded round should reach the gateway again: %q", got)
	}
	// The re-run's trace is the launch's; the first run's is kept beside
	// it, written in full once the session ends.
	c.disconnect()
	first, err := os.ReadFile(filepath.Join(filepath.Dir(prog), "w.trace.1.jsonl"))
	if err != nil || !strings.Contains(string(first), `"prompt":"Title for: summary"`) {
		t.Errorf("the first run's trace: %v %.200s", err, first)
	}
	last, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(last), `"prompt":"A short title for: summary"`) {
		t.Errorf("the re-run's trace: %v %.200s", err, last)
	}
}

func TestOfflineRerunStopsAtTheFirstChangedRequest(t *testing.T) {
	prog, cas := recordOf(t, threeRounds, "cats essay / A Title", "cats essay", "summary", "A Title")
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Replay: cas, Execution: execution}, []int{24}, nil)
	_, f := c.at("breakpoint", 24)
	writeFile(t, prog, strings.Replace(threeRounds, "Title for:", "A short title for:", 1))
	c.call("restartFrame", godap.RestartFrameArguments{FrameId: f.Id})
	c.at("restart", 21)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.at("breakpoint", 24)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	out, code := c.finish()
	if code != 1 || !strings.Contains(out, "offline re-run") || !strings.Contains(out, "A short title") || !strings.Contains(out, "recorded") {
		t.Errorf("end: %d %q", code, out)
	}
}

// recordOf writes src and records its cassette against a scripted
// gateway answering with replies; want is the run's result.
func recordOf(t *testing.T, src, want string, replies ...string) (prog, cassette string) {
	t.Helper()
	dir := t.TempDir()
	prog, cassette = filepath.Join(dir, "p.md"), filepath.Join(dir, "p.cassette")
	writeFile(t, prog, src)
	srv := gatewaytest.New(t, "k")
	for _, r := range replies {
		srv.Enqueue(gatewaytest.Text(r))
	}
	s, err := session.Open(session.Options{Path: prog, Source: []byte(src), Execution: execution,
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

// loop stops five times at line 12, with i = 1..5.
const loop = "---\nname: l\ndescription: a loop\npromptforge: 1\n---\n\n" +
	"# L\n\n" + // 7
	"```lua\n" + // 9
	"local acc = 0\n" + // 10
	"for i = 1, 5 do\n" + // 11
	"  acc = acc + i\n" + // 12
	"end\n" +
	"return tostring(acc)\n" +
	"```\n"

func TestStepBackAndForward(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "l.md")
	writeFile(t, prog, loop)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog}, []int{12}, nil)
	type stop struct{ i, acc string }
	at := func(reason string) stop {
		t.Helper()
		_, f := c.at(reason, 12)
		l := c.scope(f.Id, "Locals")
		return stop{l["i"].Value, l["acc"].Value}
	}
	var forward []stop
	forward = append(forward, at("breakpoint"))
	for k := 1; k < 5; k++ {
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
		forward = append(forward, at("breakpoint"))
	}
	for k := 0; k < 5; k++ {
		if want := (stop{strconv.Itoa(k + 1), strconv.Itoa(k * (k + 1) / 2)}); forward[k] != want {
			t.Fatalf("stop %d: %+v, want %+v", k+1, forward[k], want)
		}
	}
	for k := 3; k >= 1; k-- {
		c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
		if got := at("step"); got != forward[k] {
			t.Errorf("step back to stop %d: %+v, want %+v", k+1, got, forward[k])
		}
	}
	for k := 2; k < 5; k++ {
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
		if got := at("breakpoint"); got != forward[k] {
			t.Errorf("forward again to stop %d: %+v, want %+v", k+1, got, forward[k])
		}
	}
	// reverseContinue: back to the breakpoint stop before.
	c.call("reverseContinue", godap.ReverseContinueArguments{ThreadId: mainThread})
	if got := at("breakpoint"); got != forward[3] {
		t.Errorf("reverse continue: %+v, want %+v", got, forward[3])
	}
	// An edit at a stop is undone by stepping back past it.
	f := c.frames(mainThread)[0]
	c.setVar(f.Id, "Locals", "acc", "100")
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if got := at("breakpoint"); got != (stop{"5", "104"}) {
		t.Errorf("after the edit: %+v", got)
	}
	c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	if got := at("step"); got != (stop{"4", "100"}) {
		t.Errorf("back to the stop of the edit: %+v", got)
	}
	c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	if got := at("step"); got != forward[2] {
		t.Errorf("back past the edit: %+v, want %+v", got, forward[2])
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	at("breakpoint")
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	at("breakpoint")
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "15\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}

// two sets var.step in ## Setup and uses it in ## Count.
const two = "---\nname: l\ndescription: d\npromptforge: 1\n---\n\n" +
	"# L\n\n" + // 7
	"## Setup\n\n" + // 9
	"```lua\nvar.step = 10\n```\n\n" + // 11-13
	"## Count\n\n" + // 15
	"```lua\n" + // 17
	"local n = 3\n" + // 18
	"return tostring(n * var.step)\n" + // 19
	"```\n"

func TestRestartFrameThenStepBackKeepsTheEdit(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "two.md")
	writeFile(t, prog, two)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog}, []int{18}, nil)
	_, f := c.at("breakpoint", 18)
	c.setVar(f.Id, "var", "step", "100")
	c.call("restartFrame", godap.RestartFrameArguments{FrameId: f.Id})
	_, f = c.at("restart", 15)
	if v := c.scope(f.Id, "var")["step"].Value; v != "100" {
		t.Errorf("at the entry step = %s", v)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.at("breakpoint", 18)
	c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	_, f = c.at("step", 15)
	if v := c.scope(f.Id, "var")["step"].Value; v != "100" {
		t.Errorf("stepped back to the entry: step = %s", v)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.at("breakpoint", 18)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "300\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
	// Nothing to step back to once the run is over.
	if msg := c.callErr("stepBack", godap.StepBackArguments{ThreadId: mainThread}); !strings.Contains(msg, "needs a stopped run") {
		t.Errorf("step back after the end: %q", msg)
	}
}

// globals sets a global and a store file, then uses both.
const globals = "---\nname: g\ndescription: d\npromptforge: 1\n---\n\n" +
	"# G\n\n" + // 7
	"## Main\n\n" + // 9
	"```lua\n" + // 11
	"greeting = \"hi\"\n" + // 12
	"store.write(\"notes.md\", \"one\")\n" + // 13
	"local t = { n = 1 }\n" + // 14
	"return greeting .. \" \" .. store.read(\"notes.md\") .. \" \" .. t.n\n" + // 15
	"```\n"

func TestSetGlobalStoreAndExpression(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "g.md")
	writeFile(t, prog, globals)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog}, []int{15}, nil)
	_, f := c.at("breakpoint", 15)
	if v := c.setVar(f.Id, "Globals", "greeting", `"hello"`); v != `"hello"` {
		t.Errorf("global: %s", v)
	}
	if v := c.setVar(f.Id, "Store", "notes.md", "two words"); v != `"two words"` {
		t.Errorf("store file: %s", v)
	}
	// A store path the store refuses changes nothing.
	ref := c.scopeRef(f.Id, "Store")
	if msg := c.callErr("setVariable", godap.SetVariableArguments{VariablesReference: ref, Name: "../x", Value: "y"}); msg == "" {
		t.Error("a bad store path was accepted")
	}
	r := c.call("setExpression", godap.SetExpressionArguments{Expression: "t.n", Value: "41 + 1", FrameId: f.Id}).(*godap.SetExpressionResponse)
	if r.Body.Value != "42" {
		t.Errorf("setExpression: %+v", r.Body)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "hello two words 42\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}
