package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

const tripPrompt = `---
name: trip
description: Plan a trip with lookups and a booking
promptforge: 1
---

# Trip

` + "```lua" + `
models.default("planner", "a general assistant model")
` + "```" + `

## Plan

` + "```lua" + `
tools.add_local("lookup", "Look up a city", {city = "string"}, function(a)
  return "sunny in " .. a.city
end)
tools.add_local("book", "Book nights in a city", {city = "string", nights = "integer"}, function(a)
  return "booked " .. a.city
end)
tools.add_local("cancel", "Cancel a booking", {city = "string"}, function(a)
  return "cancelled"
end)
` + "```" + `

Plan a trip for {{ args }}.
`

// tripServer answers the trip prompt in three rounds: two lookups (the
// first with nested filter arguments), then a lookup and a booking, then
// the text; every reply reports 100 input and 10 output tokens.
func tripServer(t *testing.T) *gatewaytest.Server { return tripServerUsing(t, 100) }

// tripServerUsing is tripServer reporting in input tokens per round.
func tripServerUsing(t *testing.T, in int64) *gatewaytest.Server {
	srv := gatewaytest.New(t, "test-key")
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		results := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results++
			}
		}
		var r gatewaytest.Reply
		switch results {
		case 0:
			r = gatewaytest.Calls("lookup", `{"city":"Paris","filter":{"lang":"fr","tags":["food","art"]}}`)
		case 1:
			r = gatewaytest.Calls("lookup", `{"city":"Rome"}`, "book", `{"city":"Rome","nights":2}`)
		default:
			r = gatewaytest.Text("Booked Rome for 2 nights.")
		}
		r.Usage = &gateway.Usage{PromptTokens: in, CompletionTokens: 10, TotalTokens: in + 10}
		return r
	}
	return srv
}

const tripPass = `cases:
  - name: plans
    input: "two"
    section: "## Plan"
    expect:
      output: {contains: Rome}
      tool_calls:
        - {tool: lookup, args: {city: Paris, filter.lang: fr, "filter.tags[1]": art}}
        - {tool: lookup, count: 2}
        - {tool: book, args: {city: Rome, nights: "2"}, count: 1}
      never: [cancel]
      rounds: {max: 3, per_section: 3, sections: {"## Plan": 3}}
      tokens: {input: {max: 300}, output: {max: 30}}
      models: [test-model]
  - name: in order
    input: "two"
    section: "## Plan"
    expect:
      order: sequence
      tool_calls: [lookup, book]
  - name: exactly
    input: "two"
    section: "## Plan"
    expect:
      order: exact
      tool_calls: [{tool: lookup, args: {city: Paris}}, {tool: lookup, args: {city: Rome}}, book]
`

// Each case below breaks one trajectory assertion of tripPass; the
// message it must produce is listed with it.
var tripBreaks = []struct{ expect, want string }{
	{"tool_calls: [{tool: lookup, args: {filter.lang: de}}]",
		"tool_calls[1]: lookup with matching filter.lang was called 0 time(s), want at least 1 (call 1 (Plan, round 1): args.filter.lang: want \"de\", got \"fr\")"},
	{"tool_calls: [{tool: lookup, args: {\"filter.tags[5]\": art}}]", "args.filter.tags[5]: does not exist"},
	{"tool_calls: [{tool: lookup, count: 1}]", "tool_calls[1]: lookup was called 2 time(s), want 1"},
	{"tool_calls: [{tool: book, count: {min: 2}}]", "book was called 1 time(s), want at least 2"},
	{"tool_calls: [cancel]", "tool_calls[1]: cancel was called 0 time(s), want at least 1; the run's calls:\n    #   section / round   tool(args)\n    1   Plan / 1   lookup({\"city\":\"Paris\""},
	{"{order: sequence, tool_calls: [book, lookup]}", "tool_calls[2]: order sequence: no lookup after call 3 (Plan, round 2)"},
	{"{order: exact, tool_calls: [lookup, book]}", "tool_calls[2]: order exact: call 2 (Plan, round 2) is not book (the tool is lookup)"},
	{"{order: exact, tool_calls: [lookup, lookup]}", "tool_calls: order exact: call 3 (Plan, round 2), book, is not expected (the case lists 2 call(s))"},
	{"{order: exact, tool_calls: [lookup, lookup, book, book]}", "tool_calls[4]: order exact: the run made only 3 call(s), want book next"},
	{"never: [book]", "never: book was called: call 3 (Plan, round 2)"},
	{"rounds: {max: 2}", "rounds: the run took 3 model round(s), want at most 2 (Plan: 3)"},
	{"rounds: {per_section: 1}", "rounds: Plan took 3 model round(s), want at most 1 per section"},
	{"rounds: {sections: {\"## Plan\": 2}}", "rounds: ## Plan took 3 model round(s), want at most 2"},
	{"tokens: {input: {max: 299}}", "tokens: the run used 300 input tokens, want at most 299"},
	{"tokens: {output: {max: 29}}", "tokens: the run used 30 output tokens, want at most 29"},
	{"models: [other-model]", "models: test-model answered, which the case does not list (answered: test-model)"},
	{"models: [test-model, other-model]", "models: other-model never answered (answered: test-model)"},
}

