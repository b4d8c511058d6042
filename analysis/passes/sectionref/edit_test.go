package sectionref_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/passes/sectionref"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// targetsPrompt builds a prompt of about n lines whose sections hand over
// to each other with execute, jump and fanout targets, one bad.
func targetsPrompt(n int) []byte {
	var b strings.Builder
	b.WriteString("---\nname: t\ndescription: Targets.\npromptforge: 1\n---\n\n# T\n\n```lua\nmodels.default(\"w\", \"a writer\")\n```\n\n")
	for i := 0; strings.Count(b.String(), "\n") < n; i++ {
		fmt.Fprintf(&b, "## Step %d\n\n```lua\nlocal total = 0\nfor k = 1, 10 do\n  total = total + k\nend\nvar.s%d = execute(\"## Step %d\")\nif total > 3 then\n  jump(\"## Step %d\")\nend\nlocal items = list_from_section(\"## Items\")\nfanout(\"## Worker\", items)\n```\n\nSummarise {{ var.s%d }}.\n\n", i, i, i+1, i+2, i)
	}
	b.WriteString("## Items\n\n---\n\n- a\n- b\n\n## Worker\n\n---\n\nWork on {{ args }}.\n")
	return []byte(b.String())
}

// BenchmarkEditTargets10k measures what sectionref adds to the analysis
// of a 10,000-line prompt full of section targets right after an edit in
// one chunk (parse and memos warm): "flow" runs the analyzers sectionref
// requires, "sectionref" those and sectionref, on the same edits in the
// same run; the difference is sectionref's cost per edit. Compare
// allocations (-benchmem) or instructions (callgrind), not times, on a
// shared machine.
func BenchmarkEditTargets10k(b *testing.B) {
	src := targetsPrompt(10000)
	at := bytes.Index(src, []byte("total = total + k"))
	if at < 0 {
		b.Fatal("no edit point")
	}
	at += len("total = total + ")
	for _, set := range []struct {
		name string
		as   []*analysis.Analyzer
	}{{"flow", []*analysis.Analyzer{flow.Analyzer}}, {"sectionref", []*analysis.Analyzer{sectionref.Analyzer}}} {
		b.Run(set.name, func(b *testing.B) {
			parse.ResetCache()
			if _, err := analysis.Run(context.Background(), parse.Parse("t.md", src), set.as, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				edited := append(append(append([]byte{}, src[:at]...), fmt.Appendf(nil, "k + %d", i)...), src[at+1:]...)
				p := parse.Parse("t.md", edited)
				b.StartTimer()
				if _, err := analysis.Run(context.Background(), p, set.as, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEditsMatchCold: after each edit elsewhere in the prompt (a heading
// renamed, a section turned into a list, a fanout caller added, a
// heading moved a level down), a section whose own text did not change
// reports what a cold analysis of the edited prompt reports: its
// memoised findings are not reused across a change they depend on.
func TestEditsMatchCold(t *testing.T) {
	base := "---\nname: t\ndescription: Targets.\npromptforge: 1\n---\n\n# T\n\n" +
		"## A\n\n```lua\nexecute(\"## B\")\nlocal xs = list_from_section(\"## L\")\nfanout(\"## W\", xs)\n```\n\n" +
		"## B\n\n```lua\nreturn 1\n```\n\n" +
		"## L\n\n---\n\n- a\n- b\n\n" +
		"## W\n\n---\n\n```lua\nexecute(\"## C\")\nexecute(\"## A\")\n```\n\n" +
		"## C\n\n---\n\nText.\n\n" +
		"## D\n\n```lua\nlocal n = 0\n```\n"
	edits := []struct{ old, new string }{
		{"", ""},
		{"## B\n\n```lua\nreturn 1", "## Bee\n\n```lua\nreturn 1"},
		{"- a\n- b\n", "Not a list.\n"},
		{"local n = 0", "fanout(\"## W\", {\"x\"})"},
		{"## C\n\n---", "### C\n\n---"},
		{"## W\n\n---", "### W\n\n---"},
	}
	run := func(src string) []string {
		p := parse.Parse("t.md", []byte(src))
		ds, err := analysis.Run(context.Background(), p, []*analysis.Analyzer{sectionref.Analyzer}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, fmt.Sprintf("%v %s %s %v", d.Span, d.Code, d.Message, d.Related))
		}
		return out
	}
	parse.ResetCache()
	run(base)
	for _, e := range edits {
		src := strings.Replace(base, e.old, e.new, 1)
		if src == base && e.old != "" {
			t.Fatalf("edit %q applies nowhere", e.old)
		}
		warm := run(src)
		parse.ResetCache()
		cold := run(src)
		if strings.Join(warm, "\n") != strings.Join(cold, "\n") {
			t.Errorf("after %q -> %q:\nincremental:\n%s\ncold:\n%s", e.old, e.new, strings.Join(warm, "\n"), strings.Join(cold, "\n"))
		}
		run(base) // memos of the base again
	}
}
