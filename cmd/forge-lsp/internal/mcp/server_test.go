package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

type listOut struct {
	Prompts []struct {
		Name        string     `json:"name"`
		Description string     `json:"description"`
		Problem     *string    `json:"problem"`
		Input       *IODeclare `json:"input"`
		Output      *IODeclare `json:"output"`
	} `json:"prompts"`
	NextCursor string `json:"next_cursor"`
}

func TestToolsListIsFixed(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	cs := f.connect(nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	want := []string{"check_prompt", "check_run", "list_prompts", "lookup_docs", "need_prompt", "outline_prompt", "run_prompt", "run_tests"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	// Upstream's four keep their argument names, required arguments and
	// closed schemas.
	upstream := map[string]struct{ props, required string }{
		"list_prompts": {"cursor", ""},
		"run_prompt":   {"args,input_file,input_text,output_file,prompt", "prompt"},
		"check_run":    {"run_id", "run_id"},
		"need_prompt":  {"capability", "capability"},
	}
	for _, tool := range res.Tools {
		u, ok := upstream[tool.Name]
		if !ok {
			continue
		}
		schema := tool.InputSchema.(map[string]any)
		var props, required []string
		for k := range schema["properties"].(map[string]any) {
			props = append(props, k)
		}
		for _, r := range asSlice(schema["required"]) {
			required = append(required, r.(string))
		}
		slices.Sort(props)
		if strings.Join(props, ",") != u.props || strings.Join(required, ",") != u.required || schema["additionalProperties"] != false {
			t.Errorf("%s schema: %v", tool.Name, schema)
		}
		if tool.Name == "need_prompt" && !strings.Contains(mustJSON(t, schema), `Good: \"Build a stakeholder`) {
			t.Errorf("need_prompt's capability lacks upstream's guidance: %v", schema)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestRunPromptCompletes(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt, "ask.md": askPrompt}, "")
	cs := f.connect(nil)
	var r RunResult
	res, text := call(t, cs, "run_prompt", map[string]any{"prompt": "echo", "args": "hello"}, &r)
	if res.IsError || r.Status != StatusCompleted || r.Value == nil || *r.Value != "HELLO" || text != "HELLO" || r.Turns != 0 || r.Error != nil || len(r.RunID) != 32 {
		t.Fatalf("echo: %+v text %q", r, text)
	}
	f.gw.Enqueue(gatewaytest.Text("forty-two"))
	_, _ = call(t, cs, "run_prompt", map[string]any{"prompt": "Ask", "args": "the question"}, &r)
	if r.Status != StatusCompleted || r.Value == nil || *r.Value != "forty-two" || r.Turns != 1 || r.Prompt != "ask" {
		t.Fatalf("ask: %+v", r)
	}
	reqs := f.gw.Received()
	if len(reqs) == 0 || reqs[len(reqs)-1].Auth != "Bearer "+gatewayKey {
		t.Fatalf("the gateway key from [gateway] api_key was not sent: %+v", reqs)
	}
	// The model catalog is fetched once for the server, not once a run.
	f.gw.Enqueue(gatewaytest.Text("again"), gatewaytest.Text("and again"))
	call(t, cs, "run_prompt", map[string]any{"prompt": "ask"}, &r)
	call(t, cs, "run_prompt", map[string]any{"prompt": "ask"}, &r)
	catalogs := 0
	for _, ex := range f.gw.Received() {
		if ex.Path == "/v1/models" {
			catalogs++
		}
	}
	if catalogs != 1 || *r.Value != "and again" {
		t.Fatalf("3 runs fetched the model catalog %d times (want 1); last %+v", catalogs, r)
	}
}

func TestUnknownNameListsNearestFirst(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt, "ask.md": askPrompt, "summarize.md": summarizePrompt}, "")
	cs := f.connect(nil)
	res, text := call(t, cs, "run_prompt", map[string]any{"prompt": "ecoh"}, nil)
	if !res.IsError || !strings.Contains(text, `no prompt named "ecoh"`) || !strings.Contains(text, "closest first: echo, ask, summarize.") {
		t.Fatalf("got %q", text)
	}
}

func TestListPromptsPagination(t *testing.T) {
	prompts := map[string]string{}
	for i := range 105 {
		name := fmt.Sprintf("p%03d", i)
		prompts[name+".md"] = strings.Replace(echoPrompt, "name: echo", "name: "+name, 1)
	}
	f := newFixture(t, prompts, "")
	cs := f.connect(nil)
	var page listOut
	call(t, cs, "list_prompts", nil, &page)
	if len(page.Prompts) != 100 || page.NextCursor != "100" || page.Prompts[0].Name != "p000" || page.Prompts[0].Problem != nil {
		t.Fatalf("first page: %d prompts, cursor %q", len(page.Prompts), page.NextCursor)
	}
	var next listOut
	call(t, cs, "list_prompts", map[string]any{"cursor": page.NextCursor}, &next)
	if len(next.Prompts) != 5 || next.NextCursor != "" || next.Prompts[4].Name != "p104" {
		t.Fatalf("second page: %+v", next)
	}
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_prompts", Arguments: map[string]any{"cursor": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("a bad cursor: %v, want invalid params", err)
	}
}

