package program

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// TestBuildLinksAndWrites checks what Build derives from the memoised
// chunk models, on every analyzer testdata prompt, cold and rebuilt after
// an edit: each HandlerOf is an add_local call record of the same program
// (not of an earlier build), and each unit's GlobalWrites is the set of
// globals its chunks assign (nil when none), shared or merged from the
// chunk models without changing them.
func TestBuildLinksAndWrites(t *testing.T) {
	own, _ := filepath.Glob("testdata/*.md")
	files := append(analysistest.Corpus(t), own...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		// An edit inside the first chunk, so the rebuild reuses the other
		// chunks' models.
		edited := strings.Replace(text, "```lua\n", "```lua\nlocal edited = 1\n", 1)
		for _, v := range []string{text, edited, text} {
			p := Build(parse.Parse(f, []byte(v)))
			checkBuild(t, f, p)
			checkHandlers(t, f, p)
		}
	}
	// Two chunks with one AST (one gets a private copy), the second a
	// handler's add_local call.
	dup := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua shared\nfunction h() x = 1 return \"\" end\n```\n\n" +
		"## A\n\n```lua\ntools.add_local(\"a\", \"d\", {}, h)\n```\n\n### A\n\n```lua\ntools.add_local(\"a\", \"d\", {}, h)\n```\n"
	p := Build(parse.Parse("dup.md", []byte(dup)))
	checkBuild(t, "dup.md", p)
	checkHandlers(t, "dup.md", p)
	if len(p.Calls) != 2 || p.Calls[0].Expr == p.Calls[1].Expr {
		t.Errorf("dup.md: %d calls, want 2 with their own AST", len(p.Calls))
	}
	for _, g := range p.Globals {
		if g.Expr.Value == "x" && p.HandlerOf(g) != p.Calls[0] {
			t.Errorf("dup.md: x = 1 runs in the handler of %v, want the first add_local", p.HandlerOf(g))
		}
	}
}

func checkBuild(t *testing.T, name string, p *Program) {
	t.Helper()
	// Each unit's Calls are its chunks' calls in its order (a run of
	// p.Calls or a copy), capacity-limited so that an append copies.
	for _, u := range append([]*Unit{p.H1}, p.Sections...) {
		var want []*Call
		for _, c := range u.Chunks {
			want = append(want, p.CallsIn(c)...)
		}
		if !slices.Equal(u.Calls, want) || cap(u.Calls) != len(u.Calls) {
			t.Errorf("%s: unit %v: %d calls (capacity %d), want its chunks' %d", name, u.Section, len(u.Calls), cap(u.Calls), len(want))
		}
	}
	own := map[*Call]bool{}
	for _, c := range p.Calls {
		own[c] = true
	}
	checkHandler := func(what string, h *Call) {
		if h == nil {
			return
		}
		if !own[h] {
			t.Errorf("%s: %s handler is not a call of this program", name, what)
		} else if !isAddLocalRoot(h.Path, h.Expr) || p.CallOf(h.Expr) != h {
			t.Errorf("%s: %s handler is %s, not an add_local root", name, what, h.Path)
		}
	}
	for _, c := range p.Calls {
		checkHandler("call "+c.Path, p.HandlerOf(c))
	}
	for _, g := range p.Globals {
		checkHandler("global "+g.Path, p.HandlerOf(g))
	}
	for _, u := range append([]*Unit{p.H1}, p.Sections...) {
		in := map[*Chunk]bool{}
		for _, c := range u.Chunks {
			in[c] = true
		}
		var want map[string]bool
		for _, g := range p.Globals {
			if in[p.ChunkOf(g)] && g.Write && !g.FieldWrite {
				if want == nil {
					want = map[string]bool{}
				}
				want[g.Expr.Value] = true
			}
		}
		if !maps.Equal(u.GlobalWrites, want) || (want == nil) != (u.GlobalWrites == nil) {
			t.Errorf("%s: unit %v writes %v, want %v", name, u.Section, u.GlobalWrites, want)
		}
	}
	for _, c := range p.Chunks {
		if m := c.model; m != nil {
			set := map[string]bool{}
			for _, w := range m.writes {
				set[w] = true
			}
			if len(m.writes) == 0 {
				set = nil
			}
			if !maps.Equal(m.writeSet, set) {
				t.Errorf("%s: chunk %s memoised writes %v, set %v", name, c.Label, m.writes, m.writeSet)
			}
		}
	}
}

