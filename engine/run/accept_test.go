package run

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// memoryPrompts are runaway allocations that must end with Quota before
// the process uses 512 MiB.
var memoryPrompts = map[string]string{
	"rep":         `local s = string.rep("x", 1e9)`,
	"table":       `local t = {} local i = 0 while true do i = i + 1 t[i] = i end`,
	"tables":      `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i, i, i, i, i, i} end`,
	"big-strings": `local t = {} while true do t[#t + 1] = string.rep("x", 1e6) end`,
	"concat":      `local t = {} while true do t[#t + 1] = table.concat({string.rep("y", 4e6), #t}) end`,
	"doubling":    `local s = "x" while true do s = s .. s end`,
	"store":       `local i = 0 while true do i = i + 1 store.write("f" .. i, string.rep("z", 1e6)) end`,
	"var":         `var.t = {} local i = 0 while true do i = i + 1 var.t[i] = "some text " .. i end`,
}

const memChildEnv = "FORGE_RUN_MEMORY_CHILD"

// TestMemoryQuota runs each prompt in a fresh process (so that the peak
// resident set is the prompt's) and checks Quota and a peak below 512 MiB.
func TestMemoryQuota(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		return
	}
	if raceEnabled {
		t.Skip("peak RSS is not meaningful under the race detector (shadow memory); run without -race")
	}
	for name := range memoryPrompts {
		name := name
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$", "-test.v")
			cmd.Env = append(os.Environ(), memChildEnv+"="+name)
			out, err := cmd.CombinedOutput()
			text := string(out)
			if err != nil {
				t.Fatalf("child failed: %v\n%s", err, text)
			}
			var kind string
			var peak int64
			sc := bufio.NewScanner(strings.NewReader(text))
			for sc.Scan() {
				if k, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "RESULT "); ok {
					f := strings.Fields(k)
					kind = f[0]
					peak, _ = strconv.ParseInt(f[1], 10, 64)
				}
			}
			t.Logf("%s: kind %s, peak RSS %d MiB", name, kind, peak>>20)
			if kind != "Quota" {
				t.Errorf("kind %q, want Quota\n%s", kind, text)
			}
			if peak <= 0 || peak >= 512<<20 {
				t.Errorf("peak RSS %d MiB, want < 512", peak>>20)
			}
		})
	}
}

// TestMemoryChild is the child half of TestMemoryQuota; it does nothing
// unless started by it.
func TestMemoryChild(t *testing.T) {
	name := os.Getenv(memChildEnv)
	if name == "" {
		return
	}
	// A fuse, so that a broken guard cannot take the shared machine down.
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
			if peakRSS() > 900<<20 {
				fmt.Printf("RESULT fuse %d\n", peakRSS())
				os.Exit(0)
			}
		}
	}()
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\n" + memoryPrompts[name] + "\n```\n"
	p := parse.Parse("p.md", []byte(src))
	start := time.Now()
	_, err := Run(context.Background(), p, Config{})
	re := AsRunError(err)
	kind := "none"
	if re != nil {
		kind = re.Kind.String()
	}
	fmt.Printf("%s after %v: %v\n", name, time.Since(start), err)
	fmt.Printf("RESULT %s %d\n", kind, peakRSS())
}

// peakRSS reads VmHWM (peak resident set) from /proc/self/status.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n << 10
		}
	}
	return -1
}

// TestWhileTrueQuota: `while true do end` fails with Quota well under a
// second (the budget is exact, so this is about the VM's speed, checked
// loosely because the machine is shared).
func TestWhileTrueQuota(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nwhile true do end\n```\n"
	start := time.Now()
	_, err := Run(context.Background(), parse.Parse("p.md", []byte(src)), Config{})
	took := time.Since(start)
	if re := AsRunError(err); re == nil || re.Kind != KindQuota {
		t.Fatalf("got %v", err)
	}
	t.Logf("while true: Quota after %v", took)
}

// TestCancelStopsRun: cancelling the context stops a spinning run with
// kind Cancelled.
func TestCancelStopsRun(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nlocal rs = fanout(\"### W\", {1, 2, 3})\n```\n\n### W\n\n```lua\nwhile true do end\n```\n"
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err := Run(ctx, parse.Parse("p.md", []byte(src)), Config{})
	re := AsRunError(err)
	if re == nil || !re.IsCancelled() || re.Msg != "interrupted by Ctrl-C" {
		t.Fatalf("got %v", err)
	}
}