func TestAdmissionRefusal(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt, "echo.md": echoPrompt}, "max_concurrent_runs = 1\nadmission_timeout = \"50ms\"\n")
	f.block("late")
	cs := f.connect(nil)
	done := make(chan RunResult, 1)
	go func() {
		var r RunResult
		call(t, cs, "run_prompt", map[string]any{"prompt": "ask", "args": "q"}, &r)
		done <- r
	}()
	<-f.started
	start := time.Now()
	res, text := call(t, cs, "run_prompt", map[string]any{"prompt": "echo", "args": "x"}, nil)
	if !res.IsError || !strings.Contains(text, "every run slot is busy and none came free within 50ms. Retry in a moment.") {
		t.Fatalf("second call: %q", text)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("refused after %v, before the admission timeout", waited)
	}
	f.unblock()
	if r := <-done; r.Status != StatusCompleted || *r.Value != "late" {
		t.Fatalf("first call: %+v", r)
	}
	// The slot came back: a new call is admitted.
	var r RunResult
	call(t, cs, "run_prompt", map[string]any{"prompt": "echo", "args": "x"}, &r)
	if r.Status != StatusCompleted {
		t.Fatalf("after release: %+v", r)
	}
}

func TestReplyDeadlineThenCheckRun(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "reply_deadline = \"30ms\"\n")
	f.block("finally")
	cs := f.connect(nil)
	var r RunResult
	res, text := call(t, cs, "run_prompt", map[string]any{"prompt": "ask", "args": "q"}, &r)
	if res.IsError || r.Status != StatusRunning || r.Value != nil || r.Error != nil || r.RunID == "" || !strings.Contains(text, "check_run") || !strings.Contains(text, r.RunID) {
		t.Fatalf("past the deadline: %+v %q", r, text)
	}
	var again RunResult
	call(t, cs, "check_run", map[string]any{"run_id": r.RunID}, &again)
	if again.Status != StatusRunning || again.RunID != r.RunID {
		t.Fatalf("check_run while running: %+v", again)
	}
	f.unblock()
	waitFor(t, "the run to complete", func() bool {
		call(t, cs, "check_run", map[string]any{"run_id": r.RunID}, &again)
		return again.Status != StatusRunning
	})
	if again.Status != StatusCompleted || *again.Value != "finally" || again.Turns != 1 {
		t.Fatalf("collected: %+v", again)
	}
}

