package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/tools"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// commandRunTest runs the cases of a test file (NAME.test.yaml): one case
// by name, or all of them; {record: true} runs live and rewrites the
// cassettes.
const commandRunTest = "forge.runTest"

// testArgs is the argument object of forge.runTest.
type testArgs struct {
	URI protocol.DocumentURI `json:"uri"`
	// Name is the case to run; empty runs every case of the file.
	Name   string `json:"name,omitempty"`
	Record bool   `json:"record,omitempty"`
}

// testRunResult is what forge.runTest returns.
type testRunResult struct {
	Results []testrun.JSONResult `json:"results"`
	Passed  int                  `json:"passed"`
	Failed  int                  `json:"failed"`
	Skipped int                  `json:"skipped"`
	// Summary is the closing line "N passed, N failed[, N skipped]".
	Summary string `json:"summary"`
}

// testResults keeps the last result of every case run in this session,
// per test file, for diagnostics and hover.
type testResults struct {
	mu   sync.Mutex
	last map[string]map[string]*testrun.Result
}

func newTestResults() *testResults {
	return &testResults{last: map[string]map[string]*testrun.Result{}}
}

func (s *server) testResults() *testResults { return s.tests }

func (t *testResults) get(key, name string) *testrun.Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last[key][name]
}

func (t *testResults) put(key string, rs []*testrun.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.last[key]
	if m == nil {
		m = map[string]*testrun.Result{}
		t.last[key] = m
	}
	for _, r := range rs {
		m[r.Case.Name] = r
	}
}

func isTestDoc(u protocol.DocumentURI) bool { return testrun.IsTestFile(fileName(u)) }

// readPreferOpen reads a file, preferring the text of an open document so
// that runs and checks see unsaved edits. It takes s.mu itself.
func (s *server) readPreferOpen(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err == nil {
		s.mu.Lock()
		d := s.docs[uriKey(protocol.DocumentURI("file://"+filepath.ToSlash(abs)))]
		var text []byte
		if d != nil {
			text = d.text
		}
		s.mu.Unlock()
		if d != nil {
			return text, nil
		}
	}
	return fsread.ReadFile(path, fsread.TestFile)
}

// scheduleTestDiagnostics validates a test file after delay and publishes
// its problems plus the failures of the last run. Called with s.mu held.
func (s *server) scheduleTestDiagnostics(d *document, delay time.Duration) {
	uri, version, text := d.uri, d.version, d.text
	s.startDiagnostics(d, delay, false, "test diagnostics", func(context.Context, time.Time) func() {
		diags := s.testDiagnostics(uri, text)
		return func() {
			d.published = len(diags) > 0
			s.publish(uri, version, diags)
		}
	})
}

// testDiagnostics are the validation problems of a test file and one
// error per case whose last run failed. It runs outside s.mu.
func (s *server) testDiagnostics(uri protocol.DocumentURI, text []byte) []protocol.Diagnostic {
	path := fileName(uri)
	out := []protocol.Diagnostic{}
	if !testrun.Claims(path, text) {
		return out // another tool's .test.yaml
	}
	f := testrun.Parse(path, text)
	testrun.Validate(f, s.readPreferOpen)
	src := source.NewFile(path, text)
	src.UseLSPEncoding(s.client.encoding, true)
	for _, d := range f.Diags {
		sev := protocol.DiagnosticSeverityError
		if d.Severity == testrun.SevWarning {
			sev = protocol.DiagnosticSeverityWarning
		}
		out = append(out, protocol.Diagnostic{Range: testRange(src, testrun.Pos{Line: d.Line, Col: d.Col, EndCol: d.EndCol}),
			Severity: sev, Source: "forge", Code: d.Code, Message: d.Message})
	}
	tr := s.testResults()
	for _, c := range f.Cases {
		r := tr.get(uriKey(uri), c.Name)
		if r == nil || r.Status != testrun.Fail {
			continue
		}
		code := "test-failed"
		if r.Stale {
			code = "test-stale"
		}
		out = append(out, protocol.Diagnostic{Range: testRange(src, c.Pos), Severity: protocol.DiagnosticSeverityError,
			Source: "forge test", Code: code, Message: r.Message()})
	}
	return out
}

func testRange(f *source.File, p testrun.Pos) protocol.Range {
	start := f.Offset(p.Line, p.Col)
	end := f.Offset(p.Line, max(p.EndCol, p.Col))
	return lspRange(f, source.Span{Start: start, End: end})
}

// pinnedText is the text of the open document u as the request found
// it (its pinned snapshot), or nil when it is not open.
func pinnedText(ctx context.Context, u protocol.DocumentURI) *source.File {
	if pin := pinOf(ctx); pin != nil && pin.key == uriKey(u) && pin.snap != nil {
		return pin.snap.file
	}
	return nil
}

// testLenses are "▶ Run all" at the top and "▶ Run test" / "▶ Record"
// above each case, from the pinned text (without s.mu).
func (s *server) testLenses(ctx context.Context, u protocol.DocumentURI) []protocol.CodeLens {
	out := []protocol.CodeLens{}
	src := pinnedText(ctx, u)
	if src == nil {
		return out
	}
	path := fileName(u)
	if !testrun.Claims(path, src.Content) {
		return out
	}
	f := testrun.Parse(path, src.Content)
	if len(f.Cases) == 0 {
		return out
	}
	out = append(out, protocol.CodeLens{Range: testRange(src, f.Top),
		Command: &protocol.Command{Title: "▶ Run all", Command: commandRunTest, Arguments: []any{testArgs{URI: u}}}})
	for _, c := range f.Cases {
		r := testRange(src, c.Pos)
		out = append(out,
			protocol.CodeLens{Range: r, Command: &protocol.Command{Title: "▶ Run test", Command: commandRunTest, Arguments: []any{testArgs{URI: u, Name: c.Name}}}},
			protocol.CodeLens{Range: r, Command: &protocol.Command{Title: "▶ Record", Command: commandRunTest, Arguments: []any{testArgs{URI: u, Name: c.Name, Record: true}}}})
	}
	return out
}

