// Loops over string.gmatch of a constant: each match is an iteration
// with its captures as constants, unrolled like a loop over a list.

package value

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/pm"
)

// maxGmatchText bounds the text a gmatch loop is matched over.
const maxGmatchText = 4096

// gmatchLoop recognises `for ... in string.gmatch(s, p)` and
// `for ... in s:gmatch(p)`: it evaluates the call's operands and
// returns each iteration's values (nil when they are not known: the
// text or pattern is not a constant, or there are more matches than a
// loop unrolls). handled is false, with nothing evaluated, for any
// other loop.
func (in *interp) gmatchLoop(st *ast.GenericForStmt) (iters [][]Value, handled bool) {
	if len(st.Exprs) != 1 {
		return nil, false
	}
	c, ok := st.Exprs[0].(*ast.FuncCallExpr)
	if !ok {
		return nil, false
	}
	var s, p Value
	switch {
	case c.Receiver != nil && c.Method == "gmatch" && len(c.Args) == 1:
		s = in.expr(c.Receiver)
		if s.T != String {
			// Not a string's method: what the call runs is unknown.
			in.escape(c.Receiver, s, false)
			in.exprList(c.Args, 0, nil)
			in.forget()
			return nil, true
		}
		p = in.expr(c.Args[0])
	case c.Receiver == nil && staticName(c.Func) == "string.gmatch" && len(c.Args) == 2:
		if fn := in.expr(c.Func); fn.Builtin != "string.gmatch" {
			return nil, false
		}
		s, p = in.expr(c.Args[0]), in.expr(c.Args[1])
	default:
		return nil, false
	}
	in.work++
	text, ok1 := s.StrConst()
	pat, ok2 := p.StrConst()
	if !ok1 || !ok2 || len(text) > maxGmatchText || !plainPattern(pat) {
		return nil, true
	}
	mds, err := pm.Find(pat, []byte(text), 0, maxUnroll+1)
	if err != nil || len(mds) > maxUnroll {
		return nil, true
	}
	for _, m := range mds {
		var it []Value
		if m.CaptureLength() == 2 {
			it = []Value{Str(text[m.Capture(0):m.Capture(1)])}
		} else {
			for i := 2; i < m.CaptureLength(); i += 2 {
				if m.IsPosCapture(i) {
					it = append(it, Num(float64(m.Capture(i))))
				} else {
					it = append(it, Str(text[m.Capture(i):m.Capture(i+1)]))
				}
			}
		}
		iters = append(iters, it)
	}
	if iters == nil {
		iters = [][]Value{}
	}
	return iters, true
}

// plainPattern reports whether a gmatch pattern uses only what every
// Lua pattern matcher agrees on (no anchor, balance or frontier).
func plainPattern(p string) bool {
	return !strings.HasPrefix(p, "^") && !strings.Contains(p, "%b") && !strings.Contains(p, "%f")
}

// forGmatch unrolls a gmatch loop whose iterations are known, reporting
// whether st was a gmatch loop at all (its operands are then evaluated;
// unrolled reports whether it was also unrolled).
func (in *interp) forGmatch(st *ast.GenericForStmt) (handled, unrolled bool) {
	iters, handled := in.gmatchLoop(st)
	if !handled {
		return false, false
	}
	if iters == nil || !in.unrollable(len(iters)) {
		return true, false
	}
	in.unroll(len(iters), func(k int) {
		for i, name := range st.Names {
			v := NilValue
			switch {
			case k < 0:
				v = Top
			case i < len(iters[k]):
				v = iters[k][i]
			}
			in.declare(name, v)
		}
	}, st.Stmts)
	return true, true
}

// localFunction evaluates `local function f` (and `local f = function`,
// which the engine's compiler treats alike): f is declared before the
// body is evaluated, so the body's calls of f are calls of itself, which
// the evaluator inlines up to maxRecursion deep.
func (in *interp) localFunction(st *ast.LocalAssignStmt) bool {
	if len(st.Names) != 1 || len(st.Exprs) != 1 {
		return false
	}
	fe, ok := st.Exprs[0].(*ast.FunctionExpr)
	if !ok {
		return false
	}
	in.declare(st.Names[0], Top)
	i := len(in.vals) - 1
	in.function(fe)
	v := in.closure(fe)
	if !in.volatile[st.Names[0]] {
		in.vals[i] = v
	}
	if in.record {
		in.at.see(st.Line(), st.Names[0], in.vals[i], true)
	}
	return true
}