// checkHandlers compares handlerFinder (replaying memoised events) with
// a direct walk of the handler bodies.
func checkHandlers(t *testing.T, name string, p *Program) {
	t.Helper()
	got, want := map[*ast.FunctionExpr]*ast.FuncCallExpr{}, map[*ast.FunctionExpr]*ast.FuncCallExpr{}
	private := map[*Chunk]bool{}
	for _, c := range p.Chunks {
		private[c] = c.model != nil && c.Memo(modelKey{}) != c.model
	}
	facts := make([]*chunkFacts, len(p.Chunks))
	fb := newFactsBuilder() // one for every chunk, as a build's worker reuses it
	for i, c := range p.Chunks {
		facts[i] = factsOf(c, private, fb)
	}
	hf := &handlerFinder{handlerOf: got, chunkFacts: facts, marked: make([]bool, len(p.Chunks))}
	for _, u := range append([]*Unit{p.H1}, p.Sections...) {
		hf.find(u.Chunks)
		walkHandlers(u.Chunks, want)
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: handlers %s, want %s", name, fmtHandlers(got), fmtHandlers(want))
	}
}

func fmtHandlers(m map[*ast.FunctionExpr]*ast.FuncCallExpr) string {
	var b strings.Builder
	for fe, c := range m {
		fmt.Fprintf(&b, "[function at %d: call at %d] ", fe.Line(), c.Line())
	}
	return b.String()
}

// walkHandlers is handler detection by walking the AST (Inspect) for
// every marked body.
func walkHandlers(chunks []*Chunk, handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr) {
	type root struct {
		call *ast.FuncCallExpr
		arg  ast.Expr
	}
	var roots []root
	funcs := map[string][]*ast.FunctionExpr{}
	for _, c := range chunks {
		Inspect(c.AST, func(n any) bool {
			switch n := n.(type) {
			case *ast.FuncDefStmt:
				if n.Name != nil && n.Name.Func != nil {
					if path, ok := Path(n.Name.Func); ok {
						funcs[path] = append(funcs[path], n.Func)
					}
				}
			case *ast.LocalAssignStmt:
				for i, name := range n.Names {
					if i < len(n.Exprs) {
						if fe, ok := n.Exprs[i].(*ast.FunctionExpr); ok {
							funcs[name] = append(funcs[name], fe)
						}
					}
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if i < len(n.Rhs) {
						if fe, ok := n.Rhs[i].(*ast.FunctionExpr); ok {
							if path, ok := Path(l); ok {
								funcs[path] = append(funcs[path], fe)
							}
						}
					}
				}
			case *ast.FuncCallExpr:
				if path, ok := Path(n.Func); ok && path == "tools.add_local" && len(n.Args) >= 4 {
					roots = append(roots, root{n, n.Args[3]})
				}
			}
			return true
		})
	}
	var mark func(fe *ast.FunctionExpr, call *ast.FuncCallExpr)
	mark = func(fe *ast.FunctionExpr, call *ast.FuncCallExpr) {
		if _, done := handlerOf[fe]; done {
			return
		}
		handlerOf[fe] = call
		Inspect(fe.Stmts, func(n any) bool {
			switch n := n.(type) {
			case *ast.FunctionExpr:
				mark(n, call)
			case *ast.FuncCallExpr:
				if path, ok := Path(n.Func); ok {
					for _, g := range funcs[path] {
						mark(g, call)
					}
				}
				for _, a := range n.Args {
					if path, ok := Path(a); ok {
						for _, g := range funcs[path] {
							mark(g, call)
						}
					}
				}
			}
			return true
		})
	}
	for _, r := range roots {
		if fe, ok := r.arg.(*ast.FunctionExpr); ok {
			mark(fe, r.call)
		} else if path, ok := Path(r.arg); ok {
			for _, g := range funcs[path] {
				mark(g, r.call)
			}
		}
	}
}

