package flow_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// jumpSections is n sections, each with a Lua fence that jumps to the
// next and prose: the section references the flow analysis and the
// checker resolve.
func jumpSections(n int) []byte {
	var b strings.Builder
	b.WriteString(parsetest.Head)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nvar.x = %d\nif var.x > 3 then jump(\"## S%d\") end\n```\n\nSay {{ var.x }}.\n\n", i, i, (i+1)%n)
	}
	return []byte(b.String())
}

var scaleInputs = []struct {
	name        string
	gen         func(int) []byte
	bench, test int
}{
	{"jumpSections", jumpSections, 5000, 300},
	{"quoteLines", parsetest.QuoteLines, 25000, 2000},
	{"nestedList", parsetest.NestedList, 500, 100},
	{"concatChain", parsetest.ConcatChain, 50000, 2000},
}

func check(data []byte) {
	parse.ResetCache()
	checker.Check(parse.Parse("g.md", data), nil)
}

// BenchmarkCheckScale reports the cost of parse plus every analyzer per
// input byte at n and 4n and their ratio ("growth"): about 1 when the
// analysis is linear in the input, about 4 when it is quadratic.
func BenchmarkCheckScale(b *testing.B) {
	for _, in := range scaleInputs {
		b.Run(in.name, func(b *testing.B) {
			parsetest.ReportGrowth(b, in.gen(in.bench), in.gen(4*in.bench), check)
		})
	}
}

// allocatedPerByte is the bytes the check of data allocates per input
// byte.
func allocatedPerByte(data []byte) float64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	check(data)
	runtime.ReadMemStats(&m1)
	return float64(m1.TotalAlloc-m0.TotalAlloc) / float64(len(data))
}

// TestCheckScaleAllocs catches an analysis step that became quadratic
// again without timing anything: the bytes allocated per input byte must
// not grow between n and 4n (resolving each section reference used to
// copy the caller's visible set).
func TestCheckScaleAllocs(t *testing.T) {
	for _, in := range scaleInputs {
		t.Run(in.name, func(t *testing.T) {
			small, large := in.gen(in.test), in.gen(4*in.test)
			check(small) // warm up package-level state
			ps, pl := allocatedPerByte(small), allocatedPerByte(large)
			if pl > 1.5*ps {
				t.Errorf("bytes allocated per input byte grow from %.0f at n=%d to %.0f at 4n", ps, in.test, pl)
			}
		})
	}
}
