package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

const testUsage = `usage: forge-lsp test [flags] [PATH...]

Runs the cases of prompt test files (NAME.test.yaml beside NAME.md; folders
are walked; default "."). Every case replays from its cassette, offline,
unless --record or --repeat runs it live against the gateway
(--gateway-config FILE or PROMPTFORGE_GATEWAY_CONFIG, else
PROMPTFORGE_GATEWAY_URL and PROMPTFORGE_GATEWAY_API_KEY). The last line is
"N passed, N failed" (", N skipped" when any). Exit status: 0 all passed,
1 a case failed, 2 usage or file errors. Format: docs/testing.md.

flags:
`

// Test implements `forge-lsp test`.
func Test(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runTests(ctx, args, os.LookupEnv, stdout, stderr)
}

// runTests is Test with a context and an environment lookup.
func runTests(ctx context.Context, args []string, env gateway.LookupFunc, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("test", flag.ContinueOnError)
	jobs := fl.Int("j", 0, "run `N` cases at once (default: the number of CPUs)")
	runRE := fl.String("run", "", "run only the cases whose name matches `REGEX`")
	record := fl.Bool("record", false, "run live against the gateway and (re)write each selected case's cassette")
	repeat := fl.Int("repeat", 1, "run each case `N` times: replay its N recorded cassettes (CASE.K.jsonl; --record --repeat N records them), else live; report pass rates and the flaky cases")
	passRate := fl.String("pass-rate", "", "with --repeat, a case passes when at least this share `P` of its runs pass (0.8 or 80%; a case's pass_rate wins; default all)")
	resultsFile := fl.String("results", "", "write the machine-readable results (cases, runs, rates, tokens, rounds, durations) to `FILE`")
	baselineFile := fl.String("baseline", "", "compare with the results `FILE` of an earlier run: report regressions, fixes, rate drops and token changes; exit 1 on a regression or a rate drop")
	summaryFile := fl.String("summary", "", "append the run and the baseline comparison as Markdown to `FILE` (a CI job summary such as $GITHUB_STEP_SUMMARY)")
	format := fl.String("format", "text", "output: text, junit, json or github")
	traceDir := fl.String("trace-dir", "", "keep the transcript of every failing case under `DIR`")
	verbose := fl.Bool("v", false, "also list passing and skipped cases")
	timeout := fl.Duration("timeout", session.DefaultCaseTimeout, "fail a case whose run takes longer than this wall-clock time (0: no limit)")
	liveTools := fl.Bool("live-tools", false, "let a replay run workspace commands (forge-tools.json) and web_fetch on this machine when a cassette holds no recorded result (docs/security.md)")
	gwConfig := fl.String("gateway-config", "", "serve the gateway file `FILE` in-process for --record and --repeat (docs/gateway.md; default $"+gateway.EnvConfig+")")
	shard := fl.String("shard", "", "run only part `I/N` of the selected cases (a deterministic split for a CI matrix; --list shows the part)")
	otelOn := fl.Bool("otel", false, "export each case run's spans over OTLP (OTEL_EXPORTER_OTLP_* variables; default endpoint localhost:4318); see docs/observability.md")
	otelContent := fl.Bool("otel-content", false, "with OpenTelemetry export, put prompt and completion text on the spans")
	list := fl.Bool("list", false, "list the selected cases (path:line: name; with --format json an object {cases: [{file, line, name, skip}]}) instead of running them")
	paths, help, ok := parseAnywhere(fl, args, testUsage, stdout, stderr)
	if help {
		return 0
	}
	if !ok {
		return exitUsage
	}
	switch *format {
	case "text", "junit", "json", "github":
	default:
		fmt.Fprintf(stderr, "forge-lsp test: unknown format %q (want text, junit, json or github)\n", *format)
		return exitUsage
	}
	if *timeout < 0 {
		fmt.Fprintln(stderr, "forge-lsp test: --timeout must not be negative")
		return exitUsage
	}
	opts := testrun.Options{Jobs: *jobs, TraceDir: *traceDir, LiveTools: *liveTools, LiveToolsHint: "pass --live-tools to run them on this machine", Timeout: *timeout}
	if *timeout == 0 {
		opts.Timeout = session.NoTimeout // --timeout 0: no limit
	}
	if *runRE != "" {
		re, err := regexp.Compile(*runRE)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: --run: %v\n", err)
			return exitUsage
		}
		opts.Filter = re
	}
	// The JSON report (what the editor reads) carries every case's
	// transcript, so that a passing case shows what the model and tools did.
	opts.Transcripts = *format == "json"
	if *shard != "" {
		sh, err := testrun.ParseShard(*shard)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: %v\n", err)
			return exitUsage
		}
		opts.Shard = sh
	}
	if *repeat < 1 {
		fmt.Fprintf(stderr, "forge-lsp test: --repeat must be at least 1\n")
		return exitUsage
	}
	if *passRate != "" {
		r, err := testrun.ParsePassRate(*passRate)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: --pass-rate: %v\n", err)
			return exitUsage
		}
		opts.PassRate = r
	}
	var baseline *testrun.ResultsFile
	if *baselineFile != "" {
		data, err := os.ReadFile(*baselineFile)
		if err == nil {
			baseline, err = testrun.ReadResults(data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: --baseline %s: %v\n", *baselineFile, err)
			return exitUsage
		}
	}
	opts.Repeat = *repeat
	if *record {
		opts.Mode = testrun.Record
	}
	if *repeat > 1 && !*record {
		// Cases with their N cassettes replay; the others run live when a
		// gateway is configured, and otherwise fail naming
		// --record --repeat N.
		gw := *gwConfig
		if gw == "" {
			gw, _ = env(gateway.EnvConfig)
		}
		if cfg, err := (session.Gateway{File: gw}).Config(env); err == nil {
			opts.LiveFallback, opts.Gateway, opts.GatewayConfig = true, cfg, gw
		}
	}
	if opts.Mode != testrun.Replay {
		opts.GatewayConfig = *gwConfig
		if opts.GatewayConfig == "" {
			opts.GatewayConfig, _ = env(gateway.EnvConfig)
		}
		cfg, err := session.Gateway{File: opts.GatewayConfig}.Config(env)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: --record needs a live gateway: %v\n", err)
			return exitUsage
		}
		opts.Gateway = cfg
	}
	if v, ok := env(tools.WebFetchAllowPrivateEnv); ok && v == "1" {
		opts.AllowPrivate = true
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	files, code := collectTests(paths, stderr)
	var runnable []*testrun.File
	for _, path := range files {
		f, err := testrun.Load(path)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: %v\n", err)
			code = exitUsage
			continue
		}
		testrun.Validate(f, nil)
		bad := false
		for _, d := range f.Diags {
			if d.Severity == testrun.SevError {
				fmt.Fprintln(stderr, d.String(filepath.ToSlash(path)))
				bad = true
			}
		}
		if bad {
			code = exitUsage
			continue
		}
		runnable = append(runnable, f)
	}
	if *list {
		if err := listCases(stdout, runnable, opts.Filter, opts.Shard, *format == "json"); err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: %v\n", err)
			return exitUsage
		}
		return code
	}
	if code != exitOK && len(runnable) == 0 {
		// Nothing could be run: the errors above are the whole answer, not
		// "0 passed, 0 failed".
		return code
	}
	tel, err := telemetry.Setup(ctx, telemetry.Options{Enabled: *otelOn, Content: *otelContent, Env: env})
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp test: --otel: %v\n", err)
		return exitUsage
	}
	defer tel.Shutdown()
	opts.Telemetry = tel
	results := testrun.Run(ctx, runnable, opts)
	sum := testrun.Summarize(results)
	closing := stdout
	switch *format {
	case "junit":
		if err := testrun.WriteJUnit(stdout, results); err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: %v\n", err)
			return exitUsage
		}
		closing = stderr
	case "json":
		if err := testrun.WriteJSON(stdout, results); err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: %v\n", err)
			return exitUsage
		}
		closing = stderr
	case "github":
		testrun.WriteGitHub(stdout, results)
		testrun.WriteText(stderr, results, *verbose)
	default:
		testrun.WriteText(stdout, results, *verbose)
	}
	if opts.Repeat > 1 {
		testrun.WriteRepeat(closing, results, opts.Repeat)
	}
	var cmp *testrun.Comparison
	if baseline != nil {
		now := testrun.ToResults(results, opts.Repeat)
		cmp = testrun.Compare(baseline, &now)
		cmp.Baseline = filepath.ToSlash(*baselineFile)
		testrun.WriteComparison(closing, cmp)
	}
	if *resultsFile != "" {
		if err := writeFileWith(*resultsFile, false, func(w io.Writer) error { return testrun.WriteResults(w, results, opts.Repeat) }); err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: --results: %v\n", err)
			code = exitUsage
		}
	}
	if *summaryFile != "" {
		if err := writeFileWith(*summaryFile, true, func(w io.Writer) error { return testrun.WriteSummary(w, results, cmp) }); err != nil {
			fmt.Fprintf(stderr, "forge-lsp test: --summary: %v\n", err)
			code = exitUsage
		}
	}
	fmt.Fprintln(closing, sum.String())
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "forge-lsp test: interrupted")
		return exitInterrupt
	}
	if code != 0 {
		return code
	}
	if sum.Failed > 0 || cmp != nil && cmp.Worse() {
		return exitRunError
	}
	return exitOK
}

