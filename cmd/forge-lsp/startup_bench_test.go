package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/api"
)

// timeExec runs the command and returns its wall time; a failure to
// start or a non-zero exit other than allowed fails the benchmark.
func timeExec(b *testing.B, allowed int, name string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(name, args...)
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() <= allowed {
		return d
	}
	if err != nil {
		b.Fatalf("%s %v: %v", name, args, err)
	}
	return d
}

// releaseBuild builds the package pkg (a directory) into out the way a
// release is built (.ci/dist.env: CGO_ENABLED, BUILD_FLAGS and LDFLAGS,
// with placeholder version stamps), so that the benchmarks time what
// users run and every baseline is built alike.
func releaseBuild(b *testing.B, pkg, out string) {
	b.Helper()
	env := readEnvFile(b, repoFile(b, ".ci/dist.env"))
	ldflags := strings.NewReplacer("{version}", "0.0.0-bench", "{commit}", "bench", "{date}", "2026-01-01T00:00:00Z").Replace(env["LDFLAGS"])
	args := append([]string{"build"}, strings.Fields(env["BUILD_FLAGS"])...)
	args = append(args, "-ldflags", ldflags, "-o", out, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+env["CGO_ENABLED"])
	if outp, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", pkg, err, outp)
	}
}

// productBinary builds forge-lsp itself (not this test binary, which
// carries the testing package's start-up too) into dir, as a release.
func productBinary(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "forge-lsp")
	releaseBuild(b, ".", bin)
	return bin
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkStartup execs `forge-lsp version` and `forge-lsp check` of a
// small prompt, interleaved with three baselines built the same way (see
// releaseBuild), and reports each one's median wall time and the ratios:
//
//   - hello: a Go hello-world. The start-up budget is 2x its time.
//   - required: a hello-world linking only the libraries forge-lsp is
//     required to use (testdata/requiredhello: the LSP protocol and
//     JSON-RPC libraries, gopher-lua, goldmark, YAML, and net/http for the
//     gateway). Their package initialisation runs in any program that
//     links them, so required/hello is the floor of the start-up ratio.
//   - linked: a hello-world linking every third-party library forge-lsp
//     links (testdata/depshello: the above plus the DAP library, the JSON
//     Schema validator, the BPE encodings, the edit-distance library and the
//     faster JSON decoder).
//
// version/linked and check/linked are then what forge-lsp's own code
// adds to its libraries' start-up.
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	hello := filepath.Join(dir, "hello")
	releaseBuild(b, dir, hello)
	binary := productBinary(b, dir)
	required := filepath.Join(dir, "requiredhello")
	releaseBuild(b, "./testdata/requiredhello", required)
	linked := filepath.Join(dir, "depshello")
	releaseBuild(b, "./testdata/depshello", linked)
	small := filepath.Join(dir, "small.md")
	if err := os.WriteFile(small, []byte("---\nname: small\ndescription: a small prompt\npromptforge: 1\n---\n\n# Small\n\n```lua\nreturn args\n```\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	const runs = 41
	for i := 0; i < b.N; i++ {
		var h, r, l, v, c []time.Duration
		for k := 0; k < runs; k++ {
			h = append(h, timeExec(b, 0, hello))
			r = append(r, timeExec(b, 0, required))
			l = append(l, timeExec(b, 0, linked))
			v = append(v, timeExec(b, 0, binary, "version"))
			c = append(c, timeExec(b, 0, binary, "check", small))
		}
		mh, mr, ml, mv, mc := median(h), median(r), median(l), median(v), median(c)
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		b.ReportMetric(ms(mh), "hello-ms")
		b.ReportMetric(ms(mr), "required-ms")
		b.ReportMetric(ms(ml), "linked-ms")
		b.ReportMetric(ms(mv), "version-ms")
		b.ReportMetric(ms(mc), "check-small-ms")
		b.ReportMetric(float64(mv)/float64(mh), "version/hello")
		b.ReportMetric(float64(mc)/float64(mh), "check/hello")
		b.ReportMetric(float64(mr)/float64(mh), "required/hello")
		b.ReportMetric(float64(ml)/float64(mh), "linked/hello")
		b.ReportMetric(float64(mv)/float64(ml), "version/linked")
		b.ReportMetric(float64(mc)/float64(ml), "check/linked")
	}
}

// generatedPrompt is a realistic prompt of about n lines (sections with
// local tools, loops, store calls, placeholders and prose) and its Lua
// alone, for comparing `forge-lsp check` with luacheck on the same code.
func generatedPrompt(n int) (prompt, lua string) {
	var out, code []string
	out = append(out, "---", "name: generated", "description: generated benchmark prompt", "promptforge: 1", "---", "",
		"# Generated", "", "```lua", `models.default("writer", "a careful analysis model")`,
		`tools.bind("search", "web search capability", "Search the web for current information")`, "```", "")
	for i := 1; len(out) < n; i++ {
		body := []string{
			fmt.Sprintf(`tools.add_local("note%d", "Record note number %d in the store", {`, i, i),
			`    path = {"string", "Store path"},`,
			`    text = {"string", "Text to append"},`,
			"}, function(args)",
			`    store.append(args.path, args.text .. "\n")`,
			fmt.Sprintf(`    return "noted %d"`, i),
			"end)",
			"local total = 0",
			"for k = 1, 10 do",
			fmt.Sprintf("    total = total + k * %d", i),
			"end",
			fmt.Sprintf("var.total%d = total", i),
		}
		epi := []string{
			`if reply and reply:find("STOP") then`,
			fmt.Sprintf(`    return "stopped at %d"`, i),
			"end",
			fmt.Sprintf(`store.write("out/%d.txt", reply or "")`, i),
		}
		out = append(out, fmt.Sprintf("## Step %d", i), "", "```lua")
		out = append(out, body...)
		out = append(out, "```", "", fmt.Sprintf("Summarise step %d for {{ args }} using the running total {{ var.total%d }}.", i, i),
			"Keep it short and factual, and call the note tool once.", "", "```lua")
		out = append(out, epi...)
		out = append(out, "```", "")
		code = append(code, body...)
		code = append(code, epi...)
	}
	return strings.Join(out, "\n") + "\n", strings.Join(code, "\n") + "\n"
}

// BenchmarkCheckVsLuacheck execs `forge-lsp check` on a generated
// 10,000-line prompt and luacheck on the same prompt's Lua, interleaved,
// and reports the ratio of their median CPU times, user plus system, as a
// user sees them (budget 0.05). luacheck runs as a user checking the code
// would run it: no configuration file (--no-config), no cache, and every
// global the engine defines passed with --globals, so that it reports
// what is wrong rather than every host call. Wall times are reported too.
// luacheck comes from the system (Debian: lua-check).
func BenchmarkCheckVsLuacheck(b *testing.B) {
	luacheck, err := exec.LookPath("luacheck")
	if err != nil {
		b.Skip("luacheck is not installed (Debian package lua-check)")
	}
	dir := b.TempDir()
	binary := productBinary(b, dir)
	prompt, lua := generatedPrompt(10000)
	pf, lf := filepath.Join(dir, "gen.md"), filepath.Join(dir, "gen.lua")
	if err := os.WriteFile(pf, []byte(prompt), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(lf, []byte(lua), 0o644); err != nil {
		b.Fatal(err)
	}
	largs := append([]string{"--no-config", "--no-cache", "--no-color", "--globals"}, api.Globals(api.Anywhere)...)
	largs = append(largs, "--", lf)
	const runs = 5
	for i := 0; i < b.N; i++ {
		var lc, cc, lw, cw []time.Duration
		for k := 0; k < runs; k++ {
			// luacheck exits 1 on warnings.
			cpu, wall := cpuExec(b, 1, luacheck, largs...)
			lc, lw = append(lc, cpu), append(lw, wall)
			cpu, wall = cpuExec(b, 1, binary, "check", pf)
			cc, cw = append(cc, cpu), append(cw, wall)
		}
		ml, mc := median(lc), median(cc)
		b.ReportMetric(float64(ml)/1e6, "luacheck-cpu-ms")
		b.ReportMetric(float64(mc)/1e6, "check-cpu-ms")
		b.ReportMetric(float64(median(lw))/1e6, "luacheck-ms")
		b.ReportMetric(float64(median(cw))/1e6, "check-ms")
		b.ReportMetric(float64(mc)/float64(ml), "check/luacheck")
	}
}

// cpuExec runs the command and returns the CPU time it used (user plus
// system, its children included) and its wall time; a failure to start
// or a non-zero exit other than allowed fails the benchmark.
func cpuExec(b *testing.B, allowed int, name string, args ...string) (cpu, wall time.Duration) {
	b.Helper()
	cmd := exec.Command(name, args...)
	t0 := time.Now()
	err := cmd.Run()
	wall = time.Since(t0)
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() <= allowed) {
		b.Fatalf("%s %v: %v", name, args, err)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall
}
