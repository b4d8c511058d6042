package program

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/cores"
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

// On a large prompt the sections are evaluated ahead on all cores
// (buildFacts); the facts must be those of the evaluation in order,
// which spends the prompt's budget section by section: the same work and
// the same chunks cut short, on a prompt that exhausts the budget and on
// a realistic one, as with one core.
func TestParallelFactsInOrder(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Log("one CPU: GOMAXPROCS above it still runs the workers")
	}
	var b strings.Builder
	b.WriteString("---\nname: p\ndescription: pathological\npromptforge: 1\n---\n\n# P\n\n```lua shared\nfunction f0(x) return x end\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&b, "function f%d(x) return f%d(x) .. f%d(x) end\n", i, i-1, i-1)
	}
	b.WriteString("```\n\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal out = \"\"\nfor i = 1, %d do\n  out = f7(\"s%d\")\nend\nvar.k%d = out\n```\n\n```lua\nlog(#var.k%d)\n```\n\n", i, 1+i%9*8, i, i, i)
	}
	for name, src := range map[string][]byte{"pathological": []byte(b.String()), "realistic": parsetest.Realistic(3000)} {
		type got struct {
			work    int
			limited bool
			ops     int
			exit    string
		}
		// The build counts as one busy core, as in the driver; others is
		// how many other analyses hold one meanwhile.
		facts := func(procs, others int) []got {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for range 1 + others {
				defer cores.Hold()()
			}
			helped := cores.Helped()
			parse.ResetCache() // no memo from the other run
			p := Build(parse.Parse("p.md", src))
			p.StartFacts()
			p.Facts(p.Chunks[0])
			if h := cores.Helped() - helped; (h > 0) != (procs > 1+others) {
				t.Errorf("%s: %d helpers on %d cores, %d of them busy", name, h, procs, 1+others)
			}
			if w := workers(len(p.Chunks)); (w > 1) != (procs > 1) {
				t.Fatalf("%s: %d workers with GOMAXPROCS %d", name, w, procs)
			}
			var out []got
			for _, c := range p.Chunks {
				if len(c.AST) == 0 {
					continue
				}
				f := p.Facts(c)
				out = append(out, got{f.Work(), f.Limited(), len(f.Ops), strings.Join(f.Exit.Names(), ",")})
			}
			return out
		}
		one, four, busy := facts(1, 0), facts(4, 0), facts(4, 3)
		if len(one) != len(four) || len(one) != len(busy) {
			t.Fatalf("%s: %d chunks, then %d, then %d", name, len(one), len(four), len(busy))
		}
		limited := 0
		for i := range one {
			if one[i] != four[i] {
				t.Errorf("%s: chunk %d: %+v with one core, %+v with four", name, i, one[i], four[i])
			}
			if one[i] != busy[i] {
				t.Errorf("%s: chunk %d: %+v with one core, %+v with four all busy", name, i, one[i], busy[i])
			}
			if one[i].limited {
				limited++
			}
		}
		if name == "pathological" && limited == 0 {
			t.Errorf("%s: no chunk cut short by the budget", name)
		}
	}
}
