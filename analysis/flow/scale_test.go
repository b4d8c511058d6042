package flow_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

const scaleHead = "---\nname: g\ndescription: gen\npromptforge: 1\n---\n# G\n\n```lua\nmodels.default(\"w\", \"a writer\")\n```\n\n"

// jumpSections is n sections, each with a Lua fence that jumps to the
// next and prose: the section references the flow analysis and the
// checker resolve.
func jumpSections(n int) []byte {
	var b strings.Builder
	b.WriteString(scaleHead)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nvar.x = %d\nif var.x > 3 then jump(\"## S%d\") end\n```\n\nSay {{ var.x }}.\n\n", i, i, (i+1)%n)
	}
	return []byte(b.String())
}

func quoteLines(n int) []byte {
	return []byte(scaleHead + "## S\n\n" + strings.Repeat("> quoted line\n", n))
}

// concatChain is `1 .. 1` n times in chains of 100 (a chain longer than
// the syntax-level limit is refused by the parser).
func concatChain(n int) []byte {
	return []byte(scaleHead + "## S\n\n```lua\n" + strings.Repeat("var.x = "+strings.Repeat("1 .. ", 100)+"1\n", n/100) + "```\n")
}

func nestedList(n int) []byte {
	var b strings.Builder
	b.WriteString(scaleHead + "## S\n\n")
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat("  ", i) + "- item\n")
	}
	return []byte(b.String())
}

var scaleInputs = []struct {
	name        string
	gen         func(int) []byte
	bench, test int
}{
	{"jumpSections", jumpSections, 5000, 300},
	{"quoteLines", quoteLines, 25000, 2000},
	{"nestedList", nestedList, 500, 100},
	{"concatChain", concatChain, 50000, 2000},
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
			small, large := in.gen(in.bench), in.gen(4*in.bench)
			b.ReportAllocs()
			var ts, tl time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				check(small)
				t1 := time.Now()
				check(large)
				ts += t1.Sub(t0)
				tl += time.Since(t1)
			}
			ps := float64(ts.Nanoseconds()) / float64(b.N) / float64(len(small))
			pl := float64(tl.Nanoseconds()) / float64(b.N) / float64(len(large))
			b.ReportMetric(ps, "ns/byte@n")
			b.ReportMetric(pl, "ns/byte@4n")
			b.ReportMetric(pl/ps, "growth")
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