func TestRetentionExpiry(t *testing.T) {
	// Long enough for the check right after the run on a busy machine;
	// the expiry is then waited for, not slept for.
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "retain_completed = \"1s\"\n")
	cs := f.connect(nil)
	var r RunResult
	call(t, cs, "run_prompt", map[string]any{"prompt": "echo", "args": "x"}, &r)
	var got RunResult
	call(t, cs, "check_run", map[string]any{"run_id": r.RunID}, &got)
	if got.Status != StatusCompleted || *got.Value != "X" {
		t.Fatalf("within retention: %+v", got)
	}
	var text string
	waitFor(t, "the run to expire", func() bool {
		var res *sdk.CallToolResult
		res, text = call(t, cs, "check_run", map[string]any{"run_id": r.RunID}, nil)
		return res.IsError
	})
	if !strings.Contains(text, "no run "+r.RunID) || !strings.Contains(text, "1s") {
		t.Fatalf("after retention: %q", text)
	}
}

func TestDisconnectCancelsRuns(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "max_concurrent_runs = 1\n")
	f.block("never seen")
	// A pipe, so that closing the client's end is a disconnect (the SDK's
	// ClientSession.Close would wait for the call).
	clientEnd, serverEnd := net.Pipe()
	ss, err := f.srv.MCP().Connect(context.Background(), &sdk.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	connected := make(chan *sdk.ClientSession, 1)
	go func() {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: clientEnd, Writer: clientEnd}, nil)
		if err != nil {
			t.Error(err)
			close(connected)
			return
		}
		connected <- cs
		_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_prompt", Arguments: map[string]any{"prompt": "ask"}})
	}()
	if <-connected == nil {
		return
	}
	<-f.started
	clientEnd.Close()
	_ = ss.Wait()
	var rec *record
	waitFor(t, "the run to be recorded", func() bool {
		f.srv.runs.mu.Lock()
		defer f.srv.runs.mu.Unlock()
		for _, r := range f.srv.runs.runs {
			rec = r
		}
		return rec != nil
	})
	select {
	case <-rec.done:
	case <-time.After(3 * time.Second):
		t.Fatal("the run went on after its client disconnected")
	}
	res := f.srv.runs.snapshot(rec)
	if res.Status != StatusFailed || !strings.Contains(*res.Error, "cancelled") {
		t.Fatalf("after disconnect: %+v", res)
	}
	waitFor(t, "the slot to come back", func() bool { return len(f.srv.runs.slots) == 0 })
}

func TestReloadKeepsBrokenPromptListed(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt, "ask.md": askPrompt}, "watch_debounce = \"10ms\"\n")
	cs := f.connect(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.Watch(ctx)
	broken := strings.Replace(echoPrompt, "```lua\nreturn", "```lua\nreturn )(", 1)
	writeFile(t, filepath.Join(f.dir, "prompts", "echo.md"), broken)
	writeFile(t, filepath.Join(f.dir, "prompts", "new.md"), strings.Replace(echoPrompt, "name: echo", "name: fresh", 1))
	var page listOut
	waitFor(t, "the reload", func() bool {
		call(t, cs, "list_prompts", nil, &page)
		if len(page.Prompts) != 3 {
			t.Log(f.logs.String())
		}
		return len(page.Prompts) == 3
	})
	byName := map[string]*string{}
	for _, p := range page.Prompts {
		byName[p.Name] = p.Problem
	}
	if p, ok := byName["echo"]; !ok || p == nil || !strings.Contains(*p, "parse error") {
		t.Fatalf("echo after a broken save: %+v", page)
	}
	if p, ok := byName["fresh"]; !ok || p != nil {
		t.Fatalf("a new prompt: %+v", page)
	}
	var r RunResult
	res, _ := call(t, cs, "run_prompt", map[string]any{"prompt": "echo"}, &r)
	if !res.IsError || r.Status != StatusFailed || !strings.Contains(*r.Error, "parse error") {
		t.Fatalf("running the broken prompt: %+v", r)
	}
	call(t, cs, "run_prompt", map[string]any{"prompt": "fresh", "args": "a"}, &r)
	if r.Status != StatusCompleted {
		t.Fatalf("running the new prompt: %+v", r)
	}
	// A prompts.toml that no longer loads keeps the catalog.
	writeFile(t, filepath.Join(f.dir, "prompts.toml"), "[server]\nbogus = 1\n")
	f.srv.Reload()
	if n := len(f.srv.Catalog().Entries); n != 3 {
		t.Fatalf("a broken prompts.toml changed the catalog to %d entries", n)
	}
	if !strings.Contains(f.logs.String(), "prompts.toml no longer loads") {
		t.Fatalf("the broken configuration was not logged: %s", f.logs.String())
	}
}

