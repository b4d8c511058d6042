package run

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// memoryPrompts are runaway allocations that must end with Quota, and
// soon: the process may grow by a small multiple of the quota at most.
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

const (
	// memChildEnv names the prompt a child process runs.
	memChildEnv = "FORGE_RUN_MEMORY_CHILD"
	// memQuotaEnv passes the child its heap quota in bytes; the store
	// quota is half of it. Unset means the default limits.
	memQuotaEnv = "FORGE_RUN_MEMORY_QUOTA"
	// testHeapQuota is the heap quota of the memory tests. The guard
	// works the same at any size; a small one keeps the runaway loops
	// short.
	testHeapQuota = 8 << 20
	// maxOvershoot bounds the process's growth in quotas: the last
	// allocation before the guard trips may double a string.
	maxOvershoot = 4
)

// TestMemoryQuota runs each prompt in a fresh process (so that the peak
// resident set is the prompt's) and checks that it ends with Quota having
// grown the process by at most maxOvershoot quotas. With the default
// limits, the worst case (a doubling string) stays under 512 MiB.
func TestMemoryQuota(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		return
	}
	if raceEnabled {
		t.Skip("peak RSS is not meaningful under the race detector (shadow memory); run without -race")
	}
	for name := range memoryPrompts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kind, start, peak := memoryChild(t, name, testHeapQuota)
			if kind != "Quota" {
				t.Errorf("kind %q, want Quota", kind)
			}
			if grown := peak - start; grown <= 0 || grown > maxOvershoot*testHeapQuota {
				t.Errorf("the process grew by %d MiB with a %d MiB quota, want at most %d MiB", grown>>20, testHeapQuota>>20, maxOvershoot*testHeapQuota>>20)
			}
		})
	}
	t.Run("defaults/doubling", func(t *testing.T) {
		t.Parallel()
		kind, _, peak := memoryChild(t, "doubling", 0)
		if kind != "Quota" || peak <= 0 || peak >= 512<<20 {
			t.Errorf("kind %q, peak RSS %d MiB; want Quota under 512 MiB", kind, peak>>20)
		}
	})
}

// memoryChild runs prompt name in a child process with the given heap
// quota (0: the defaults) and returns the run's error kind and the
// child's resident set before the run and at its peak.
func memoryChild(t *testing.T, name string, quota int64) (kind string, start, peak int64) {
	t.Helper()
	env := []string{memChildEnv + "=" + name}
	if quota > 0 {
		env = append(env, memQuotaEnv+"="+strconv.FormatInt(quota, 10))
	}
	f, _ := runChild(t, "TestMemoryChild", env, 3)
	kind = f[0]
	start, _ = strconv.ParseInt(f[1], 10, 64)
	peak, _ = strconv.ParseInt(f[2], 10, 64)
	t.Logf("%s: kind %s, resident %d MiB before the run, peak %d MiB", name, kind, start>>20, peak>>20)
	return kind, start, peak
}

// TestMemoryChild is the child half of TestMemoryQuota; it does nothing
// unless started by it.
func TestMemoryChild(t *testing.T) {
	name := os.Getenv(memChildEnv)
	if name == "" {
		return
	}
	memoryFuse(func(peak int64) string { return fmt.Sprintf("RESULT fuse 0 %d", peak) })
	var lim Limits
	if q := os.Getenv(memQuotaEnv); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		lim.HeapBytes, lim.StoreTotalBytes = n, n/2
	}
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\n" + memoryPrompts[name] + "\n```\n"
	p := parse.Parse("p.md", []byte(src))
	start := rss("VmRSS")
	_, err := Run(context.Background(), p, Config{Limits: lim})
	re := AsRunError(err)
	kind := "none"
	if re != nil {
		kind = re.Kind.String()
	}
	fmt.Printf("%s: %v\n", name, err)
	fmt.Printf("RESULT %s %d %d\n", kind, start, rss("VmHWM"))
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
