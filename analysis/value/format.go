package value

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// formatOps records the arguments of a string.format call that certainly
// fail the format's directives, as gopher-lua's string.format refuses
// them: a numeric directive (%d, %x, %f, %c, ...) needs a number or a
// string that converts to one, %q a string or a number, and every
// directive but %% needs an argument. %s takes anything (tostring).
// format is the format's value, vals the values after it and exprs
// their expressions; the first of them is argument number first. open
// is set when the last expression may give any number of values (a
// call, ...), so a missing argument is not certain.
func (in *interp) formatOps(format Value, vals []Value, exprs []ast.Expr, first int, open bool) {
	f, ok := format.StrConst()
	if !ok || format.T != String || !in.record {
		return
	}
	k := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		for i < len(f) && strings.IndexByte("-+ #0123456789.", f[i]) >= 0 {
			i++
		}
		if i >= len(f) {
			return
		}
		c := f[i]
		if c == '%' {
			continue
		}
		if k >= len(vals) {
			if !open && len(exprs) > 0 {
				in.opCode(exprs[len(exprs)-1], "bad-argument", fmt.Sprintf("bad argument #%d to format (no value)", first+k))
			}
			return
		}
		v := vals[k]
		var want string
		switch c {
		case 'd', 'i', 'o', 'u', 'x', 'X', 'c', 'e', 'E', 'f', 'g', 'G':
			if !numberLike(v) {
				want = "number"
			}
		case 'q':
			if v.T != Any && v.T&(String|Number) == 0 {
				want = "string"
			}
		}
		if want != "" {
			if got := certainType(v); got != "" {
				in.opCode(exprs[k], "bad-argument", fmt.Sprintf("bad argument #%d to format (%s expected, got %s)", first+k, want, got))
			}
		}
		k++
	}
}

// numberLike reports whether v may be a number or a string that
// converts to one (false only when it certainly is neither).
func numberLike(v Value) bool {
	if v.T == Any || v.T&Number != 0 {
		return true
	}
	if v.T == String {
		s, ok := v.StrConst()
		if !ok {
			return true
		}
		return luaNumber(s)
	}
	return v.T&String != 0
}

// luaNumber reports whether the VM converts string s to a number: as
// gopher-lua's parseNumber does, s without surrounding spaces, tabs and
// newlines parses as a Go integer literal of any base or as a Go float
// (so "inf", "0b1" and "1_000" convert, as they do at run time).
func luaNumber(s string) bool {
	s = strings.Trim(s, " \t\n")
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// certainType names v's type when it has exactly one (not userdata), as
// Lua's error messages do, or "".
func certainType(v Value) string {
	if !v.T.single() || v.T == Other {
		return ""
	}
	return v.T.String()
}

// openArgs reports whether a call's last argument may give any number of
// values (a call or ...).
func openArgs(args []ast.Expr) bool {
	if len(args) == 0 {
		return false
	}
	switch args[len(args)-1].(type) {
	case *ast.FuncCallExpr, *ast.Comma3Expr:
		return true
	}
	return false
}
