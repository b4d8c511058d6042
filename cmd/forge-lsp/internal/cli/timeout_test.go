package cli

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/session"
)

// `run` and `test` have a wall-clock limit by default (before: none, so
// a run stuck on something no budget counts never ended).
func TestDefaultWallClockLimits(t *testing.T) {
	f, _, _, ok := parseRunArgs([]string{"p.md"}, io.Discard, io.Discard)
	if !ok || f.timeout != session.DefaultTimeout || session.DefaultTimeout != 10*time.Minute {
		t.Errorf("run --timeout default %v", f.timeout)
	}
	if session.DefaultCaseTimeout != 5*time.Minute {
		t.Errorf("test --timeout default %v", session.DefaultCaseTimeout)
	}
	// test --timeout bounds each case.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.md"), "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n## Spin\n\n```lua\nlocal i = 0 while i < 2e6 do i = i + 1 end jump(\"## U\")\n```\n\n## U\n\n```lua\nlocal i = 0 while i < 2e6 do i = i + 1 end jump(\"## Spin\")\n```\n")
	writeFile(t, filepath.Join(dir, "p.test.yaml"), "cases:\n  - name: spins\n    section: \"## Spin\"\n    expect: {output: {contains: x}}\n")
	start := time.Now()
	out, errs, code := runTestCmd(t, "--timeout", "300ms", dir)
	if code != 1 || !strings.Contains(out, "wall-clock time quota exceeded (limit 300ms)") || time.Since(start) > time.Minute {
		t.Errorf("exit %d after %v:\n%s%s", code, time.Since(start), out, errs)
	}
}
