package program

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// A pathological prompt: every section calls a shared helper whose calls
// double at each of eight levels, in a loop of 64. Each chunk alone may
// spend its own bound; the prompt's budget bounds them all together, so
// the later sections are evaluated without inlining (top) and the
// evaluation's work stays within the prompt's budget plus the linear
// cost of the statements themselves.
func TestPromptWorkBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: p\ndescription: pathological\npromptforge: 1\n---\n\n# P\n\n```lua shared\nfunction f0(x) return x end\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&b, "function f%d(x) return f%d(x) .. f%d(x) end\n", i, i-1, i-1)
	}
	b.WriteString("```\n\n")
	const sections = 120
	for i := 0; i < sections; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal out = \"\"\nfor i = 1, 64 do\n  out = f7(\"s%d\")\nend\nlog(\"done\")\n```\n\n", i, i)
	}
	start := time.Now()
	p := Build(parse.Parse("p.md", []byte(b.String())))
	work, limited := 0, 0
	for _, c := range p.Chunks {
		if len(c.AST) == 0 {
			continue
		}
		f := p.Facts(c)
		work += f.Work()
		if f.Limited() {
			limited++
		}
	}
	t.Logf("%d sections: work %d, %d chunks cut short, %v", sections, work, limited, time.Since(start))
	if limit := value.MaxPromptWork + 50*sections; work > limit {
		t.Errorf("the prompt's evaluation spent %d, more than its budget %d", work, limit)
	}
	if limited < sections/2 {
		t.Errorf("%d of %d chunks were cut short by the budget, want most", limited, sections)
	}
}

// The generated 10,000-line prompt of the benchmarks spends a small part
// of the budget: a realistic prompt is evaluated in full.
func TestRealisticWithinBudget(t *testing.T) {
	p := Build(parse.Parse("big.md", parsetest.Realistic(10000)))
	work := 0
	for _, c := range p.Chunks {
		if len(c.AST) == 0 {
			continue
		}
		f := p.Facts(c)
		work += f.Work()
		if f.Limited() {
			t.Errorf("chunk at %d cut short by a bound of work", c.Span.Start)
		}
	}
	t.Logf("work %d of %d", work, value.MaxPromptWork)
	if work > value.MaxPromptWork/4 {
		t.Errorf("the generated prompt spends %d, more than a quarter of the budget %d", work, value.MaxPromptWork)
	}
}
