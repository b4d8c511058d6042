package dap

import (
	"path/filepath"
	"strings"
	"testing"

	godap "github.com/google/go-dap"
)

// A runaway expression stops on the console's own budget: later
// evaluations work and the run ends as it would have.
func TestEvaluateHasItsOwnBudget(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{19}, nil)
	_, f := c.at("breakpoint", 19)
	for i := 0; i < 3; i++ {
		msg := c.callErr("evaluate", godap.EvaluateArguments{Expression: "(function() while true do end end)()", FrameId: f.Id, Context: "repl"})
		if !strings.Contains(msg, "debug console's own budget") || !strings.Contains(msg, "instruction") {
			t.Fatalf("runaway expression: %q", msg)
		}
	}
	if got := c.eval(f.Id, "sub"); got != `"h:x"` {
		t.Errorf("after the runaway: %s", got)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}

// Control-flow and model calls are refused in the console, with a
// message; the request loop answers everything after them.
func TestEvaluateRefusesControlFlow(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{19}, nil)
	_, f := c.at("breakpoint", 19)
	for _, expr := range []string{`execute("## Helper")`, `jump("## Last")`, `fanout("### Arm", {"z"})`, `models.infer("hi")`} {
		msg := c.callErr("evaluate", godap.EvaluateArguments{Expression: expr, FrameId: f.Id, Context: "repl"})
		name := expr[:strings.IndexAny(expr, "(")]
		if !strings.Contains(msg, name+" cannot run from the debug console") {
			t.Errorf("%s: %q", expr, msg)
		}
	}
	// Caught, the refusal is an error value like any other.
	if got := c.eval(f.Id, `select(2, pcall(execute, "## Helper"))`); !strings.Contains(got, "execute cannot run from the debug console") {
		t.Errorf("pcall(execute): %s", got)
	}
	if ths := c.call("threads", nil).(*godap.ThreadsResponse).Body.Threads; len(ths) == 0 {
		t.Error("no threads")
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
	c.call("disconnect", nil)
}

// Evaluate and scopes run only on a stopped thread: while an arm is held,
// the walk's thread waits for its arms and its frames are not evaluated.
func TestEvaluateOnlyOnStoppedThreads(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{35}, map[int]string{35: `item == "b"`})
	ev := c.stopped()
	if ev.Body.ThreadId == mainThread {
		t.Fatalf("stopped on the main thread: %+v", ev.Body)
	}
	fs := c.frames(mainThread)
	if len(fs) == 0 {
		t.Fatal("no frames on the main thread")
	}
	if msg := c.callErr("evaluate", godap.EvaluateArguments{Expression: "1 + 1", FrameId: fs[0].Id}); !strings.Contains(msg, "thread 1 (main) is not stopped") {
		t.Errorf("evaluate on the waiting thread: %q", msg)
	}
	if msg := c.callErr("scopes", godap.ScopesArguments{FrameId: fs[0].Id}); !strings.Contains(msg, "is not stopped") {
		t.Errorf("scopes on the waiting thread: %q", msg)
	}
	arm := c.frames(ev.Body.ThreadId)
	if got := c.eval(arm[0].Id, "item"); got != `"b"` {
		t.Errorf("item: %s", got)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}

// A function with a breakpoint, called from the console, runs through:
// the VM is already held.
func TestEvaluateDoesNotStopAtBreakpoints(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "f.md")
	writeFile(t, prog, luaProgram)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog}, []int{13}, nil)
	c.at("breakpoint", 13)
	// The chunk's frame, where double is a local.
	chunk := c.frames(mainThread)[1]
	if got := c.eval(chunk.Id, "double(5)"); got != "10" {
		t.Errorf("double(5) from the console: %s", got)
	}
	for i := 0; i < 3; i++ {
		if i > 0 {
			c.at("breakpoint", 13)
		}
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	}
	if out, code := c.finish(); out != "12\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}
