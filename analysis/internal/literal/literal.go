// Package literal folds constant Lua expressions into the value
// descriptions engine/rules checks, so the analyzer judges a literal
// argument with the engine's own rule.
package literal

import (
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/yuin/gopher-lua/ast"
)

// Value folds e: string, number, boolean and nil literals, unary minus,
// .. of constant strings and numbers, table constructors (Len is the
// member count when no field is a multi-value call or ...), and function
// expressions. ok is false when e's value is not known statically.
func Value(e ast.Expr) (rules.Value, bool) {
	switch e := e.(type) {
	case *ast.StringExpr:
		return rules.Value{Type: "string", Str: e.Value, Len: -1}, true
	case *ast.NumberExpr:
		f, ok := number(e.Value)
		return rules.Value{Type: "number", Num: f, Len: -1}, ok
	case *ast.TrueExpr, *ast.FalseExpr:
		return rules.Value{Type: "boolean", Len: -1}, true
	case *ast.NilExpr:
		return rules.Value{Type: "nil", Len: -1}, true
	case *ast.FunctionExpr:
		return rules.Value{Type: "function", Len: -1}, true
	case *ast.UnaryMinusOpExpr:
		v, ok := Value(e.Expr)
		if !ok || v.Type != "number" {
			return rules.Value{}, false
		}
		v.Num = -v.Num
		return v, true
	case *ast.StringConcatOpExpr:
		a, ok1 := String(e.Lhs)
		b, ok2 := String(e.Rhs)
		if !ok1 || !ok2 {
			return rules.Value{Type: "string", Len: -1}, false
		}
		return rules.Value{Type: "string", Str: a + b, Len: -1}, true
	case *ast.TableExpr:
		n := len(e.Fields)
		if n > 0 {
			switch e.Fields[n-1].Value.(type) {
			case *ast.FuncCallExpr, *ast.Comma3Expr:
				if e.Fields[n-1].Key == nil {
					n = -1
				}
			}
		}
		return rules.Value{Type: "table", Len: n}, true
	}
	return rules.Value{}, false
}

// Type returns e's Lua type when it is known statically even if its value
// is not (a concatenation is always a string), or "".
func Type(e ast.Expr) string {
	if v, ok := Value(e); ok {
		return v.Type
	}
	switch e.(type) {
	case *ast.StringConcatOpExpr:
		return "string"
	}
	return ""
}

// String folds a constant string (numbers convert as Lua's .. does for
// integers).
func String(e ast.Expr) (string, bool) {
	v, ok := Value(e)
	if !ok {
		return "", false
	}
	switch v.Type {
	case "string":
		return v.Str, true
	case "number":
		if v.Num == float64(int64(v.Num)) {
			return strconv.FormatInt(int64(v.Num), 10), true
		}
	}
	return "", false
}

func number(s string) (float64, bool) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		i, err := strconv.ParseInt(s[2:], 16, 64)
		return float64(i), err == nil
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// Prefix returns the constant text every value of a string expression
// starts with: the whole string for a constant, the folded left operands
// of a .. chain, or "" when nothing is known.
func Prefix(e ast.Expr) string {
	if s, ok := String(e); ok {
		return s
	}
	if c, ok := e.(*ast.StringConcatOpExpr); ok {
		if s, ok := String(c.Lhs); ok {
			return s + Prefix(c.Rhs)
		}
		return Prefix(c.Lhs)
	}
	return ""
}
