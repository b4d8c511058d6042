package dap

import (
	"strings"
	"testing"

	godap "github.com/google/go-dap"
)

func TestBreakpointsScopesEvaluate(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	bps := c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution},
		[]int{9, 13, 19, 23, 12, 3, 11}, nil, "echo", "nope")
	want := []struct {
		verified bool
		line     int
		msg      string
	}{{true, 9, ""}, {true, 13, ""}, {true, 19, ""}, {true, 23, ""}, {false, 12, "nothing runs on line 12"},
		{false, 3, "frontmatter"}, {false, 11, "no Lua statement starts on line 11"}}
	for i, w := range want {
		b := bps[i]
		if b.Verified != w.verified || b.Line != w.line || !strings.Contains(b.Message, w.msg) {
			t.Errorf("breakpoint %d: %+v, want verified %v line %d message ~%q", i, b, w.verified, w.line, w.msg)
		}
	}

	// The H1's Lua block, then the heading of ## Main.
	c.at("breakpoint", 9)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	_, f := c.at("breakpoint", 13)
	if f.Name != "## Main" {
		t.Errorf("frame name %q", f.Name)
	}
	// A statement of Main's Lua block: locals, the run values, the REPL.
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	_, f = c.at("breakpoint", 19)
	if f.Name != "## Main (lua)" {
		t.Errorf("frame name %q", f.Name)
	}
	if loc := c.scope(f.Id, "Locals"); len(loc) != 1 || loc["sub"].Value != `"h:x"` {
		t.Errorf("Locals: %+v", loc)
	}
	run := c.scope(f.Id, "Run")
	if run["args"].Value != `"Ann"` || run["model"].Value == "(none bound)" || run["sys"].VariablesReference == 0 {
		t.Errorf("Run scope: %+v", run)
	}
	if sys := c.vars(run["sys"].VariablesReference); sys["execution"].Value != `"`+execution+`"` || sys["id"].Value == "" {
		t.Errorf("sys: %+v", sys)
	}
	if got := c.eval(f.Id, "sub .. ' ' .. args"); got != `"h:x Ann"` {
		t.Errorf("evaluate: %s", got)
	}
	if msg := c.callErr("evaluate", godap.EvaluateArguments{Expression: "os.execute('true')", FrameId: f.Id}); !strings.Contains(msg, "execute") {
		t.Errorf("the REPL must run under the sandbox: %q", msg)
	}
	c.step("next", mainThread, 20)
	// next: the prose block, where the request is shown.
	_, f = c.step("next", mainThread, 23)
	req := c.scope(f.Id, "Request")
	if len(req) != 1 || req["1 user"].Value != `"Say hi to Ann."` {
		t.Errorf("Request scope: %+v", req)
	}
	if v := c.scope(f.Id, "var"); v["count"].Value != "1" {
		t.Errorf("var scope: %+v", v)
	}
	if st := c.scope(f.Id, "Store"); st["notes.md"].Value != `"hello"` || st["notes.md"].Type != "5 bytes" {
		t.Errorf("Store scope: %+v", st)
	}
	if g := c.scope(f.Id, "Globals"); g["sub"].Value != "" {
		t.Errorf("a chunk local is not a global: %+v", g)
	}
	tools := c.scope(f.Id, "Tools")
	if len(tools) != 1 || tools["echo"].Value != "local/echo" || tools["echo"].Type != "local tool" {
		t.Errorf("Tools scope: %+v", tools)
	}
	// The model calls echo: the function breakpoint shows the arguments.
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	ev, f := c.at("function breakpoint", 23)
	if ev.Body.Reason != "function breakpoint" || !strings.Contains(f.Name, "tool echo") {
		t.Errorf("tool stop: %+v %+v", ev.Body, f)
	}
	call := c.scope(f.Id, "Tool call")
	if call["alias"].Value != `"echo"` {
		t.Errorf("Tool call scope: %+v", call)
	}
	if args := c.vars(call["args"].VariablesReference); args["text"].Value != `"x"` {
		t.Errorf("tool args: %+v", args)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	out, code := c.finish()
	if out != "last done\n" || code != 0 {
		t.Errorf("end: %q exit %d", out, code)
	}
	c.call("disconnect", nil)
}

func TestLogLinesAndErrors(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, nil, nil)
	var log *godap.OutputEvent
	for log == nil {
		o := c.event("output").(*godap.OutputEvent)
		if o.Body.Category == "console" {
			log = o
		}
	}
	if log.Body.Output != "helper said h:x\n" || log.Body.Line != 19 || log.Body.Source == nil || log.Body.Source.Path != absPath(prog) {
		t.Errorf("log output: %+v", log.Body)
	}
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}

	// A failing run: the error on stderr with its location, exit code 1.
	bad := strings.Replace(prog, "p.md", "bad.md", 1)
	writeFile(t, bad, "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nerror(\"boom\")\n```\n")
	c2 := start(t, Options{})
	c2.launch(LaunchArgs{Program: bad}, nil, nil)
	var errOut *godap.OutputEvent
	for errOut == nil {
		if o := c2.event("output").(*godap.OutputEvent); o.Body.Category == "stderr" {
			errOut = o
		}
	}
	// The same text as `forge-lsp run`: the location once.
	if errOut.Body.Output != bad+":12: boom (Lua error in section `A` prologue)\n" || errOut.Body.Line != 12 {
		t.Errorf("error output: %+v", errOut.Body)
	}
	c2.event("terminated")
	if ex := c2.event("exited").(*godap.ExitedEvent); ex.Body.ExitCode != 1 {
		t.Errorf("exit code %d", ex.Body.ExitCode)
	}
}
