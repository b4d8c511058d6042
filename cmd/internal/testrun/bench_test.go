package testrun

import (
	"context"
	"fmt"
	"github.com/forge-lsp/forge-lsp/cmd/internal/proctime"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
)

const benchPrompt = "---\nname: b\ndescription: d\npromptforge: 1\n---\n\n# B\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\n```\n\n## Ask\n\n```lua\nvar.n = #args\n```\n\nAnswer {{ args }} in one word.\n\n```lua\nstore.write(\"out.md\", reply)\n```\n"

// benchSuite records one cassette against the test gateway and writes a
// test file with n cases replaying it.
func benchSuite(b *testing.B, n int) (*File, string) {
	dir := b.TempDir()
	promptPath := filepath.Join(dir, "b.md")
	os.WriteFile(promptPath, []byte(benchPrompt), 0o644)
	srv := gatewaytest.New(b, "bench-key")
	srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("Yes") }
	cas := filepath.Join(dir, "c.jsonl")
	cl, err := gateway.NewRecording(srv.Config(), cas)
	if err != nil {
		b.Fatal(err)
	}
	p := parse.Parse(promptPath, []byte(benchPrompt))
	sec, _ := parse.FindSection(p, "## Ask")
	if _, err := run.RunSection(context.Background(), p, sec, run.Config{Input: "why", Models: run.ModelConfig{Client: cl}}); err != nil {
		cl.Close()
		data, _ := os.ReadFile(cas)
		b.Fatal(err, string(data))
	}
	if err := cl.Close(); err != nil {
		b.Fatal(err)
	}
	var y strings.Builder
	y.WriteString("cases:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - name: case %d\n    input: why\n    section: \"## Ask\"\n    cassette: c.jsonl\n    expect:\n      output: {equals: \"Yes\"}\n      store: {out.md: {contains: \"Yes\"}}\n", i)
	}
	f := Parse(filepath.Join(dir, "b.test.yaml"), []byte(y.String()))
	Validate(f, nil)
	if f.HasErrors() {
		b.Fatal(f.Diags)
	}
	return f, cas
}

// direct runs the same cases without the runner, through the run set-up
// every host uses: open a session on the cassette, run, close.
func direct(b *testing.B, f *File, cas string, n int, judged bool) {
	content, _ := os.ReadFile(f.Prompt)
	for range n {
		s, err := session.Open(session.Options{Path: f.Prompt, Source: content, Section: "## Ask", Input: "why",
			Gateway: session.Gateway{Replay: cas}, Env: func(string) (string, bool) { return "", false }})
		if err != nil {
			b.Fatal(err)
		}
		out, err := s.Run(context.Background())
		if err != nil || out != "Yes" {
			b.Fatalf("%q %v", out, err)
		}
		if judged {
			j := &Judge{Rubric: "Answers in one word.", Model: "test-model"}
			if v, err := judgeRun(context.Background(), s.Client(), j, DefaultJudgePrompt, "why", out); err != nil || v.Verdict != "pass" {
				b.Fatalf("judge: %+v %v", v, err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplay200 compares 200 replayed cases through the runner with
// the same 200 runs done directly, one at a time each, and reports the
// ratio (runner time / direct time).
func BenchmarkReplay200(b *testing.B) {
	const n = 200
	f, cas := benchSuite(b, n)
	compareReplay(b, f, n, func() { direct(b, f, cas, n, false) })
}

// BenchmarkReplayJudge200 is BenchmarkReplay200 with a judge and
// trajectory expectations on every case: the cassette holds the judge's
// catalog fetch and verdict, and the direct runs make the same requests
// through the session's client.
func BenchmarkReplayJudge200(b *testing.B) {
	const n = 200
	f, cas := benchSuite(b, 1)
	// Record one case with a judge, then point n cases at its cassette.
	judgedCase := func(i int) string {
		return fmt.Sprintf("  - name: case %d\n    input: why\n    section: \"## Ask\"\n    cassette: c.jsonl\n    expect:\n      output: {equals: \"Yes\"}\n      store: {out.md: {contains: \"Yes\"}}\n      rounds: {max: 1}\n      models: [test-model]\n      judge: {rubric: \"Answers in one word.\", model: test-model}\n", i)
	}
	judged := "cases:\n" + judgedCase(0)
	srv := gatewaytest.New(b, "bench-key")
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		if strings.Contains(gatewaytest.LastUserContent(req), "<output>") {
			return gatewaytest.Text(`{"reason": "One word.", "verdict": "pass"}`)
		}
		return gatewaytest.Text("Yes")
	}
	rec := Parse(f.Path, []byte(judged))
	if rs := Run(context.Background(), []*File{rec}, Options{Mode: Record, Gateway: srv.Config(), Jobs: 1}); rs[0].Status != Pass {
		b.Fatal(rs[0].Message())
	}
	var y strings.Builder
	y.WriteString("cases:\n")
	for i := range n {
		y.WriteString(judgedCase(i))
	}
	f = Parse(f.Path, []byte(y.String()))
	Validate(f, nil)
	if f.HasErrors() {
		b.Fatal(f.Diags)
	}
	compareReplay(b, f, n, func() { direct(b, f, cas, n, true) })
}

// compareReplay measures the runner on f's n cases against direct and
// reports the ratios.
func compareReplay(b *testing.B, f *File, n int, direct func()) {
	var tRunner, tDirect time.Duration
	runner := func() {
		rs := Run(context.Background(), []*File{f}, Options{Jobs: 1})
		if s := Summarize(rs); s.Passed != n {
			b.Fatalf("%s: %s", s, rs[0].Message())
		}
	}
	// Wall time is what the target is about; CPU time of the process
	// (user+system, GC included) is reported too because it is far less
	// disturbed by other load on a shared machine.
	var cRunner, cDirect time.Duration
	measure := func(f func()) (time.Duration, time.Duration) {
		c0, t0 := proctime.CPU(), time.Now()
		f()
		return time.Since(t0), proctime.CPU() - c0
	}
	i := 0
	for b.Loop() {
		// Alternate which goes first, so warm-up and GC debt fall on both.
		if i%2 == 0 {
			w, c := measure(direct)
			tDirect, cDirect = tDirect+w, cDirect+c
			w, c = measure(runner)
			tRunner, cRunner = tRunner+w, cRunner+c
		} else {
			w, c := measure(runner)
			tRunner, cRunner = tRunner+w, cRunner+c
			w, c = measure(direct)
			tDirect, cDirect = tDirect+w, cDirect+c
		}
		i++
	}
	b.ReportMetric(float64(cRunner)/float64(cDirect), "cpu-runner/direct")
	b.ReportMetric(float64(tRunner)/float64(tDirect), "runner/direct")
	b.ReportMetric(float64(tRunner.Microseconds())/float64(b.N*n), "µs/case")
}
