package run

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/forge-lsp/forge-lsp/engine/rules"

	lua "github.com/yuin/gopher-lua"
)

// scalarString converts a returned value to the run's text
// (docs/language.md#return-values). ok is false for nil (no value); a
// non-scalar is an error.
func scalarString(v lua.LValue) (s string, ok bool, err error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return "", false, nil
	case lua.LString:
		return string(x), true, nil
	case lua.LBool:
		if x {
			return "true", true, nil
		}
		return "false", true, nil
	case lua.LNumber:
		return formatNumber(float64(x)), true, nil
	}
	if v == nil {
		return "", false, nil
	}
	return "", false, rules.ReturnValue(ruleValue(v))
}

// formatNumber renders a number like upstream's scalar conversion: an
// integral value as a decimal integer, otherwise the shortest round-trip
// decimal without exponent; infinities as inf/-inf.
func formatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == math.Trunc(f) && math.Abs(f) < 1<<63:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// typeName is the Lua type name of v.
func typeName(v lua.LValue) string {
	if v == nil {
		return "nil"
	}
	return v.Type().String()
}

// node is a JSON array or object. var data, fanout items and converted
// globals are trees of nodes whose leaves are nil (null), bool, float64 and
// string. An empty node is neither until written; it renders as {}.
type node struct {
	arr   []any
	obj   map[string]any
	isObj bool
}

// keys returns an object's keys sorted (serde_json's map order).
func (n *node) keys() []string {
	ks := make([]string, 0, len(n.obj))
	for k := range n.obj {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// toObject turns an array node into an object keyed "1".."n", which is what
// a JSON round trip of a Lua table with holes or string keys gives.
func (n *node) toObject() {
	if n.isObj {
		return
	}
	n.obj = make(map[string]any, len(n.arr))
	for i, v := range n.arr {
		n.obj[strconv.Itoa(i+1)] = v
	}
	n.arr = nil
	n.isObj = true
}

func (n *node) get(key string, idx int, isIdx bool) (any, bool) {
	if !n.isObj {
		if isIdx && idx >= 1 && idx <= len(n.arr) {
			return n.arr[idx-1], true
		}
		return nil, false
	}
	v, ok := n.obj[key]
	return v, ok
}

// deepCopy copies a value tree.
func deepCopy(v any) any {
	n, ok := v.(*node)
	if !ok {
		return v
	}
	c := &node{isObj: n.isObj}
	if n.isObj {
		c.obj = make(map[string]any, len(n.obj))
		for k, x := range n.obj {
			c.obj[k] = deepCopy(x)
		}
	} else if n.arr != nil {
		c.arr = make([]any, len(n.arr))
		for i, x := range n.arr {
			c.arr[i] = deepCopy(x)
		}
	}
	return c
}

// jsonError is a Lua-to-JSON conversion failure.
type jsonError struct{ msg string }

func (e *jsonError) Error() string { return e.msg }

// maxJSONDepth bounds nesting so that cyclic tables fail cleanly.
const maxJSONDepth = 128

// keyString converts a table key to an object key.
func keyString(k lua.LValue) (string, error) {
	switch x := k.(type) {
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return "", &jsonError{"cannot convert a non-finite number key to JSON"}
		}
		return formatNumber(float64(x)), nil
	case lua.LBool:
		if x {
			return "true", nil
		}
		return "false", nil
	}
	return "", &jsonError{fmt.Sprintf("cannot convert a table with %s keys to JSON", typeName(k))}
}

// toValue converts a Lua value to a JSON value tree. proxy resolves var
// proxies to their nodes (nil when there are none); share keeps those
// nodes instead of copying them.
func toValue(v lua.LValue, proxy func(lua.LValue) *node, share bool, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, &jsonError{"cannot convert to JSON: tables nested too deeply (a cycle?)"}
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &jsonError{"cannot convert a non-finite number to JSON"}
		}
		return f, nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		n := &node{}
		// A sequence 1..k with no other keys is an array.
		count := 0
		isArr := true
		x.ForEach(func(k, _ lua.LValue) {
			count++
			if kn, ok := k.(lua.LNumber); !ok || float64(kn) != math.Trunc(float64(kn)) || kn < 1 {
				isArr = false
			}
		})
		if isArr && count > 0 {
			for i := 1; i <= count; i++ {
				if x.RawGetInt(i) == lua.LNil {
					isArr = false
					break
				}
			}
		}
		if count == 0 {
			// Undecided: renders as {} and becomes an array on insert.
			return n, nil
		}
		var err error
		if isArr {
			n.arr = make([]any, 0, count)
			for i := 1; i <= count; i++ {
				var e any
				if e, err = toValue(x.RawGetInt(i), proxy, share, depth+1); err != nil {
					return nil, err
				}
				n.arr = append(n.arr, e)
			}
			return n, nil
		}
		n.isObj = true
		n.obj = make(map[string]any, count)
		x.ForEach(func(k, val lua.LValue) {
			if err != nil {
				return
			}
			var ks string
			if ks, err = keyString(k); err != nil {
				return
			}
			var e any
			if e, err = toValue(val, proxy, share, depth+1); err == nil {
				n.obj[ks] = e
			}
		})
		if err != nil {
			return nil, err
		}
		return n, nil
	case *lua.LUserData:
		if proxy != nil {
			if pn := proxy(x); pn != nil {
				if share {
					return pn, nil
				}
				return deepCopy(pn), nil
			}
		}
	}
	return nil, &jsonError{fmt.Sprintf("cannot convert a %s value to JSON", typeName(v))}
}

// fromPlain converts plain Go JSON data (as decoded by encoding/json) to a
// value tree.
func fromPlain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		n := &node{isObj: true, obj: make(map[string]any, len(x))}
		for k, e := range x {
			n.obj[k] = fromPlain(e)
		}
		return n
	case []any:
		n := &node{arr: make([]any, len(x))}
		for i, e := range x {
			n.arr[i] = fromPlain(e)
		}
		return n
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

// jsonToLua converts plain Go JSON data to fresh Lua values in L (JSON
// null becomes nil).
func jsonToLua(L *lua.LState, v any) lua.LValue { return valueToLua(L, fromPlain(v)) }

// valueToLua converts a value tree to fresh Lua tables.
func valueToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case *node:
		t := L.CreateTable(len(x.arr), len(x.obj))
		if x.isObj {
			for _, k := range x.keys() {
				t.RawSetString(k, valueToLua(L, x.obj[k]))
			}
		} else {
			for i, e := range x.arr {
				t.RawSetInt(i+1, valueToLua(L, e))
			}
		}
		return t
	}
	return lua.LNil
}