// writeFileWith writes (or, with appendTo, appends to) the file the user
// named.
func writeFileWith(path string, appendTo bool, fn func(io.Writer) error) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// collectTests expands paths into test files: folders are walked for
// *.test.yaml (hidden folders and node_modules skipped); a file named
// explicitly must be a test file; a path holding none is an error.
func collectTests(paths []string, stderr io.Writer) ([]string, int) {
	files, ok := testrun.Collect(paths, stderr)
	if !ok {
		return files, exitUsage
	}
	return files, exitOK
}

// listCases prints the selected cases without running them.
func listCases(w io.Writer, files []*testrun.File, filter *regexp.Regexp, shard testrun.Shard, asJSON bool) error {
	type listed struct {
		File string `json:"file"`
		Line int    `json:"line"`
		Name string `json:"name"`
		Skip string `json:"skip,omitempty"`
	}
	out := struct {
		Cases []listed `json:"cases"`
	}{Cases: []listed{}}
	for _, sel := range testrun.Select(files, filter, shard) {
		f, c := sel.File, sel.Case
		out.Cases = append(out.Cases, listed{File: filepath.ToSlash(f.Path), Line: c.Pos.Line, Name: c.Name, Skip: c.Skip})
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, c := range out.Cases {
		if _, err := fmt.Fprintf(w, "%s:%d: %s\n", c.File, c.Line, c.Name); err != nil {
			return err
		}
	}
	return nil
}
