package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

const prompt = "---\nname: t\ndescription: a test prompt\npromptforge: 1\n---\n\n" +
	"# T\n\n```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\n```\n\n" + // 7, 9-11
	"## Main\n\n" + // 13
	"```lua\nstore.write(\"notes.md\", \"hello\")\nlog(\"starting \" .. args)\n" + // 15-17
	"tools.add_local(\"echo\", \"echo text back\", {text = \"string\"}, function(a) return \"E:\" .. a.text end)\n```\n\n" + // 18-19
	"Say hi to {{ args }}.\n" // 21

// runTraced runs prompt against a scripted gateway with a trace and a
// transcript attached.
//
// The tests run prompts with engine/run directly: engine/session, which
// hosts use, imports this package for its trace option.
func runTraced(t *testing.T) (events []Event, transcript string) {
	t.Helper()
	srv := gatewaytest.New(t, "k")
	// The final reply reports its token usage; the tool-call turn does not.
	srv.Enqueue(gatewaytest.Calls("echo", `{"text":"x"}`), gatewaytest.Reply{RawBody: `{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`})
	var tb, vb bytes.Buffer
	w := NewWriter(&tb, "p.md", "Ann")
	res, err := runPrompt(prompt, "Ann", Multi(w, NewTranscript(&vb, "p.md")), envOf(srv))
	w.End(res, err)
	if err != nil || res != "done" {
		t.Fatalf("run: %q %v", res, err)
	}
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	sc := bufio.NewScanner(&tb)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	return events, vb.String()
}

func TestTraceEvents(t *testing.T) {
	events, _ := runTraced(t)
	var got []string
	for _, e := range events {
		s := e.Ev
		if e.Line > 0 {
			s += "@" + strconv.Itoa(e.Line)
		}
		switch e.Ev {
		case "block", "store.write":
			s += ":" + e.Kind
		case "tool.call":
			s += ":" + e.Alias + "=" + e.Result
		case "log":
			s += ":" + e.Message
		}
		got = append(got, s)
	}
	want := []string{
		"run.start",
		"section.enter@7", "block@9:lua", "section.exit@7",
		"section.enter@13", "block@15:lua", "store.write@16:write", "log@17:starting Ann", "block@21:prose",
		"model.round@21", "tool.call@21:echo=E:x", "model.round@21", "section.exit@13",
		"run.end",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	for _, e := range events {
		switch e.Ev {
		case "run.start":
			if e.Version != Version || e.Path != "p.md" || e.Input != "Ann" {
				t.Errorf("start: %+v", e)
			}
		case "block":
			if e.Kind == "prose" && e.Text != "Say hi to Ann." {
				t.Errorf("prose text %q", e.Text)
			}
			if e.EndLine < e.Line {
				t.Errorf("block span %d-%d", e.Line, e.EndLine)
			}
		case "model.round", "tool.call", "section.exit":
			if e.DurationMS == nil {
				t.Errorf("%s without a duration", e.Ev)
			}
		case "store.write":
			if e.StorePath != "notes.md" || e.Bytes != 5 {
				t.Errorf("store: %+v", e)
			}
		case "run.end":
			if e.Reply == nil || *e.Reply != "done" {
				t.Errorf("end: %+v", e)
			}
		}
	}
	if r := events[len(events)-3]; r.Reply == nil || *r.Reply != "done" || r.Model == "" {
		t.Errorf("last round: %+v", r)
	}
	if u := events[len(events)-3].Usage; u == nil || *u != (Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}) {
		t.Errorf("last round usage: %+v", u)
	}
	if u := events[len(events)-5].Usage; events[len(events)-5].Ev != "model.round" || u != nil {
		t.Errorf("tool-call round: %+v", events[len(events)-5])
	}
}

func TestTranscript(t *testing.T) {
	_, tr := runTraced(t)
	for _, want := range []string{
		"p.md:13: enter ## Main\n",
		"p.md:16: store write notes.md (5 bytes)\n",
		"p.md:17: log: starting Ann\n",
		"p.md:21: prose block: sending \"Say hi to Ann.\"\n",
		"p.md:21: tool echo({\"text\":\"x\"}) → \"E:x\"",
		"reply \"done\"",
		"12+3 tokens): reply",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr)
		}
	}
}