// TestRecordsSharedBetweenBuilds checks that a rebuild after an edit that
// moves later chunks reuses their records, and that each Program still
// resolves a shared record to its own chunk and spans: the older Program
// is unchanged by the newer build.
func TestRecordsSharedBetweenBuilds(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nx = 1\n```\n\n" +
		"## A\n\n```lua\nlocal n = log(\"a\")\n```\n\nText.\n\n## B\n\n```lua\ntools.add_local(\"t\", \"d\", {}, function() y = log(\"b\") return \"\" end)\n```\n"
	old := Build(parse.Parse("s.md", []byte(src)))
	before := dumpSpans(old)
	edited := strings.Replace(src, "x = 1", "x = 12345", 1)
	p := Build(parse.Parse("s.md", []byte(edited)))
	if len(p.Calls) != len(old.Calls) || len(p.Globals) != len(old.Globals) || len(p.Locals) != len(old.Locals) {
		t.Fatalf("record counts changed: %d/%d/%d -> %d/%d/%d", len(old.Calls), len(old.Globals), len(old.Locals), len(p.Calls), len(p.Globals), len(p.Locals))
	}
	shared := 0
	for i, c := range p.Calls {
		if c != old.Calls[i] {
			continue
		}
		shared++
		if p.ChunkOf(c) == old.ChunkOf(c) || p.ChunkOf(c).Section == old.ChunkOf(c).Section {
			t.Errorf("call %s: both programs resolve it to one chunk", c.Path)
		}
		if p.NameSpan(c).Start != old.NameSpan(c).Start+4 {
			t.Errorf("call %s: name at %v after the edit, %v before; want 4 bytes later", c.Path, p.NameSpan(c), old.NameSpan(c))
		}
		if h := p.HandlerOf(c); h != nil && p.CallOf(h.Expr) != h {
			t.Errorf("call %s: handler is not a call of its program", c.Path)
		}
	}
	if shared != 3 { // log("a"), tools.add_local and log("b"); the edited chunk has none
		t.Errorf("%d calls shared between builds, want 3", shared)
	}
	if after := dumpSpans(old); after != before {
		t.Errorf("the older program changed with the newer build:\n%s\nwant\n%s", after, before)
	}
	if cold := dumpSpans(Build(parse.Parse("s.md", []byte(edited)))); dumpSpans(p) != cold {
		t.Errorf("rebuilt program differs from a cold build:\n%s\nwant\n%s", dumpSpans(p), cold)
	}
}

func dumpSpans(p *Program) string {
	var b strings.Builder
	for _, c := range p.Calls {
		h := source.Span{}
		if hc := p.HandlerOf(c); hc != nil {
			h = p.NameSpan(hc)
		}
		fmt.Fprintf(&b, "call %s %v %v %v %v\n", c.Path, p.NameSpan(c), p.CallSpan(c), p.ChunkOf(c).Span, h)
	}
	for _, g := range p.Globals {
		fmt.Fprintf(&b, "global %s %v %v %v %v\n", g.Path, p.GlobalSpan(g), p.PathSpan(g), p.ChunkOf(g).Span, p.HandlerOf(g) != nil)
	}
	for _, l := range p.Locals {
		fmt.Fprintf(&b, "local %s %v %v\n", l.Name, p.LocalSpan(l), p.ChunkOf(l).Span)
	}
	return b.String()
}

// TestChunkOfAfterLaterBuild: a chunk's model is shared by every build
// of a parse that has the chunk, and remembers only the last build's
// chunk (a number: it keeps no build alive). An earlier build, which a
// language server may still read (a hover on the version before an
// edit), must still resolve each record to its own chunk, and a record
// of another build to none.
func TestChunkOfAfterLaterBuild(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua shared\nfunction h() return \"\" end\n```\n\n```lua\nvar.k = 1\n```\n\n" +
		"## A\n\n```lua\nlocal x = h()\nvar.a = x\n```\n\n## B\n\n```lua\nlog(var.a)\n```\n"
	edited := strings.Replace(src, "log(var.a)", "log(var.a .. \"!\")", 1)
	first := Build(parse.Parse("t.md", []byte(src)))
	later := Build(parse.Parse("t.md", []byte("\n"+edited)))
	check := func(name string, p *Program) {
		t.Helper()
		nGlobals, nLocals := 0, 0
		for _, ch := range p.Chunks {
			for _, c := range p.CallsIn(ch) {
				if got := p.ChunkOf(c); got != ch {
					t.Errorf("%s: call %s resolves to chunk %p, want %p", name, c.Path, got, ch)
				}
			}
			for _, g := range p.GlobalsIn(ch) {
				if got := p.ChunkOf(g); got != ch {
					t.Errorf("%s: global %s of GlobalsIn resolves to chunk %p, want %p", name, g.Path, got, ch)
				}
			}
			for _, l := range p.LocalsIn(ch) {
				if got := p.ChunkOf(l); got != ch {
					t.Errorf("%s: local %s of LocalsIn resolves to chunk %p, want %p", name, l.Name, got, ch)
				}
			}
			nGlobals, nLocals = nGlobals+len(p.GlobalsIn(ch)), nLocals+len(p.LocalsIn(ch))
		}
		if nGlobals != len(p.Globals) || nLocals != len(p.Locals) || nGlobals == 0 || nLocals == 0 {
			t.Errorf("%s: GlobalsIn and LocalsIn give %d and %d records, Globals and Locals %d and %d", name, nGlobals, nLocals, len(p.Globals), len(p.Locals))
		}
		for _, g := range p.Globals {
			if ch := p.ChunkOf(g); ch == nil || ch.model != g.m {
				t.Errorf("%s: global %s resolves to a chunk of another model", name, g.Path)
			}
		}
		for _, l := range p.Locals {
			if ch := p.ChunkOf(l); ch == nil || ch.model != l.m {
				t.Errorf("%s: local %s resolves to a chunk of another model", name, l.Name)
			}
		}
	}
	shared := 0
	for i, ch := range first.Chunks {
		if ch.model == later.Chunks[i].model {
			shared++
		}
	}
	if shared < 2 {
		t.Fatalf("the builds share %d chunk models, want the unedited ones (3)", shared)
	}
	check("first", first)
	check("later", later)
	check("first again", first)
	// A record of the later build's edited chunk is not the first's.
	last := later.Chunks[len(later.Chunks)-1]
	if c := later.CallsIn(last)[0]; first.ChunkOf(c) != nil {
		t.Errorf("first build resolves the later build's own call %s to a chunk", c.Path)
	}
}

// TestChunkOfConcurrentBuilds: builds of two versions of a prompt, made
// and read at once (the language server analyses a version while a
// request reads the one before), share the unedited chunks' models; each
// build resolves every record to its own chunk whichever build took a
// model over last.
func TestChunkOfConcurrentBuilds(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nvar.k = 1\n```\n\n" +
		"## A\n\n```lua\nlocal x = 1\nvar.a = x\n```\n\n## B\n\n```lua\nlog(var.a)\n```\n"
	// The second version adds a section before A: the shared models'
	// chunks have other indices there.
	texts := []string{src, strings.Replace(src, "## A", "## Z\n\n```lua\nlog(\"z\")\n```\n\n## A", 1)}
	done := make(chan []string)
	for g := range 4 {
		go func() {
			var errs []string
			for i := range 50 {
				p := Build(parse.Parse("t.md", []byte(texts[(g+i)%2])))
				for range 3 {
					for _, ch := range p.Chunks {
						for _, c := range p.CallsIn(ch) {
							if p.ChunkOf(c) != ch {
								errs = append(errs, fmt.Sprintf("call %s resolves to another chunk", c.Path))
							}
						}
					}
					for _, g := range p.Globals {
						if ch := p.ChunkOf(g); ch == nil || ch.model != g.m {
							errs = append(errs, fmt.Sprintf("global %s resolves to another chunk", g.Path))
						}
					}
				}
			}
			done <- errs
		}()
	}
	for range 4 {
		for _, e := range <-done {
			t.Error(e)
		}
	}
}
