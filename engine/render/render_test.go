package render

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
)

const h1 = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nmodels.default(\"writer\", \"a careful writing model\", { max_tokens = 200 })\n```\n\n"

func mustRender(t *testing.T, src string, opts Options) *Result {
	t.Helper()
	opts.Path, opts.Source = "t.md", []byte(src)
	res, err := Render(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A reply travels as its slot into what the next section sends, and its
// budget (the round's max_tokens) bounds the slot's tokens.
func TestReplySlotsAndTheirBudgets(t *testing.T) {
	src := h1 + "## Draft\n\nDraft a note about {{ args }}.\n\n## Polish\n\n```lua\nvar.draft = reply\n```\n\nPolish this draft: {{ var.draft }}\n"
	cat := []gateway.Model{{ID: "w1", Description: "a careful writing model", Context: 1000, PriceInput: 2, PriceOutput: 10}}
	res := mustRender(t, src, Options{Catalog: cat})
	if len(res.Rounds) != 2 || res.Stopped != "" {
		t.Fatalf("rounds %d, stopped %q", len(res.Rounds), res.Stopped)
	}
	polish := res.Rounds[1]
	if got := polish.Request.Messages[0].Content; got != "Polish this draft: ⟨reply of ## Draft⟩" {
		t.Errorf("Polish sends %q", got)
	}
	// Known tokens as the budgets count them: content, framing, priming.
	want := tokens.Count("Polish this draft: ") + tokens.MessageOverhead + tokens.ReplyPriming
	if polish.Tokens.Known != want {
		t.Errorf("known tokens %d, want %d", polish.Tokens.Known, want)
	}
	if len(polish.Tokens.Slots) != 1 || polish.Tokens.Slots[0].Max == nil || *polish.Tokens.Slots[0].Max != 200 {
		t.Fatalf("the reply slot's range: %+v", polish.Tokens.Slots)
	}
	if polish.Tokens.Max == nil || *polish.Tokens.Max != want+200 {
		t.Errorf("max tokens %v, want %d", polish.Tokens.Max, want+200)
	}
	// ⟨args⟩ has no bound: the Draft round and the run are unbounded.
	if res.Rounds[0].Tokens.Max != nil || res.Tokens.Max != nil {
		t.Errorf("⟨args⟩ should leave the maximum open: %+v %+v", res.Rounds[0].Tokens, res.Tokens)
	}
	c := polish.Cost
	if c == nil || c.InputMin != float64(want)*2/1e6 || c.InputMax == nil || *c.InputMax != float64(want+200)*2/1e6 || c.OutputMax == nil || *c.OutputMax != 200*10/1e6 {
		t.Errorf("cost %+v", c)
	}
	if res.Cost == nil || res.Cost.InputMax != nil {
		t.Errorf("run cost %+v: the Draft round's input is unbounded", res.Cost)
	}
}

// Where Lua needs a reply's value, the run stops with the rounds so far
// and says where; a round whose known part alone exceeds the context is
// flagged.
func TestStopsWhereAReplyValueIsNeeded(t *testing.T) {
	src := h1 + "## Ask\n\nHow many topics? Answer with a number.\n\n## Use\n\n```lua\nvar.count = tonumber(reply) + 1\n```\n\nWrite {{ var.count }} paragraphs.\n"
	line := strings.Count(src[:strings.Index(src, "var.count = ")], "\n") + 1
	res := mustRender(t, src, Options{Input: new(string)})
	if len(res.Rounds) != 1 || res.Stopped == "" || res.StoppedLine != line {
		t.Fatalf("rounds %d, stopped %q at %d", len(res.Rounds), res.Stopped, res.StoppedLine)
	}
	if !strings.Contains(res.Stopped, "actual value") || !strings.Contains(Text(res), fmt.Sprintf("stopped at line %d", line)) {
		t.Errorf("the stop does not explain itself:\n%s", Text(res))
	}
	long := h1 + "## Big\n\n" + strings.Repeat("word ", 300) + "\n"
	res = mustRender(t, long, Options{Catalog: []gateway.Model{{ID: "small", Description: "a careful writing model", Context: 100}}})
	if len(res.Rounds) != 1 || !res.Rounds[0].OverContext || !strings.Contains(Text(res), "exceeds the context of model small (100 tokens)") {
		t.Errorf("not flagged over the context:\n%s", Text(res))
	}
}

func TestWordDiff(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"a b c", "a x c", "a [-b-]{+x+} c"},
		{"one two", "one two three", "one two {+three+}"},
		{"same words", "same  words", ""},
		{"1 2 3 4 5 6 7 8 9 10 11 12 old 13", "1 2 3 4 5 6 7 8 9 10 11 12 new 13", "… 5 6 7 8 9 10 11 12 [-old-]{+new+} 13"},
	} {
		got := ""
		if ops := WordDiff(c.a, c.b); Changed(ops) {
			got = FormatWordDiff(ops)
		}
		if got != c.want {
			t.Errorf("WordDiff(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// Without a catalog every binding resolves to the synthetic model, also a
// description that is not on the binding's line.
func TestSyntheticCatalogBindsEveryDescription(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nlocal DESC = \"a careful analysis engine\"\nmodels.default(\"writer\", DESC)\nmodels.bind(\"fast\", \"quick drafts\")\n```\n\n## A\n\n```lua\nmodels.use(\"fast\")\n```\n\nHello.\n"
	res := mustRender(t, src, Options{})
	if res.Stopped != "" || len(res.Rounds) != 1 || res.Rounds[0].Request.Model != SyntheticModel || !res.Synthetic {
		t.Fatalf("stopped %q, rounds %d", res.Stopped, len(res.Rounds))
	}
}