func TestEndWithError(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, "p.md", "")
	_, err := runPrompt("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nerror(\"boom\")\n```\n", "", w, nil)
	w.End("", err)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var e Event
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
		t.Fatal(err)
	}
	if e.Ev != "run.end" || e.ErrorKind != "Lua" || e.Line != 12 || !strings.Contains(e.Error, "boom") {
		t.Fatalf("end: %+v", e)
	}
}

// lineHook is a run.LineHook that asks for fixed lines.
type lineHook struct {
	run.Hook
	lines []int
}

func (h lineHook) BreakLines(*run.VM, *parse.Chunk) []int { return h.lines }

// A debugger combined with a trace writer keeps its statement stops.
func TestMultiKeepsLineHook(t *testing.T) {
	w := NewWriter(&bytes.Buffer{}, "p.md", "")
	if _, ok := Multi(w, nil).(run.LineHook); ok {
		t.Fatal("Multi of plain hooks is a LineHook: every chunk would be asked for lines")
	}
	m := Multi(w, lineHook{Hook: w, lines: []int{5, 3}}, lineHook{Hook: w, lines: []int{3, 9}})
	lh, ok := m.(run.LineHook)
	if !ok {
		t.Fatal("Multi with a LineHook member is not a LineHook")
	}
	if got := lh.BreakLines(nil, nil); !slices.Equal(got, []int{3, 5, 9}) {
		t.Fatalf("BreakLines = %v, want [3 5 9]", got)
	}
}

// runPrompt runs src with obs watching; env gives the gateway (nil: none).
func runPrompt(src, input string, obs run.Observer, env gateway.LookupFunc) (string, error) {
	cfg := run.Config{Input: input, Observer: obs, Store: store.New(), Execution: "trace-test"}
	if env != nil {
		cfg.Models.Connect = func() (gateway.Config, error) { return gateway.FromLookup(env, nil) }
	}
	return run.Run(context.Background(), parse.Parse("p.md", []byte(src)), cfg)
}

// envOf is the environment pointing a run at the test gateway srv.
func envOf(srv *gatewaytest.Server) gateway.LookupFunc {
	return func(k string) (string, bool) {
		switch k {
		case gateway.EnvURL:
			return srv.BaseURL(), true
		case gateway.EnvKey:
			return "k", true
		}
		return "", false
	}
}

// TestVarWriteEvents: every change of var is a var.write event with the
// key's path, its new value as compact JSON (none for a deletion) and
// the line of the code that made it.
func TestVarWriteEvents(t *testing.T) {
	const p = "---\nname: t\ndescription: a test prompt\npromptforge: 1\n---\n\n" +
		"# T\n\n" + // 7
		"```lua\n" + // 9
		"var.notes = {\"a\"}\n" + // 10
		"table.insert(var.notes, \"b\")\n" + // 11
		"var.meta = {n = 1}\n" + // 12
		"var.meta.n = 2\n" + // 13
		"var.meta = nil\n" + // 14
		"table.remove(var.notes, 1)\n" + // 15
		"return var.notes[1]\n" +
		"```\n"
	var tb bytes.Buffer
	w := NewWriter(&tb, "p.md", "")
	res, err := runPrompt(p, "", w, nil)
	w.End(res, err)
	if err != nil || res != "b" {
		t.Fatalf("run: %q %v", res, err)
	}
	var got []string
	sc := bufio.NewScanner(&tb)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Ev != "var.write" {
			continue
		}
		s := strconv.Itoa(e.Line) + " " + e.VarPath
		if e.Value != nil {
			s += "=" + *e.Value
		} else {
			s += " deleted"
		}
		got = append(got, s)
	}
	want := []string{
		`10 var.notes=["a"]`,
		`11 var.notes=["a","b"]`,
		`12 var.meta={"n":1}`,
		`13 var.meta.n=2`,
		`14 var.meta deleted`,
		`15 var.notes=["b"]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("var.write events:\n got %q\nwant %q", got, want)
	}
}
