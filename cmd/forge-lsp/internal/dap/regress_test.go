package dap

import (
	"path/filepath"
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

// A local tool handler defined in an instrumented block runs when the
// model calls it, after the block ended.
func TestInstrumentedHandlerRunsAfterItsBlock(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{16}, nil)
	c.at("breakpoint", 16)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Fatalf("end: %q %d", out, code)
	}
}
