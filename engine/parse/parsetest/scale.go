// Package parsetest generates prompts for the scale tests and benchmarks
// of the packages that parse and check prompts: a realistic prompt of any
// size, prompts that once made a step of the parse or the analysis
// quadratic in its input, and a measure of how a cost grows with them.
package parsetest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Head is the frontmatter and H1 every generated prompt starts with.
const Head = "---\nname: g\ndescription: gen\npromptforge: 1\n---\n# G\n\n```lua\nmodels.default(\"w\", \"a writer\")\n```\n\n"

// Realistic builds a realistic prompt of about n lines: an H1 with
// bindings, then sections with Lua, prose, placeholders and local tools.
func Realistic(n int) []byte {
	var b strings.Builder
	b.WriteString("---\nname: big\ndescription: A large prompt for benchmarks.\npromptforge: 1\nmax_tool_iterations: 20\n---\n\n# Big\n\n")
	b.WriteString("```lua shared\nfunction fmt_item(x)\n  return \"- \" .. tostring(x)\nend\n```\n\n")
	b.WriteString("```lua\ntools.bind(\"search\", \"web search\", \"Search the web for current information\")\ntools.bind(\"fetch\", \"fetch pages\", \"Fetch a web page and return its text\")\ntools.always(\"search\")\nmodels.default(\"writer\", \"a careful writer\")\nmodels.bind(\"analyst\", \"a careful analyst\")\n```\n\n")
	for i := 0; strings.Count(b.String(), "\n") < n; i++ {
		fmt.Fprintf(&b, "## Step %d\n\n```lua\nmodels.use(\"analyst\")\ntools.add({\"fetch\"})\nlocal total = 0\nfor k = 1, 10 do\n  total = total + k\nend\nvar.step_%d = fmt_item(total)\ntools.add_local(\"count_%d\", \"Count the words of item %d\", { text = {\"string\", \"the text\"} }, function(args)\n  return tostring(#args.text)\nend)\n```\n\nSummarise {{ var.step_%d }} for {{ args }} using search and fetch.\nKeep it short and factual.\n\n```lua\nif tools.calls.fetch > 3 then\n  log(\"many fetches\")\nend\n```\n\n", i, i, i, i, i)
	}
	return []byte(b.String())
}

// EditVariants returns edits of a prompt's text, as an editor makes them
// while the server keeps the memos of the original: each line deleted in
// turn, a two-line paragraph inserted after the H1 heading (which moves
// every chunk after it), and the text with CRLF line breaks. The
// incremental tests analyse each after the original and compare with a
// cold analysis.
func EditVariants(orig string) []string {
	var variants []string
	lines := strings.SplitAfter(orig, "\n")
	for i := range lines {
		variants = append(variants, strings.Join(lines[:i], "")+strings.Join(lines[i+1:], ""))
	}
	if i := strings.Index(orig, "\n# "); i >= 0 {
		j := i + 1 + strings.Index(orig[i+1:], "\n")
		variants = append(variants, orig[:j+1]+"\nAn inserted paragraph\nof two lines.\n"+orig[j+1:])
	}
	return append(variants, strings.ReplaceAll(orig, "\n", "\r\n"))
}

// QuoteLines is one section of n `>` lines.
func QuoteLines(n int) []byte {
	return []byte(Head + "## S\n\n" + strings.Repeat("> quoted line\n", n))
}

// NestedList is a list nested n levels deep by indentation, one item per
// level.
func NestedList(n int) []byte {
	var b strings.Builder
	b.WriteString(Head + "## S\n\n")
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat("  ", i) + "- item\n")
	}
	return []byte(b.String())
}

// ConcatChain is one Lua chunk with `1 .. 1` n times, in chains of 100
// (a longer chain is refused by the parser's syntax-level limit).
func ConcatChain(n int) []byte {
	return []byte(Head + "## S\n\n```lua\n" + strings.Repeat("var.x = "+strings.Repeat("1 .. ", 100)+"1\n", n/100) + "```\n")
}

// ReportGrowth times op on small and large (about 4 times small) b.N
// times each and reports the cost per input byte of both and their ratio
// ("growth"): about 1 when op is linear in its input, about 4 when it is
// quadratic.
func ReportGrowth(b *testing.B, small, large []byte, op func([]byte)) {
	b.ReportAllocs()
	var ts, tl time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		op(small)
		t1 := time.Now()
		op(large)
		ts += t1.Sub(t0)
		tl += time.Since(t1)
	}
	ps := float64(ts.Nanoseconds()) / float64(b.N) / float64(len(small))
	pl := float64(tl.Nanoseconds()) / float64(b.N) / float64(len(large))
	b.ReportMetric(ps, "ns/byte@n")
	b.ReportMetric(pl, "ns/byte@4n")
	b.ReportMetric(pl/ps, "growth")
}

// EveryNth returns every nth variant, starting with the first: the sample
// the incremental tests check by default (all of them under -long).
func EveryNth(vs []string, n int) []string {
	var out []string
	for i := 0; i < len(vs); i += n {
		out = append(out, vs[i])
	}
	return out
}
