package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// The benchmarks report their cost as a ratio to a baseline measured in
// the same run (a bare gopher-lua state doing the same Lua work), so the
// numbers mean something on a shared, noisy machine:
//
//	go test -run '^$' -bench . -benchtime 20x ./engine/run/

// bareState is the baseline unit: a default gopher-lua state (all
// libraries, no sandbox) that runs proto once.
func bareState(proto *lua.FunctionProto) {
	L := lua.NewState()
	if proto != nil {
		L.Push(L.NewFunctionFromProto(proto))
		if err := L.PCall(0, 0, nil); err != nil {
			panic(err)
		}
	}
	L.Close()
}

func compile(b *testing.B, src string) *lua.FunctionProto {
	stmts, err := luaparse.Parse(strings.NewReader(src), "b")
	if err != nil {
		b.Fatal(err)
	}
	proto, err := lua.Compile(stmts, "b")
	if err != nil {
		b.Fatal(err)
	}
	return proto
}

func timeIt(n int, f func()) time.Duration {
	start := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	return time.Since(start) / time.Duration(n)
}

func mustParse(b *testing.B, src string) *parse.Prompt {
	p := parse.Parse("bench.md", []byte("---\nname: b\ndescription: d\npromptforge: 1\n---\n\n# Bench\n\n"+src))
	if len(p.Errors) > 0 {
		b.Fatal(p.Errors[0])
	}
	return p
}

func report(b *testing.B, per, base time.Duration, unit string) {
	b.ReportMetric(float64(per.Nanoseconds())/1e3, "µs/"+unit)
	b.ReportMetric(float64(base.Nanoseconds())/1e3, "µs/baseline")
	b.ReportMetric(float64(per)/float64(base), "x-baseline")
}

// BenchmarkSectionVM measures creating a full section VM (sandbox,
// sys, var, tools, models, log, store, control functions, shared replay)
// against a bare lua.NewState.
func BenchmarkSectionVM(b *testing.B) {
	p := mustParse(b, "```lua shared\nfunction helper(x) return x end\n```\n\n## A\n\n```lua\nreturn 1\n```\n")
	r, err := start(p, &Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.budget.Stop()
	sec := p.Sections[0]
	vars := &node{}
	base := timeIt(b.N, func() { bareState(nil) })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		vm, err := r.newVM(context.Background(), vmSection, sec, &frame{}, 1, vars, nil)
		if err != nil {
			b.Fatal(err)
		}
		vm.close()
	}
	b.StopTimer()
	report(b, b.Elapsed()/time.Duration(b.N), base, "vm")
}

// BenchmarkWalk1000 runs a walk of 1,000 sections, each a small Lua block,
// against 1,000 bare states running the same chunk.
func BenchmarkWalk1000(b *testing.B) {
	const n = 1000
	p := mustParse(b, walkPrompt(n))
	chunk := compile(b, "local t = {} t.n = (t.n or 0) + 1")
	base := timeIt(b.N, func() {
		for i := 0; i < n; i++ {
			bareState(chunk)
		}
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), p, Config{Limits: Limits{MaxSectionEntries: n + 1}})
		if err != nil || res != "1000" {
			b.Fatalf("%q %v", res, err)
		}
	}
	b.StopTimer()
	report(b, b.Elapsed()/time.Duration(b.N), base, "walk")
}

// walkPrompt is n sections that each count themselves in var.n, then a
// section that returns the count.
func walkPrompt(n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "## S%d\n\n```lua\nvar.n = (var.n or 0) + 1\n```\n\n", i)
	}
	sb.WriteString("## End\n\n```lua\nreturn var.n\n```\n")
	return sb.String()
}

// BenchmarkFanout1000 runs one fanout of 1,000 pure-Lua arms (8 at a
// time) against 1,000 bare states run one after the other.
func BenchmarkFanout1000(b *testing.B) {
	const n = 1000
	p := mustParse(b, "## Main\n\n```lua\nlocal items = {}\nfor i = 1, 1000 do items[i] = i end\n"+
		"local rs = fanout(\"### W\", items)\nreturn #rs .. \" \" .. rs[1000].text\n```\n\n### W\n\n---\n\n```lua\nreturn item * 2\n```\n")
	chunk := compile(b, "local item = 3 return item * 2")
	base := timeIt(b.N, func() {
		for i := 0; i < n; i++ {
			bareState(chunk)
		}
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), p, Config{})
		if err != nil || res != "1000 2000" {
			b.Fatalf("%q %v", res, err)
		}
	}
	b.StopTimer()
	report(b, b.Elapsed()/time.Duration(b.N), base, "fanout")
}