// testHover shows the last result of the case under the cursor, from
// the pinned text (without s.mu).
func (s *server) testHover(ctx context.Context, p *protocol.HoverParams) *protocol.Hover {
	src := pinnedText(ctx, p.TextDocument.URI)
	if src == nil {
		return nil
	}
	path := fileName(p.TextDocument.URI)
	f := testrun.Parse(path, src.Content)
	line := int(p.Position.Line) + 1
	var c *testrun.Case
	for i, cc := range f.Cases {
		end := 1 << 30
		if i+1 < len(f.Cases) {
			end = f.Cases[i+1].Start - 1
		}
		if line >= cc.Start && line <= end {
			c = cc
		}
	}
	if c == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**: ", c.Name)
	r := s.testResults().get(uriKey(p.TextDocument.URI), c.Name)
	switch {
	case r == nil:
		b.WriteString("not run in this session; use ▶ Run test.")
	case r.Status == testrun.Pass:
		fmt.Fprintf(&b, "passed (%d of %d runs, %s).", r.Passes, r.Runs, r.Duration.Round(time.Millisecond))
	case r.Status == testrun.Skip:
		fmt.Fprintf(&b, "skipped: %s", r.Case.Skip)
	default:
		label := "failed"
		if r.Stale {
			label = "stale"
		}
		fmt.Fprintf(&b, "%s (%d of %d runs passed).\n\n", label, r.Passes, r.Runs)
		for _, m := range r.Mismatches {
			fmt.Fprintf(&b, "- %s\n", m.Msg)
		}
		if r.Diff != "" {
			fmt.Fprintf(&b, "\n```diff\n%s```\n", r.Diff)
		}
	}
	rg := testRange(src, c.Pos)
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.Markdown, Value: b.String()}, Range: &rg}
}

// gatewayConfig is the live gateway of the configuration (for --record).
func (s *server) gatewayConfig(cfg config) (gateway.Config, error) {
	if cfg.GatewayURL == "" && cfg.GatewayConfig == "" {
		return gateway.Config{}, errors.New("recording needs a gateway: set promptforge.gateway.config (a gateway file, docs/gateway.md) or promptforge.gateway.url (or " + envGatewayURL + ") and the key variable")
	}
	return cfg.gateway().Config(s.lookupEnv)
}

// runTestCommand executes forge.runTest in the background and replies
// with the results; the file's diagnostics are republished with them.
func (s *server) runTestCommand(ctx context.Context, p executeParams, reply jsonrpc2.Replier) {
	var args testArgs
	if len(p.Arguments) != 1 || json.Unmarshal(p.Arguments[0], &args) != nil || args.URI == "" {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes one argument object {uri, name?, record?}", commandRunTest))
		return
	}
	if !isTestDoc(args.URI) {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s runs test files (NAME%s), not %s", commandRunTest, testrun.Suffix, args.URI))
		return
	}
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	s.goBackground("test run", func() {
		res, err := s.runTests(ctx, args, cfg)
		if err != nil {
			_ = reply(ctx, nil, err)
			return
		}
		_ = reply(ctx, res, nil)
	})
}

func (s *server) runTests(ctx context.Context, args testArgs, cfg config) (*testRunResult, error) {
	path := fileName(args.URI)
	text, err := s.readPreferOpen(path)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "cannot read %s: %v", path, err)
	}
	f := testrun.Parse(path, text)
	testrun.Validate(f, s.readPreferOpen)
	for _, d := range f.Diags {
		if d.Severity == testrun.SevError {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s", d.String(path))
		}
	}
	opts := testrun.Options{Read: s.readPreferOpen, AllowPrivate: s.opts.Getenv(tools.WebFetchAllowPrivateEnv) == "1",
		LiveTools: cfg.liveTools(), LiveToolsHint: liveToolsHint}
	if args.Name != "" {
		found := false
		for _, c := range f.Cases {
			found = found || c.Name == args.Name
		}
		if !found {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s has no case named %q", path, args.Name)
		}
		opts.Filter = regexp.MustCompile("^" + regexp.QuoteMeta(args.Name) + "$")
	}
	if args.Record {
		gc, err := s.gatewayConfig(cfg)
		if err != nil {
			return nil, jsonrpc2.NewError(requestFailed, err.Error())
		}
		opts.Mode, opts.Gateway, opts.GatewayConfig = testrun.Record, gc, cfg.GatewayConfig
	}
	rs := testrun.Run(ctx, []*testrun.File{f}, opts)
	s.testResults().put(uriKey(args.URI), rs)
	s.mu.Lock()
	if d := s.docs[uriKey(args.URI)]; d != nil && s.state == stateRunning {
		s.scheduleTestDiagnostics(d, 0)
	}
	s.mu.Unlock()
	rep := testrun.ToJSON(rs)
	return &testRunResult{Results: rep.Results, Passed: rep.Passed, Failed: rep.Failed, Skipped: rep.Skipped,
		Summary: testrun.Summarize(rs).String()}, nil
}