// TestTrajectoryAssertions records the trip prompt once, replays a suite
// whose trajectory expectations all hold, then one case per assertion
// that breaks it, each failing with a message naming the call (section,
// round, index) and the actual calls.
func TestTrajectoryAssertions(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "trip.md"), []byte(tripPrompt), 0o644)
	os.WriteFile(filepath.Join(dir, "trip.test.yaml"), []byte(tripPass), 0o644)
	srv := tripServer(t)
	if code, out, errs := testCLI(t, envOf(srv), "--record", dir); code != 0 {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := testCLI(t, envOf(nil), dir); code != 0 || out != "3 passed, 0 failed\n" {
		t.Fatalf("replay: %d\n%s\n%s", code, out, errs)
	}
	var b strings.Builder
	b.WriteString("cases:\n")
	for i, br := range tripBreaks {
		e := br.expect
		if strings.HasPrefix(e, "{") {
			e = strings.TrimSuffix(strings.TrimPrefix(e, "{"), "}")
		}
		b.WriteString("  - name: break " + string(rune('a'+i)) + "\n    input: \"two\"\n    section: \"## Plan\"\n    cassette: cassettes/trip/plans.jsonl\n    expect: {" + e + "}\n")
	}
	os.WriteFile(filepath.Join(dir, "trip.test.yaml"), []byte(b.String()), 0o644)
	code, out, errs := testCLI(t, envOf(nil), dir)
	if code != 1 || !strings.HasSuffix(out, "0 passed, 17 failed\n") {
		t.Fatalf("breaks: %d\n%s\n%s", code, out, errs)
	}
	for i, br := range tripBreaks {
		name := "\"break " + string(rune('a'+i)) + "\""
		// The case's messages run from its FAIL line to the next case's.
		block := ""
		if k := strings.Index(out, "FAIL "+name); k >= 0 {
			block = out[k:]
			if e := strings.Index(block[1:], "FAIL \"break"); e >= 0 {
				block = block[:e+1]
			}
		}
		if !strings.Contains(block, br.want) {
			t.Errorf("%s (%s): output lacks %q", name, br.expect, br.want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestTrajectoryNoUsage: a token limit over a recording whose gateway
// reported no usage fails and says why, rather than passing on zero.
func TestTrajectoryNoUsage(t *testing.T) {
	dir := writeSuite(t)
	srv := greetServer(t, false)
	if code, out, errs := testCLI(t, envOf(srv), "--record", "--run", "greets by name", dir); code != 0 {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(`cases:
  - name: greets by name
    input: "Ada"
    section: "## Hello"
    store: {notes/old.md: "seed"}
    expect:
      tokens: {input: {max: 1000}}
`), 0o644)
	code, out, _ := testCLI(t, envOf(nil), dir)
	if code != 1 || !strings.Contains(out, "tokens: the recording holds no token usage for any of the 2 model round(s)") {
		t.Errorf("%d\n%s", code, out)
	}
}