func TestFileParameters(t *testing.T) {
	f := newFixture(t, map[string]string{"summarize.md": summarizePrompt, "echo.md": echoPrompt}, "")
	cs := f.connect(nil)
	var page listOut
	call(t, cs, "list_prompts", nil, &page)
	for _, p := range page.Prompts {
		if p.Name == "summarize" && (p.Input == nil || p.Input.Path != "in/doc.md" || p.Output == nil || p.Output.Path != "out/report.md") {
			t.Fatalf("declared input/output not listed: %+v", p)
		}
	}
	var r RunResult
	call(t, cs, "run_prompt", map[string]any{"prompt": "summarize", "input_text": "the text"}, &r)
	if r.Status != StatusCompleted || *r.Value != "REPORT: the text" {
		t.Fatalf("input_text, output inline: %+v", r)
	}
	in := filepath.Join(f.dir, "doc.md")
	out := filepath.Join(f.dir, "report.md")
	writeFile(t, in, "from a file")
	call(t, cs, "run_prompt", map[string]any{"prompt": "summarize", "input_file": in, "output_file": out}, &r)
	if r.Status != StatusCompleted || *r.Value != "done" {
		t.Fatalf("input_file and output_file: %+v", r)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "REPORT: from a file" {
		t.Fatalf("output_file holds %q (%v)", b, err)
	}
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_prompt", Arguments: map[string]any{"prompt": "summarize", "input_file": in, "input_text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "mutually exclusive") {
		t.Fatalf("both inputs: %v", err)
	}
	res, _ := call(t, cs, "run_prompt", map[string]any{"prompt": "echo", "input_text": "x"}, &r)
	if !res.IsError || r.Status != StatusFailed || !strings.Contains(*r.Error, "declares no input") {
		t.Fatalf("input to a prompt without one: %+v", r)
	}
	call(t, cs, "run_prompt", map[string]any{"prompt": "summarize", "input_file": filepath.Join(f.dir, "missing.md")}, &r)
	if r.Status != StatusFailed || !strings.Contains(*r.Error, "cannot read input_file") {
		t.Fatalf("a missing input_file: %+v", r)
	}
}

func TestNeedPrompt(t *testing.T) {
	f := newFixture(t, map[string]string{"summarize.md": summarizePrompt, "echo.md": echoPrompt, "ask.md": askPrompt}, "")
	cs := f.connect(nil)
	var out struct {
		Prompts []struct{ Name, Description string } `json:"prompts"`
	}
	call(t, cs, "need_prompt", map[string]any{"capability": "Summarize a document into a written report."}, &out)
	if len(out.Prompts) == 0 || len(out.Prompts) > 3 || out.Prompts[0].Name != "summarize" {
		t.Fatalf("need_prompt: %+v", out)
	}
	call(t, cs, "need_prompt", map[string]any{"capability": "zzz qqq"}, &out)
	if len(out.Prompts) != 0 {
		t.Fatalf("an unrelated capability matched %+v", out)
	}
	res, text := call(t, cs, "need_prompt", map[string]any{"capability": strings.Repeat("a ", 3000)}, nil)
	if !res.IsError || !strings.Contains(text, "limit") {
		t.Fatalf("an over-long capability: %q", text)
	}
}

