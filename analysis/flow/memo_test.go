package flow

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
	"github.com/yuin/gopher-lua/ast"
)

func sameFacts(a, b *chunkFacts) bool {
	set := func(calls []*ast.FuncCallExpr) map[*ast.FuncCallExpr]int {
		m := map[*ast.FuncCallExpr]int{}
		for _, c := range calls {
			m[c]++
		}
		return m
	}
	return a.ast0 == b.ast0 && reflect.DeepEqual(set(a.calls), set(b.calls)) && slices.Equal(a.pcalls, b.pcalls) &&
		a.end == b.end && a.dead == b.dead && a.deadLine == b.deadLine
}

// dump prints an analysis with absolute positions and section names.
func dump(r *Result) string {
	var b strings.Builder
	for _, c := range r.Prog.Chunks {
		fmt.Fprintf(&b, "chunk %v end=%d\n", c.Span, r.EndOf(c.Chunk))
	}
	for _, c := range r.Prog.Calls {
		fmt.Fprintf(&b, "call %s %v straight=%v reached=%v\n", c.Path, r.Prog.CallSpan(c), r.Straight(c), r.Reached(c))
	}
	fmt.Fprintf(&b, "dead %v caught %v h1ends=%v default=%v\n", r.dead, r.caught, r.H1Ends, r.DefaultModel)
	var sec func([]*parse.Section)
	sec = func(ss []*parse.Section) {
		for _, s := range ss {
			fmt.Fprintf(&b, "section %s known=%v/%v/%v may=%v/%v/%v\n", s.Address(),
				r.Known.Entered.Has(s), r.Known.Walked.Has(s), r.Known.Arm.Has(s), r.May.Entered.Has(s), r.May.Walked.Has(s), r.May.Arm.Has(s))
			sec(s.Children)
		}
	}
	sec(r.Prog.Prompt.Sections)
	for _, c := range r.Cycles {
		fmt.Fprintf(&b, "cycle %v %v\n", len(c.Sections), r.Prog.CallSpan(c.Close))
	}
	for _, c := range r.Recursions {
		fmt.Fprintf(&b, "recursion %v %v\n", len(c.Sections), r.Prog.CallSpan(c.Call))
	}
	return b.String()
}

func analyse(name, text string) (*Result, string) {
	r := Analyze(program.Build(parse.Parse(name, []byte(text))))
	return r, dump(r)
}

// TestFactsMemo checks the facts memoised per chunk against fresh ones,
// and whole analyses with the memos of another text in place against
// analyses from empty caches: each analyzer testdata file is edited (a
// paragraph inserted after the H1 heading, which moves every chunk;
// every line deleted in turn; CRLF line breaks) and analysed after the
// original.
func TestFactsMemo(t *testing.T) {
	files := analysistest.Corpus(t)
	defer parse.ResetCache()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		orig := string(b)
		variants := parsetest.EditVariants(orig)
		if !testflag.Long() {
			variants = parsetest.EveryNth(variants, 4)
		}
		for _, v := range variants {
			parse.ResetCache()
			_, want := analyse(f, v)
			analyse(f, orig)
			r, got := analyse(f, v)
			if got != want {
				t.Fatalf("%s: edited text:\n%s\nwarm analysis:\n%s\ncold analysis:\n%s", f, v, got, want)
			}
			for _, c := range r.Prog.Chunks {
				if len(c.AST) > 0 && !sameFacts(factsOf(c.Chunk), computeFacts(c.Chunk)) {
					t.Fatalf("%s: memoised facts of %s differ from fresh ones", f, c.Label)
				}
			}
		}
	}
}
