package parse

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	luaparse "github.com/yuin/gopher-lua/parse"
)

// GenPrompt builds a prompt of about n lines: sections of ~30 lines, half
// of them Lua. It returns the text and the Lua chunk sources.
func genPrompt(n int) (string, []string) {
	var b strings.Builder
	var chunks []string
	b.WriteString("---\nname: bench\ndescription: generated\npromptforge: 1\n---\n# Bench\n\n```lua\nmodels.default(\"w\", \"a writer\")\ntools.bind(\"search\", \"web search\")\n```\n\nIntro prose for the model.\n\n")
	lines := 14
	for s := 0; lines < n; s++ {
		fmt.Fprintf(&b, "## Section %d\n\n", s)
		var c strings.Builder
		fmt.Fprintf(&c, "local acc = {}\nfor i = 1, %d do\n  acc[#acc + 1] = string.format(\"%%d:%%s\", i, tostring(var.x))\nend\n", s%7+1)
		c.WriteString("local function helper(t)\n  local n = 0\n  for _, v in ipairs(t) do\n    n = n + #v\n  end\n  return n\nend\n")
		c.WriteString("var.total = (var.total or 0) + helper(acc)\nif var.total > 1000 then\n  log(\"big\")\nend\nreply = nil")
		chunks = append(chunks, c.String())
		b.WriteString("```lua\n" + c.String() + "\n```\n\n")
		b.WriteString("Summarise the findings so far in {{ var.total }} words.\nKeep it short, cite sources, and avoid speculation.\n\n- first point\n- second point\n\nThen continue with the next topic.\n\n")
		lines += 2 + 2 + 16 + 10
	}
	return b.String(), chunks
}

func benchParse(b *testing.B, n int, cold bool) {
	src, chunks := genPrompt(n)
	data := []byte(src)
	if p := Parse("b.md", data); len(p.Errors) != 0 {
		b.Fatalf("generated prompt has errors: %v", p.Errors[0].Message)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	parseTimes := make([]time.Duration, 0, b.N)
	var luaTotal time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			ResetCache()
		}
		t0 := time.Now()
		Parse("b.md", data)
		t1 := time.Now()
		for _, c := range chunks {
			_, _ = luaparse.Parse(strings.NewReader(c), "c")
		}
		luaTotal += time.Since(t1)
		parseTimes = append(parseTimes, t1.Sub(t0))
	}
	b.StopTimer()
	sort.Slice(parseTimes, func(i, j int) bool { return parseTimes[i] < parseTimes[j] })
	var sum time.Duration
	for _, d := range parseTimes {
		sum += d
	}
	med := parseTimes[len(parseTimes)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "ms-median-parse")
	b.ReportMetric(float64(len(data))/1e6/(float64(sum.Seconds())/float64(b.N)), "MB/s-parse")
	b.ReportMetric(float64(sum)/float64(luaTotal), "x-gopherlua-only")
}

// BenchmarkParse parses generated prompts and reports the median parse
// time, throughput, and the ratio to gopher-lua's own parse of the same Lua
// chunks (measured in the same loop). "cold" empties the chunk cache before
// every parse (a file opened for the first time, every chunk parsed and
// compiled); "warm" is the editor's case of re-parsing after an edit.
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("lines=%d/cold", n), func(b *testing.B) { benchParse(b, n, true) })
		b.Run(fmt.Sprintf("lines=%d/warm", n), func(b *testing.B) { benchParse(b, n, false) })
	}
}

// BenchmarkParseEdit parses a 10,000-line prompt after a keystroke in a
// random chunk, as the language server does, three ways in the same run:
// "parse" is Parse (every chunk and region looked up in the caches by
// its text), "after" is ParseAfter with the previous version's Reuse
// (each found by position, its text compared), "edited" is ParseEdited
// told which bytes changed (the unchanged ones taken without comparing).
// It reports each median and after/parse, edited/after.
func BenchmarkParseEdit(b *testing.B) {
	src, _ := genPrompt(10000)
	var starts []int
	for i := 0; ; {
		j := strings.Index(src[i:], "local acc = {}")
		if j < 0 {
			break
		}
		starts = append(starts, i+j+len("local acc"))
		i += j + 1
	}
	version := func(i int) ([]byte, int) { // a space typed in chunk i % len(starts), or none
		at := starts[(i*7919)%len(starts)]
		return []byte(src[:at] + strings.Repeat(" ", i%2) + src[at:]), at
	}
	text0, _ := version(0)
	prev := Parse("b.md", text0).Reuse()
	var plain, after, edited []time.Duration
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		// Each way goes first in turn: the first parses the edited chunk,
		// the others find it in the cache.
		text, at := version(i)
		_, was := version(i - 1)
		// Bytes before both edits' places are unchanged, and after them.
		ch := Change{Before: min(at, was), After: len(text) - max(at, was) - 1}
		var p *Prompt
		for k := range 3 {
			t0 := time.Now()
			switch (i + k) % 3 {
			case 0:
				Parse("b.md", text)
				plain = append(plain, time.Since(t0))
			case 1:
				ParseAfter(prev, "b.md", text)
				after = append(after, time.Since(t0))
			default:
				p = ParseEdited(prev, ch, "b.md", text)
				edited = append(edited, time.Since(t0))
			}
		}
		prev = p.Reuse()
	}
	b.StopTimer()
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	mp, ma, me := med(plain), med(after), med(edited)
	b.ReportMetric(float64(mp.Microseconds())/1000, "parse-ms")
	b.ReportMetric(float64(ma.Microseconds())/1000, "after-ms")
	b.ReportMetric(float64(me.Microseconds())/1000, "edited-ms")
	b.ReportMetric(float64(ma)/float64(mp), "after/parse")
	b.ReportMetric(float64(me)/float64(ma), "edited/after")
}

// BenchmarkParseEdited is ParseEdited alone on the versions typing
// makes in a 10,000-line prompt, for instruction counts and allocations
// per edit: a space typed in a chunk of a random section, then deleted
// again, each version parsed with the previous one's Reuse and told
// which bytes changed (as the language server does).
func BenchmarkParseEdited(b *testing.B) {
	src, _ := genPrompt(10000)
	var starts []int
	for i := 0; ; {
		j := strings.Index(src[i:], "local acc = {}")
		if j < 0 {
			break
		}
		starts = append(starts, i+j+len("local acc"))
		i += j + 1
	}
	const places = 64
	typed := make([][]byte, places)
	ats := make([]int, places)
	for i := range typed {
		ats[i] = starts[(i*7919)%len(starts)]
		typed[i] = []byte(src[:ats[i]] + " " + src[ats[i]:])
	}
	orig := []byte(src)
	prev := Parse("b.md", orig).Reuse()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Even i types at a place, odd i deletes what it typed.
		k := (i / 2) % places
		text := typed[k]
		if i%2 == 1 {
			text = orig
		}
		ch := Change{Before: ats[k], After: len(orig) - ats[k]}
		prev = ParseEdited(prev, ch, "b.md", text).Reuse()
	}
}
