package dap

import (
	"path/filepath"
	"testing"

	godap "github.com/google/go-dap"
)

// luaProgram has a Lua function called in a loop; the comments are file
// lines.
const luaProgram = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n" + // 9
	"```lua\n" + // 11
	"local function double(n)\n" + // 12
	"  local r = n * 2\n" + // 13
	"  return r\n" + // 14
	"end\n" +
	"local total = 0\n" + // 16
	"for i = 1, 3 do\n" + // 17
	"  total = total + double(i)\n" + // 18
	"end\n" +
	"-- done\n" + // 20
	"return total\n" + // 21
	"```\n"

func TestLuaFunctionFrames(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "f.md")
	writeFile(t, prog, luaProgram)
	c := start(t, Options{})
	bps := c.launch(LaunchArgs{Program: prog}, []int{13, 20}, map[int]string{13: "n == 2"})
	if !bps[0].Verified || bps[0].Line != 13 || !bps[1].Verified || bps[1].Line != 21 || bps[1].Message == "" {
		t.Fatalf("breakpoints: %+v", bps)
	}
	// The condition sees the function's locals: the second call.
	c.at("breakpoint", 13)
	fs := c.frames(mainThread)
	if len(fs) != 2 || fs[0].Name != "double in ## A" || fs[1].Name != "## A (lua)" || fs[1].Line != 18 {
		t.Fatalf("frames: %+v", fs)
	}
	if loc := c.scope(fs[0].Id, "Locals"); loc["n"].Value != "2" {
		t.Errorf("double's locals: %+v", loc)
	}
	if loc := c.scope(fs[1].Id, "Locals"); loc["total"].Value != "2" || loc["i"].Value != "2" || loc["double"].Type != "function" {
		t.Errorf("the chunk's locals: %+v", loc)
	}
	if got := c.eval(fs[0].Id, "n * 10"); got != "20" {
		t.Errorf("evaluate in double: %s", got)
	}
	if got := c.eval(fs[1].Id, "total + i"); got != "4" {
		t.Errorf("evaluate in the chunk: %s", got)
	}
	c.step("next", mainThread, 14)
	// Out of double: the loop's next statement, at i = 3.
	_, f := c.step("stepOut", mainThread, 18)
	if got := c.eval(f.Id, "i"); got != "3" {
		t.Errorf("i after step out: %s", got)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	// Line 20 is a comment: its breakpoint moved to the return.
	_, f = c.at("breakpoint", 21)
	if got := c.eval(f.Id, "total"); got != "12" {
		t.Errorf("total: %s", got)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "12\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}