func TestProgressNotifications(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "")
	f.gw.Enqueue(gatewaytest.Text("ok"))
	var mu sync.Mutex
	var msgs []string
	cs := f.connect(&sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		msgs = append(msgs, r.Params.Message)
		mu.Unlock()
	}})
	p := &sdk.CallToolParams{Name: "run_prompt", Arguments: map[string]any{"prompt": "ask", "args": "q"}}
	p.SetProgressToken("tok")
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// The queued notifications are sent before the answer; the client
	// handles them on its own goroutines, so they may land just after.
	waitFor(t, "the progress of the section", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, "## Answer") })
	})
}

func TestSecretsNeverLeave(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "")
	// A gateway that echoes the key it was sent in its error body.
	f.gw.Enqueue(gatewaytest.Reply{Status: 400, RawBody: `{"error":{"message":"bad key ` + gatewayKey + ` and bearer-secret-token","type":"invalid_request_error"}}`})
	cs := f.connect(nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_prompt", Arguments: map[string]any{"prompt": "ask", "args": "q"}})
	if err != nil {
		t.Fatal(err)
	}
	b := fmt.Sprintf("%+v %s", res, mustJSON(t, res))
	if !res.IsError || !strings.Contains(b, "[redacted]") {
		t.Fatalf("the failure did not come through redacted: %s", b)
	}
	for _, secret := range []string{gatewayKey, "bearer-secret-token"} {
		if strings.Contains(b, secret) {
			t.Fatalf("a secret left in the result: %s", b)
		}
		if strings.Contains(f.logs.String(), secret) {
			t.Fatalf("a secret reached the log: %s", f.logs.String())
		}
	}
	// A protocol error quoting a secret (here a bad pattern that holds the
	// key) is redacted too.
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_tests", Arguments: map[string]any{"run": "(" + gatewayKey}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || strings.Contains(we.Message, gatewayKey) || !strings.Contains(we.Message, "[redacted]") {
		t.Fatalf("a protocol error: %v", err)
	}
	f.srv.log.Info("logging a secret", "key", gatewayKey)
	if strings.Contains(f.logs.String(), gatewayKey) || !strings.Contains(f.logs.String(), "[redacted]") {
		t.Fatalf("the log writer does not redact: %s", f.logs.String())
	}
}

func TestToolsSwitches(t *testing.T) {
	const searcher = "---\nname: searcher\ndescription: Bind the web search tool\npromptforge: 1\n---\n\n# Searcher\n\n```lua\ntools.bind(\"search\", \"web search capability\")\n```\n\n## Done\n\n```lua\ntools.add(\"search\")\nreturn \"bound\"\n```\n"
	off := newFixture(t, map[string]string{"searcher.md": searcher}, "")
	var r RunResult
	call(t, off.connect(nil), "run_prompt", map[string]any{"prompt": "searcher"}, &r)
	if r.Status != StatusFailed || !strings.Contains(*r.Error, "web search") {
		t.Fatalf("web_search is off by default: %+v", r)
	}
	fetcher := strings.NewReplacer("searcher", "fetcher", "web search capability", "fetch a web page by its URL").Replace(searcher)
	on := newFixture(t, map[string]string{"searcher.md": searcher, "fetcher.md": fetcher}, "")
	cs := on.connect(nil)
	call(t, cs, "run_prompt", map[string]any{"prompt": "fetcher"}, &r)
	if r.Status != StatusFailed {
		t.Fatalf("web_fetch is off by default: %+v", r)
	}
	cfg := *on.srv.config()
	cfg.WebSearch, cfg.WebFetch = true, true
	on.srv.setConfig(&cfg)
	for _, name := range []string{"searcher", "fetcher"} {
		call(t, cs, "run_prompt", map[string]any{"prompt": name}, &r)
		if r.Status != StatusCompleted || *r.Value != "bound" {
			t.Fatalf("%s with [tools] switched on: %+v", name, r)
		}
	}
}
