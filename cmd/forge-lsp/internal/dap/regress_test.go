package dap

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	godap "github.com/google/go-dap"
)

// laterProgram defines a global function in one block and calls it from
// the next; the comments are file lines.
const laterProgram = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n" + // 9
	"```lua\n" + // 11
	"function answer()\n" + // 12
	"  return 42\n" + // 13
	"end\n" +
	"local unused = 1\n" + // 15
	"```\n\n" +
	"```lua\n" + // 18
	"local v = answer()\n" + // 19
	"return v\n" +
	"```\n"

// A statement breakpoint in a block instruments the functions it defines;
// they stay valid after the block ends, and stop where a breakpoint is.
func TestInstrumentedFunctionOutlivesItsBlock(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "later.md")
	writeFile(t, prog, laterProgram)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog}, []int{15}, nil)
	c.at("breakpoint", 15)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "42\n" || code != 0 {
		t.Fatalf("end: %q %d, want 42 as `run` gives", out, code)
	}

	// With a breakpoint inside the function, the call from the next block
	// stops there, with the function's frame above the calling block's.
	c2 := start(t, Options{})
	c2.launch(LaunchArgs{Program: prog}, []int{13}, nil)
	_, f := c2.at("breakpoint", 13)
	if f.Name != "answer in ## A" {
		t.Errorf("frame %q, want answer in ## A", f.Name)
	}
	c2.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c2.finish(); out != "42\n" || code != 0 {
		t.Fatalf("end: %q %d", out, code)
	}
}

// handlerProgram has a local tool whose handler body has lines of its
// own, and a block after the prose block; the comments are file lines.
const handlerProgram = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n" +
	"```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\n```\n\n" + // 9-11
	"## Main\n\n" + // 13
	"```lua\n" + // 15
	"tools.add_local(\"echo\", \"echo text back\", {text = \"string\"}, function(a)\n" + // 16
	"  local r = \"E:\" .. a.text\n" + // 17
	"  return r\n" +
	"end)\n" +
	"local unused = 1\n" + // 20
	"```\n\n" +
	"Say hi.\n\n" + // 23
	"```lua\n" + // 25
	"return \"after \" .. reply\n" + // 26
	"```\n"

// A local tool handler defined in an instrumented block runs when the
// model calls it, after the block ended, and stops at a breakpoint in
// its body.
func TestInstrumentedHandlerRunsAfterItsBlock(t *testing.T) {
	prog, cas := fixtureOf(t, handlerProgram, "after done")
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{20}, nil)
	c.at("breakpoint", 20)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "after done\n" || code != 0 {
		t.Fatalf("end: %q %d", out, code)
	}
	c2 := start(t, Options{})
	c2.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{17}, nil)
	_, f := c2.at("breakpoint", 17)
	if loc := c2.scope(f.Id, "Locals"); loc["a"].Type != "table" {
		t.Errorf("handler locals: %+v", loc)
	}
	c2.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c2.finish(); out != "after done\n" || code != 0 {
		t.Fatalf("end: %q %d", out, code)
	}
}

// The Globals scope leaves out the run values the Run scope shows: reply,
// set by the prose block, is not one of the entry's built-ins.
func TestGlobalsLeaveOutReply(t *testing.T) {
	prog, cas := fixtureOf(t, handlerProgram, "after done")
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{26}, nil)
	_, f := c.at("breakpoint", 26)
	if run := c.scope(f.Id, "Run"); run["reply"].Value != `"done"` {
		t.Errorf("Run scope: %+v", run)
	}
	if g := c.scope(f.Id, "Globals"); len(g) != 0 {
		t.Errorf("Globals: %+v, want none", g)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.finish()
}

// Breakpoints on lines that are not in the file say so; a named pipe is
// refused at once instead of blocking the request loop.
func TestBreakpointLinesAndFiles(t *testing.T) {
	prog, _ := fixture(t)
	c := start(t, Options{})
	c.call("initialize", map[string]any{"adapterID": "promptforge"})
	bps := c.call("setBreakpoints", godap.SetBreakpointsArguments{Source: godap.Source{Path: prog},
		Breakpoints: []godap.SourceBreakpoint{{Line: -5}, {Line: 0}, {Line: 999}}}).(*godap.SetBreakpointsResponse).Body.Breakpoints
	for i, want := range []string{"line -5 is not a line of the file", "line 0 is not a line", "line 999 is past the end of the file (54 lines)"} {
		if bps[i].Verified || !strings.Contains(bps[i].Message, want) {
			t.Errorf("breakpoint %d: %+v, want ~%q", i, bps[i], want)
		}
	}
	fifo := filepath.Join(t.TempDir(), "pipe.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	bps = c.call("setBreakpoints", godap.SetBreakpointsArguments{Source: godap.Source{Path: fifo},
		Breakpoints: []godap.SourceBreakpoint{{Line: 3}}}).(*godap.SetBreakpointsResponse).Body.Breakpoints
	if len(bps) != 1 || bps[0].Verified || !strings.Contains(bps[0].Message, "a named pipe") {
		t.Errorf("breakpoint in a named pipe: %+v", bps)
	}
	if msg := c.callErr("launch", LaunchArgs{Program: fifo}); !strings.Contains(msg, "not a regular file") {
		t.Errorf("launch of a named pipe: %q", msg)
	}
}
