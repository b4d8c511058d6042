package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

const header = "---\nname: t\ndescription: a test prompt\npromptforge: 1\n---\n\n"

// luaOnly calls no model.
const luaOnly = header + "# T\n\n```lua\nlocal x = 1\n```\n\n## A\n\n```lua\nreturn 'a:' .. args\n```\n\n## B\n\n```lua\nreturn 'b:' .. sys.execution\n```\n"

// withModel needs a model in ## Main.
const withModel = header + "# T\n\n```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\n```\n\n## Main\n\nSay something.\n"

// noEnv is an empty environment.
func noEnv(string) (string, bool) { return "", false }

func env(kv ...string) gateway.LookupFunc {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func open(t *testing.T, o Options) *Session {
	t.Helper()
	if o.Env == nil {
		o.Env = noEnv
	}
	s, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestRunWholePromptAndSection(t *testing.T) {
	s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Input: "in"})
	if s.Section() != nil {
		t.Fatalf("no section asked, got %v", s.Section().Address())
	}
	got, err := s.Run(context.Background())
	if err != nil || got != "a:in" {
		t.Fatalf("whole prompt: %q, %v; want a:in (the walk stops at A's return)", got, err)
	}

	s = open(t, Options{Path: "p.md", Source: []byte(luaOnly), Section: " ## B ", ExecutionPrefix: "x-"})
	if s.Section() == nil || s.Section().Name != "B" {
		t.Fatalf("section: %v", s.Section())
	}
	got, err = s.Run(context.Background())
	if err != nil || got != "b:"+s.Execution() || !strings.HasPrefix(s.Execution(), "x-") || len(s.Execution()) != len("x-")+16 {
		t.Fatalf("section run: %q, %v (execution %q)", got, err, s.Execution())
	}
}

// recorder is an Observer that keeps section entries.
type recorder struct {
	mu      sync.Mutex
	entered []string
}

func (r *recorder) SectionEnter(ev run.SectionEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entered = append(r.entered, ev.Address)
}
func (r *recorder) SectionExit(run.SectionEvent)   {}
func (r *recorder) ModelRound(run.ModelRoundEvent) {}
func (r *recorder) ToolCall(run.ToolCallEvent)     {}
func (r *recorder) Log(run.LogEvent)               {}

func TestObserverAndStorePassThrough(t *testing.T) {
	obs := &recorder{}
	src := header + "# T\n\n## W\n\n```lua\nstore.write('out/r.txt', 'done')\nreturn 'ok'\n```\n"
	s := open(t, Options{Path: "p.md", Source: []byte(src), Observer: obs})
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(obs.entered, ",") != ",## W" {
		t.Errorf("observer saw %q, want the H1 then ## W", obs.entered)
	}
	if got, _ := s.Store().Read("out/r.txt"); got != "done" {
		t.Errorf("store after the run: %q", got)
	}
}

func TestOpenRefusals(t *testing.T) {
	dir := t.TempDir()
	badTools := filepath.Join(dir, "forge-tools.json")
	if err := os.WriteFile(badTools, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		// check inspects the error.
		check func(error) bool
	}{
		{"not a prompt", Options{Path: "np.md", Source: []byte("# Just markdown\n")}, func(err error) bool {
			var re *run.RunError
			var np *NotAPromptError
			return errors.As(err, &np) && np.Path == "np.md" && errors.As(err, &re) && re.Kind == run.KindParse && re.Line == 1 && re.Msg == notAPromptMsg
		}},
		{"parse errors", Options{Source: []byte(header + "# T\n\n```lua\nlocal = \n```\n")}, func(err error) bool {
			var pe *ParseError
			return errors.As(err, &pe) && len(pe.Problems) > 0 && pe.Problems[0].Line == 10 &&
				strings.HasPrefix(err.Error(), "the prompt has ") && strings.Contains(err.Error(), "line 10: ")
		}},
		{"unknown section", Options{Source: []byte(luaOnly), Section: "## Nope"}, setup(OptSection, "not found")},
		{"unreadable cassette", Options{Source: []byte(luaOnly), Gateway: Gateway{Replay: filepath.Join(dir, "missing.jsonl")}}, setup(OptReplay, "")},
		{"record without a gateway", Options{Source: []byte(luaOnly), Gateway: Gateway{Record: filepath.Join(dir, "c.jsonl")}}, setup(OptRecord, gateway.EnvURL)},
		{"broken tools file", Options{Source: []byte(luaOnly), ToolsDir: dir}, setup(OptToolsFile, "")},
		{"configured gateway without its key", Options{Source: []byte(luaOnly), Gateway: Gateway{URL: "http://127.0.0.1:1/v1", KeyEnv: "MY_KEY"}}, func(err error) bool {
			var se *SetupError
			return errors.As(err, &se) && se.Option == OptGateway && IsGatewayConfig(err) &&
				strings.Contains(err.Error(), "MY_KEY") && !strings.Contains(err.Error(), gateway.EnvKey)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.Env == nil {
				tc.opts.Env = noEnv
			}
			s, err := Open(tc.opts)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !tc.check(err) {
				t.Errorf("unexpected error %T: %v", err, err)
			}
		})
	}
}

