package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// pcallCaught reports whether a top-level pcall(jump, ...) call of
// chunk c only catches an error, so it does not end the chunk: in the H1,
// where jump just raises, or with a literal target that does not resolve.
func (r *Result) pcallCaught(c *program.Chunk, call *ast.FuncCallExpr) bool {
	switch c.Kind {
	case program.H1Chunk:
		return true
	case program.SectionChunk:
		if len(call.Args) < 2 {
			return true
		}
		t, ok := call.Args[1].(*ast.StringExpr)
		if !ok {
			return false
		}
		_, err := parse.Resolve(r.Prog.Prompt, c.Section, t.Value)
		return err != nil
	}
	return false
}

// globalName returns the name of an identifier expression, or "". A
// dotted path never equals the plain names the callers compare it with,
// so this is program.Path for them without building the path's string.
func globalName(e ast.Expr) string {
	if id, ok := e.(*ast.IdentExpr); ok {
		return id.Value
	}
	return ""
}

func isPcallJump(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	return globalName(c.Func) == "pcall"
}

// isEnd reports whether a top-level call always ends the section: jump,
// error, or pcall(jump, ...) (a recorded jump wins even under pcall).
func isEnd(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	switch globalName(c.Func) {
	case "jump", "error":
		return true
	case "pcall":
		if len(c.Args) > 0 {
			return globalName(c.Args[0]) == "jump"
		}
	}
	return false
}

// caughtSpans records the function expressions passed directly to pcall
// or xpcall: an error raised in their bodies is caught.
func (r *Result) caughtSpans() {
	for _, c := range r.Prog.Calls {
		if c.Path != "pcall" && c.Path != "xpcall" {
			continue
		}
		if fe, ok := c.Arg(0).(*ast.FunctionExpr); ok && r.Prog.Prompt.File != nil {
			f := r.Prog.Prompt.File
			last := r.Prog.ChunkOf(c).FirstLine + fe.LastLine() - 1
			r.caught = append(r.caught, source.Span{Start: r.Prog.SpanOf(c, fe).Start, End: f.LineEnd(last)})
		}
	}
}

// Caught reports whether the start of s lies in a function body that
// pcall or xpcall runs, where an error does not end the run.
func (r *Result) Caught(s source.Span) bool {
	for _, c := range r.caught {
		if c.Start <= s.Start && s.Start < c.End {
			return true
		}
	}
	return false
}
