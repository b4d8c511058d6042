package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// initLine is one line of GODEBUG=inittrace=1 output: "init PKG @T ms,
// C ms clock, N bytes, M allocs".
var initLine = regexp.MustCompile(`^init (\S+) @.*, (\d+) bytes, (\d+) allocs$`)

// lazyInit lists packages whose package-level values are built on first
// use: engine/render's slot regexp (1.7 KB at init before) is compiled by
// the commands that count a rendered prompt's tokens, not by check.
var lazyInit = map[string]bool{
	"github.com/forge-lsp/forge-lsp/engine/render": true,
}

// TestPackageInitIsLazy: forge-lsp's packages build their tables, regular
// expressions and parsers on first use, not at process start, so every
// command (version, check, serve) starts without paying for the others'
// set-up. `GODEBUG=inittrace=1 forge-lsp version` lists each package's
// init with its allocations: a forge-lsp package may allocate at most
// 4 KiB there (one package-level regexp.MustCompile alone takes 2-30 KiB),
// and all packages together, libraries included, at most 1 MiB (a
// dependency that compiles meta-schemas at init took 1.7 MiB; today's
// are about 770 KB, nearly all of it third-party: goldmark's tables, the
// protobuf registries of OpenTelemetry and gRPC, encoding/gob). Packages
// listed in lazyInit allocate at most 512 bytes: they once built a value
// at init that they now build on first use, and the budget stops it
// coming back.
func TestPackageInitIsLazy(t *testing.T) {
	const perPackage, total, lazy = 4 << 10, 896 << 10, 512
	cmd := exec.Command(binary, "version")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("forge-lsp version: %v\n%s", err, out)
	}
	var sum, seen int
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		seen++
		bytes, _ := strconv.Atoi(m[2])
		sum += bytes
		// Package main is this test binary's, test files included.
		own := strings.HasPrefix(m[1], "github.com/forge-lsp/forge-lsp/") && m[1] != "github.com/forge-lsp/forge-lsp/cmd/forge-lsp"
		if own && bytes > perPackage {
			t.Errorf("package %s allocates %d bytes (%s allocs) at init, over %d: build its package-level values on first use (sync.OnceValue)", m[1], bytes, m[3], perPackage)
		}
		if lazyInit[m[1]] && bytes > lazy {
			t.Errorf("package %s allocates %d bytes (%s allocs) at init, over %d: it builds its tables on first use, keep them there (sync.OnceValue)", m[1], bytes, m[3], lazy)
		}
	}
	if seen < 20 {
		t.Fatalf("only %d init lines in the trace; output:\n%s", seen, out)
	}
	if sum > total {
		t.Errorf("package inits allocate %d bytes in all, over %d: `GODEBUG=inittrace=1 forge-lsp version` shows which package", sum, total)
	}
}

// TestCheckOfOnePromptDoesNotCollect: `forge-lsp check` of one
// 10,000-line prompt finishes before its heap reaches the floor under
// the collector's goal (cli.paceGC), so the garbage collector never runs:
// at the default pace it ran 7 times and cost 40% of the process's
// instructions. `GODEBUG=gctrace=1` prints a line per collection.
func TestCheckOfOnePromptDoesNotCollect(t *testing.T) {
	prompt, _ := generatedPrompt(10000)
	p := write(t, t.TempDir(), "gen.md", prompt)
	cmd := exec.Command(binary, "check", p)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GODEBUG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, mainEnv+"=1", "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("check: %v\n%s", err, stderr.String())
	}
	var gcs []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "gc ") {
			gcs = append(gcs, line)
		}
	}
	if !strings.Contains(stderr.String(), "1 file checked") {
		t.Fatalf("check did not finish:\n%s", stderr.String())
	}
	if len(gcs) > 0 {
		t.Errorf("check of one 10,000-line prompt collected %d times:\n%s", len(gcs), strings.Join(gcs, "\n"))
	}
}