func setup(opt Option, text string) func(error) bool {
	return func(err error) bool {
		var se *SetupError
		return errors.As(err, &se) && se.Option == opt && strings.Contains(err.Error(), text)
	}
}

func TestParseErrorSummaryNamesFive(t *testing.T) {
	pe := &ParseError{}
	for i := 1; i <= 7; i++ {
		pe.Problems = append(pe.Problems, Problem{Line: i, Message: "bad"})
	}
	want := "the prompt has 7 parse error(s); fix them first: line 1: bad; line 2: bad; line 3: bad; line 4: bad; line 5: bad; …"
	if pe.Error() != want {
		t.Errorf("got  %q\nwant %q", pe.Error(), want)
	}
}

// A prompt that needs no model runs without any gateway; one that needs a
// model fails only when it gets there, with a configuration error.
func TestGatewayReadLazily(t *testing.T) {
	s := open(t, Options{Path: "p.md", Source: []byte(withModel)})
	_, err := s.Run(context.Background())
	var re *run.RunError
	if !errors.As(err, &re) || !IsGatewayConfig(err) || !strings.Contains(err.Error(), gateway.EnvURL) {
		t.Fatalf("run without a gateway: %T %v", err, err)
	}
}

// The environment gives the gateway (URL and key, the key under the host's
// variable name), and a configured URL overrides the environment's.
func TestGatewayFromEnvAndURL(t *testing.T) {
	srv := gatewaytest.New(t, "secret-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"environment", Options{Env: env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "secret-key")}},
		{"configured URL and key variable", Options{
			Env:     env(gateway.EnvURL, "http://127.0.0.1:1/v1", "OTHER_KEY", "secret-key"),
			Gateway: Gateway{URL: srv.BaseURL(), KeyEnv: "OTHER_KEY"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Enqueue(gatewaytest.Text("hello"))
			tc.opts.Path, tc.opts.Source = "p.md", []byte(withModel)
			s := open(t, tc.opts)
			got, err := s.Run(context.Background())
			if err != nil || got != "hello" {
				t.Fatalf("run: %q, %v", got, err)
			}
		})
	}
}

// Record writes a cassette on Close; Replay answers from it offline.
func TestRecordThenReplay(t *testing.T) {
	srv := gatewaytest.New(t, "secret-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	srv.Enqueue(gatewaytest.Text("recorded"))
	cassette := filepath.Join(t.TempDir(), "c.jsonl")
	s := open(t, Options{Path: "p.md", Source: []byte(withModel),
		Env:     env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "secret-key"),
		Gateway: Gateway{Record: cassette}})
	if got, err := s.Run(context.Background()); err != nil || got != "recorded" {
		t.Fatalf("recording run: %q, %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t, Options{Path: "p.md", Source: []byte(withModel), Gateway: Gateway{Replay: cassette}})
	if got, err := s.Run(context.Background()); err != nil || got != "recorded" {
		t.Fatalf("replayed run: %q, %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after replay: %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	s := open(t, Options{Path: "p.md", Source: []byte(header + "# T\n\n## L\n\n```lua\nwhile true do end\n```\n")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Run(ctx)
	var re *run.RunError
	if !errors.As(err, &re) || !re.IsCancelled() {
		t.Fatalf("cancelled run: %T %v", err, err)
	}
}

// The host's environment, not the process's, decides whether web_fetch
// may reach private addresses; the execution id is 16 hex digits.
func TestEnvAndExecution(t *testing.T) {
	for _, tc := range []struct {
		env  gateway.LookupFunc
		want bool
	}{
		{noEnv, false},
		{env(tools.WebFetchAllowPrivateEnv, "0"), false},
		{env(tools.WebFetchAllowPrivateEnv, "1"), true},
	} {
		s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Env: tc.env})
		if s.cfg.Tools.WebFetchAllowPrivate != tc.want {
			t.Errorf("WebFetchAllowPrivate = %v, want %v", s.cfg.Tools.WebFetchAllowPrivate, tc.want)
		}
		if len(s.Execution()) != 16 || strings.Trim(s.Execution(), "0123456789abcdef") != "" {
			t.Errorf("execution id %q", s.Execution())
		}
	}
	if s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Execution: "case-1", ExecutionPrefix: "x-"}); s.Execution() != "case-1" {
		t.Errorf("a given execution id: %q", s.Execution())
	}
}

// TestSectionRunsAlone holds every host that names a section (run
// --section, Run section, Debug section, a test case, MCP) to
// docs/language.md#running-one-section: the H1, then the section alone,
// never its next sibling.
func TestSectionRunsAlone(t *testing.T) {
	src := header + "# T\n\n## A\n\n```lua\nreply = 'a'\n```\n\n## B\n\n```lua\nreply = reply .. '+b'\n```\n"
	rec := &recorder{}
	s := open(t, Options{Path: "p.md", Source: []byte(src), Section: "## A", Observer: rec})
	got, err := s.Run(context.Background())
	if err != nil || got != "a" {
		t.Fatalf("section run: %q, %v; want a (B must not run)", got, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if strings.Join(rec.entered, ",") != ",## A" {
		t.Errorf("entered %q, want the H1 and ## A", rec.entered)
	}
}

// Gateway.Config reads the URL and key the host gave, else the
// environment, the key under the host's variable; errors name that
// variable. Gateway.Open gives no client when nothing is configured.
func TestGatewayValue(t *testing.T) {
	e := env(gateway.EnvURL, "http://env.example/v1", "MY_KEY", "k-env")
	for _, tc := range []struct {
		name    string
		g       Gateway
		want    gateway.Config
		wantErr string
	}{
		{"environment under the host's key variable", Gateway{KeyEnv: "MY_KEY"}, gateway.Config{BaseURL: "http://env.example/v1", APIKey: "k-env"}, ""},
		{"URL and key given", Gateway{URL: "http://given.example/v1", Key: "k-given", KeyEnv: "MY_KEY"}, gateway.Config{BaseURL: "http://given.example/v1", APIKey: "k-given"}, ""},
		{"missing key names the host's variable", Gateway{KeyEnv: "NO_SUCH_KEY"}, gateway.Config{}, "NO_SUCH_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.g.Config(e)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), gateway.EnvKey) || !IsGatewayConfig(err) {
					t.Fatalf("Config error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Config = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if c, err := (Gateway{}).Open(e); c != nil || err != nil {
		t.Errorf("Open with nothing configured = %v, %v; want no client", c, err)
	}
	c, err := (Gateway{URL: "http://given.example/v1", Key: "k"}).Open(noEnv)
	if err != nil || c == nil {
		t.Fatalf("Open of a configured gateway: %v, %v", c, err)
	}
	_ = c.Close()
}

// Options.Trace gets the run's trace, outcome included, and a refused
// run's trace still ends with the refusal.
func TestTraceOption(t *testing.T) {
	var b strings.Builder
	s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Input: "in", Trace: &b})
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.TraceErr() != nil || !strings.Contains(b.String(), `"a:in"`) || strings.Count(b.String(), "\n") < 3 {
		t.Fatalf("trace of a run (err %v):\n%s", s.TraceErr(), b.String())
	}
	b.Reset()
	if _, err := Open(Options{Path: "np.md", Source: []byte("# md\n"), Env: noEnv, Trace: &b}); err == nil {
		t.Fatal("Open of a non-prompt succeeded")
	}
	if !strings.Contains(b.String(), "not a promptforge prompt") {
		t.Fatalf("trace of a refused run:\n%s", b.String())
	}
}

func TestCheckPrompt(t *testing.T) {
	var np *NotAPromptError
	if err := CheckPrompt("a.md", []byte("# md\n")); !errors.As(err, &np) || np.Path != "a.md" {
		t.Errorf("CheckPrompt of markdown: %v", err)
	}
	if err := CheckPrompt("p.md", []byte(luaOnly)); err != nil {
		t.Errorf("CheckPrompt of a prompt: %v", err)
	}
}

// TestParsedReusedOnlyForItsText: a host's earlier parse is used for the
// same text and path, and never for another text (which is probed and
// parsed afresh, with its own errors).
func TestParsedReusedOnlyForItsText(t *testing.T) {
	first := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Input: "in"})
	parsed := first.Prompt()

	again := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Parsed: parsed, Input: "in"})
	if again.Prompt() != parsed {
		t.Fatal("the same text was parsed again")
	}
	if got, err := again.Run(context.Background()); err != nil || got != "a:in" {
		t.Fatalf("run with the earlier parse: %q, %v", got, err)
	}

	if s := open(t, Options{Path: "q.md", Source: []byte(luaOnly), Parsed: parsed}); s.Prompt() == parsed {
		t.Fatal("the parse of p.md was used for q.md")
	}
	changed := strings.Replace(luaOnly, "return 'a:' .. args", "return 'A:' .. args", 1)
	s := open(t, Options{Path: "p.md", Source: []byte(changed), Parsed: parsed, Input: "in"})
	if got, err := s.Run(context.Background()); err != nil || got != "A:in" {
		t.Fatalf("a changed text ran the earlier parse: %q, %v", got, err)
	}
	broken := strings.Replace(luaOnly, "promptforge: 1\n", "", 1)
	if _, err := Open(Options{Path: "p.md", Source: []byte(broken), Parsed: parsed, Env: noEnv}); err == nil {
		t.Fatal("a text without promptforge was not probed: the earlier parse stood in for it")
	}
}
