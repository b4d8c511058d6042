package main

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunRunaways drives `forge-lsp run` (default budgets) with runaways
// that used to run for minutes or reach gigabytes: each must fail with a
// Quota error, exit status 1, and stay under 512 MiB of resident memory.
func TestRunRunaways(t *testing.T) {
	cases := map[string]struct {
		body string
		args []string
		want string
	}{
		"backtracking find": {body: `return string.rep("a", 5000):find(".-.-.-.-.-.-b")`, want: "lua instruction quota exceeded (limit 10000000)"},
		"format 64x16 MB":   {body: `local s = string.rep("x", 16 * 1024 * 1024) return string.format(string.rep("%s", 64), ` + strings.Repeat("s, ", 63) + `s)`, want: "string.format would create"},
		"concat 32x16 MB":   {body: `local s = string.rep("x", 16 * 1024 * 1024) return ` + strings.Repeat("s..", 31) + `s`, want: "'..' would create 536870912 bytes"},
		"quadratic concat":  {body: `local s = "" while true do s = s .. "abcdefghij" end`, want: "lua instruction quota exceeded"},
		"deadline":          {body: "local i = 0 while i < 2e6 do i = i + 1 end jump(\"## U\")\n```\n\n## U\n\n```lua\nlocal i = 0 while i < 2e6 do i = i + 1 end jump(\"## S\")", args: []string{"--timeout", "200ms"}, want: "lua wall-clock time quota exceeded (limit 200ms)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := write(t, t.TempDir(), "p.md", "---\nname: t\ndescription: d\npromptforge: 1\n---\n# T\n\n## S\n\n```lua\n"+c.body+"\n```\n")
			cmd := exec.Command(binary, append(append([]string{"run"}, c.args...), p)...)
			var e bytes.Buffer
			cmd.Stderr = &e
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit %v, want status 1\n%s", err, e.String())
			}
			if !strings.Contains(e.String(), c.want) || !strings.Contains(e.String(), "(Quota error)") {
				t.Errorf("stderr %q, want %q (Quota error)", e.String(), c.want)
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			t.Logf("%s: %v of CPU, peak RSS %d MiB", name, cpu, ru.Maxrss>>10)
			if ru.Maxrss<<10 >= 512<<20 {
				t.Errorf("peak RSS %d MiB, want < 512", ru.Maxrss>>10)
			}
			// A fuse, not a timing: unbudgeted, these ran for minutes.
			if cpu > 30*time.Second {
				t.Errorf("%v of CPU: the budget did not stop the run", cpu)
			}
		})
	}
}
