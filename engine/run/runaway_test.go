package run

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
)

// runawayPrompts are CPU and memory runaways (the section bodies after
// "# T"): each must end with Quota, in a process that stays under 512 MiB.
// The budgets are scaled down (runawayLimits) so that the test is quick;
// the inputs are the ones that ran for minutes or reached gigabytes.
var runawayPrompts = map[string]string{
	"backtracking find": "## A\n\n```lua\nreturn string.rep(\"a\", 5000):find(\".-.-.-.-.-.-b\")\n```\n",
	"gsub empty 16 MB":  "## A\n\n```lua\nlocal s = string.rep(\"x\", 16 * 1024 * 1024) return #s:gsub(\"\", \"\")\n```\n",
	"gmatch empty":      "## A\n\n```lua\nlocal s = string.rep(\"x\", 16 * 1024 * 1024) for m in s:gmatch(\"\") do end\n```\n",
	"format 64x16 MB":   "## A\n\n```lua\nlocal s = string.rep(\"x\", 16 * 1024 * 1024) return string.format(string.rep(\"%s\", 64), " + strings.Repeat("s, ", 63) + "s)\n```\n",
	"concat 32x16 MB":   "## A\n\n```lua\nlocal s = string.rep(\"x\", 16 * 1024 * 1024) return " + strings.Repeat("s..", 31) + "s\n```\n",
	"quadratic concat":  "## A\n\n```lua\nlocal s = \"\" while true do s = s .. \"abcdefghij\" end\n```\n",
	"pcall recursion":   "## A\n\n```lua\nlocal function f() pcall(f) pcall(f) end f()\n```\n",
	"tail recursion":    "## A\n\n```lua\nlocal function f(n) return f(n + 1) end return f(1)\n```\n",
	"pcall unpack":      "## A\n\n```lua\nwhile true do pcall(unpack, {}, 1, 1e8) end\n```\n",
	"jump ping-pong":    "## A\n\n```lua\nlocal i = 0 while i < 200000 do i = i + 1 end\njump(\"## B\")\n```\n\n## B\n\n```lua\nlocal i = 0 while i < 200000 do i = i + 1 end\njump(\"## A\")\n```\n",
	"heavy arms":        "## A\n\n```lua\nlocal t = {} for i = 1, 200 do t[i] = i end\nfanout(\"### W\", t)\n```\n\n### W\n\n```lua\nlocal i = 0 while i < 200000 do i = i + 1 end\n```\n",
	"nested arms": "## A\n\n```lua\nfanout(\"### W\", items30())\n```\n\n### W\n\n```lua\nfanout(\"#### X\", items30())\n```\n\n" +
		"#### X\n\n```lua\nfanout(\"##### Y\", items30())\n```\n\n##### Y\n\n```lua\nfanout(\"###### Z\", items30())\n```\n\n###### Z\n\n```lua\nreturn \"z\"\n```\n",
}

// runawayLimits are a tenth of the default instruction budgets.
var runawayLimits = Limits{Instructions: defaultInstructions / 10, RunInstructions: defaultRunInstructions / 10}

const runawayChildEnv = "FORGE_RUN_RUNAWAY_CHILD"

// TestRunaways runs each prompt in a fresh process and checks the kind,
// the peak resident set and, as a fuse against a runaway that was not
// stopped, the CPU time.
func TestRunaways(t *testing.T) {
	if os.Getenv(runawayChildEnv) != "" {
		return
	}
	if raceEnabled {
		t.Skip("peak RSS and CPU are not meaningful under the race detector; run without -race")
	}
	for name := range runawayPrompts {
		if !testflag.Long() && name != "backtracking find" {
			continue // one child process by default; all of them under -long
		}
		t.Run(name, func(t *testing.T) {
			f, text := runChild(t, "TestRunawayChild", []string{runawayChildEnv + "=" + name}, 4)
			kind, msg := f[0], f[3]
			peak, _ := strconv.ParseInt(f[1], 10, 64)
			cpu, _ := time.ParseDuration(f[2])
			t.Logf("%s: %s after %v of CPU, peak RSS %d MiB: %s", name, kind, cpu, peak>>20, msg)
			if kind != "Quota" {
				t.Errorf("kind %q, want Quota\n%s", kind, text)
			}
			if peak <= 0 || peak >= 512<<20 {
				t.Errorf("peak RSS %d MiB, want < 512", peak>>20)
			}
			// A fuse, not a timing: unbudgeted, these ran for minutes.
			if cpu > 20*time.Second {
				t.Errorf("%v of CPU: the budget did not stop the run", cpu)
			}
		})
	}
}

// TestRunawayChild is the child half of TestRunaways; it does nothing
// unless started by it.
func TestRunawayChild(t *testing.T) {
	name := os.Getenv(runawayChildEnv)
	if name == "" {
		return
	}
	memoryFuse(func(peak int64) string { return fmt.Sprintf("RESULT fuse %d 0s memory fuse", peak) })
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua shared\nfunction items30() local t = {} for i = 1, 30 do t[i] = i end return t end\n```\n\n" + runawayPrompts[name]
	p := parse.Parse("p.md", []byte(src))
	_, err := Run(context.Background(), p, Config{Limits: runawayLimits})
	kind, msg := "none", ""
	if re := AsRunError(err); re != nil {
		kind, msg = re.Kind.String(), re.Msg
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("RESULT %s %d %v %s\n", kind, rss("VmHWM"), cpu, msg)
}
