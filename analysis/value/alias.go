// Aliases: one table under two names.

package value

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// A table read from a name or from a field of a name into a new local
// (`local cfg = CONFIG`, `local spec = SPECS.lookup`) is one table under
// two names. Both keep the table's shape, which is the same *Shape, and
// the shape is listed in interp.aliased. A write through either name
// (a field assigned, a table function that changes it, the table handed
// to code that may change it) drops the shape of every name that holds
// that table, and of every table that holds it in a field, before the
// writer takes its new shape (dropAliases). A call of an unknown
// function, which may change any global, drops the aliases that a
// global holds. The list lives for one evaluation: locals end with
// their chunk. See docs/architecture.md#the-evaluator.

// maxAliased bounds the tables followed under two names in one
// evaluation; past it a new binding drops both shapes, as every binding
// did before aliases were followed.
const maxAliased = 32

// aliasDepth bounds how deep dropAliases looks for the table in other
// tables' fields.
const aliasDepth = 4

// bind is escape for value v of expression e bound to a new local: when
// e is a name or a field of a name (not var) that holds v's shape, v
// keeps it and the shape is listed as aliased; otherwise escape.
func (in *interp) bind(e ast.Expr, v Value) Value {
	if v.T != Table || v.Shape == nil || len(in.aliased) >= maxAliased {
		return in.escape(e, v, false)
	}
	var root string
	var key string
	switch x := e.(type) {
	case *ast.IdentExpr:
		root = x.Value
	case *ast.AttrGetExpr:
		id, ok := x.Object.(*ast.IdentExpr)
		k, isStr := x.Key.(*ast.StringExpr)
		if !ok || !isStr {
			return in.escape(e, v, false)
		}
		root, key = id.Value, k.Value
	default:
		return in.escape(e, v, false)
	}
	var held Value
	if root == "var" && in.lookup("var") < 0 {
		// A var table read into a local is a proxy to it: one table
		// under two names, var.<key> and the local.
		g, ok := in.globals.get("var." + key)
		if key == "" || !ok || g.Shape != v.Shape {
			return in.escape(e, v, false)
		}
		in.markAliased(v.Shape)
		return v
	}
	if i := in.lookup(root); i >= 0 {
		held = in.vals[i]
	} else if g, ok := in.globals.get(root); ok {
		held = g
	} else {
		return in.escape(e, v, false)
	}
	if key != "" {
		if held.T != Table || held.Shape == nil {
			return in.escape(e, v, false)
		}
		fv, ok := held.Shape.Get(key)
		if !ok {
			return in.escape(e, v, false)
		}
		held = fv
	}
	if held.Shape != v.Shape {
		return in.escape(e, v, false)
	}
	in.markAliased(v.Shape)
	return v
}

func (in *interp) markAliased(s *Shape) {
	for _, a := range in.aliased {
		if a == s {
			return
		}
	}
	in.aliased = append(in.aliased, s)
}

// dropAliases is called before a write through a table whose shape is
// s: when s is held under several names, every local and global that
// holds it, directly or in a field, loses its shape (a global is
// forgotten), and s is no longer listed.
func (in *interp) dropAliases(s *Shape) {
	if s == nil || len(in.aliased) == 0 {
		return
	}
	k := -1
	for i, a := range in.aliased {
		if a == s {
			k = i
			break
		}
	}
	if k < 0 {
		return
	}
	in.aliased = append(in.aliased[:k], in.aliased[k+1:]...)
	for i := range in.vals {
		if holds(in.vals[i].Shape, s, aliasDepth) {
			in.vals[i].Shape = nil
		}
	}
	var drop []string
	for _, g := range in.globals {
		if holds(g.v.Shape, s, aliasDepth) {
			drop = append(drop, g.name)
		}
	}
	for _, n := range drop {
		in.ownGlobals().del(n)
		if k, ok := strings.CutPrefix(n, "var."); ok {
			// Changed through a proxy: the key may hold anything now,
			// also for the sections after this one (Facts.VarEscaped).
			if !has(in.mayVar, k) {
				in.mayVar = append(in.mayVar, k)
			}
		}
	}
}

// dropAliasesIn drops the aliases of every aliased table that shape s
// holds (s itself included): s's table is about to lose its shape or be
// changed in a way nobody follows.
func (in *interp) dropAliasesIn(s *Shape) {
	if s == nil {
		return
	}
	var held []*Shape
	for _, a := range in.aliased {
		if holds(s, a, aliasDepth) {
			held = append(held, a)
		}
	}
	for _, a := range held {
		in.dropAliases(a)
	}
}

// dropGlobalAliases drops the aliases a global holds, before a call
// that may change any global.
func (in *interp) dropGlobalAliases() {
	if len(in.aliased) == 0 {
		return
	}
	for _, g := range in.globals {
		in.dropAliasesIn(g.v.Shape)
		if len(in.aliased) == 0 {
			return
		}
	}
}

// holds reports whether shape s is t or is held in t's fields or array,
// up to depth levels down.
func holds(s, t *Shape, depth int) bool {
	if s == nil {
		return false
	}
	if s == t {
		return true
	}
	if depth == 0 {
		return false
	}
	for i := range s.Fields {
		if v := &s.Fields[i].V; v.Shape != nil && holds(v.Shape, t, depth-1) {
			return true
		}
	}
	for i := range s.Array {
		if v := &s.Array[i]; v.Shape != nil && holds(v.Shape, t, depth-1) {
			return true
		}
	}
	return false
}
