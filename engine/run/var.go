package run

import (
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// The `var` global (docs/language.md#var) is a userdata proxy over a JSON
// value tree, so that every write is checked at the assigning line. Nested
// tables are proxies too. Proxies behave like plain tables for #, pairs,
// ipairs, next, type, unpack and the table library, and assigning nil deletes
// a key.

// varRef is the Value of a var proxy userdata.
type varRef struct {
	n    *node
	path string
}

// varEnv is one VM's view of a var tree.
type varEnv struct {
	vm      *VM
	root    *node
	rootUD  *lua.LUserData
	mt      *lua.LTable
	proxies map[*node]*lua.LUserData
}

func (vm *VM) installVar(root *node) {
	L := vm.L
	e := &varEnv{vm: vm, root: root, proxies: map[*node]*lua.LUserData{}}
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(e.index))
	mt.RawSetString("__newindex", L.NewFunction(e.newindex))
	mt.RawSetString("__len", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(e.ref(L, 1).n.lenSeq()))
		return 1
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(fmt.Sprintf("table: %p", e.ref(L, 1).n)))
		return 1
	}))
	mt.RawSetString("__metatable", lua.LString("var is guarded"))
	e.mt = mt
	e.rootUD = e.proxy(root, "var")
	vm.vars = e
	L.SetGlobal("var", e.rootUD)
}

// lenSeq is # of the node: the array length (an object has no sequence).
func (n *node) lenSeq() int {
	if n.isObj {
		return 0
	}
	return len(n.arr)
}

func (e *varEnv) proxy(n *node, path string) *lua.LUserData {
	if ud, ok := e.proxies[n]; ok {
		return ud
	}
	ud := e.vm.L.NewUserData()
	ud.Value = &varRef{n: n, path: path}
	ud.Metatable = e.mt
	e.proxies[n] = ud
	return ud
}

// nodeOf returns the node of a var proxy of this VM, or nil.
func (e *varEnv) nodeOf(v lua.LValue) *node {
	if ud, ok := v.(*lua.LUserData); ok && ud.Metatable == e.mt {
		if r, ok := ud.Value.(*varRef); ok {
			return r.n
		}
	}
	return nil
}

func (e *varEnv) ref(L *lua.LState, i int) *varRef {
	ud, ok := L.Get(i).(*lua.LUserData)
	if ok {
		if r, ok := ud.Value.(*varRef); ok {
			return r
		}
	}
	L.ArgError(i, "var proxy expected")
	return nil
}

// key decodes a Lua key: an object key string and, for integral numbers,
// the array index.
func varKey(k lua.LValue) (s string, idx int, isIdx bool, err error) {
	switch x := k.(type) {
	case lua.LString:
		return string(x), 0, false, nil
	case lua.LNumber:
		f := float64(x)
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatInt(int64(f), 10), int(f), true, nil
		}
		s, err := keyString(x)
		return s, 0, false, err
	case lua.LBool:
		s, err := keyString(x)
		return s, 0, false, err
	}
	return "", 0, false, fmt.Errorf("var keys must be strings or numbers, got %s", typeName(k))
}

func childPath(path string, k lua.LValue) string {
	if s, ok := k.(lua.LString); ok {
		return path + "." + string(s)
	}
	return path + "[" + lua.LVAsString(k) + "]"
}

func (e *varEnv) toLua(v any, path string) lua.LValue {
	switch x := v.(type) {
	case *node:
		return e.proxy(x, path)
	case nil:
		return lua.LNil
	}
	return valueToLua(e.vm.L, v)
}

func (e *varEnv) index(L *lua.LState) int {
	r := e.ref(L, 1)
	k := L.Get(2)
	s, idx, isIdx, err := varKey(k)
	if err != nil {
		L.Push(lua.LNil)
		return 1
	}
	v, _ := r.n.get(s, idx, isIdx)
	L.Push(e.toLua(v, childPath(r.path, k)))
	return 1
}

// checkData converts an assigned Lua value, raising the errors of
// docs/language.md#var.
func (e *varEnv) checkData(L *lua.LState, v lua.LValue, path string) any {
	if e.nodeOf(v) == nil {
		if err := rules.VarValue(path, ruleValue(v)); err != nil {
			L.RaiseError("%s", err.Error())
		}
	}
	x, err := toValue(v, e.nodeOf, false, 0)
	if err != nil {
		if at, what := e.notData(v, path, 0); at != "" {
			L.RaiseError("%s must be JSON data, but %s is %s%s", path, at, what, dataHint(what))
		}
		L.RaiseError("%s: %s", path, err.Error())
	}
	return x
}

// notData finds the first value inside v (at path) that var cannot hold
// and says where it is and what it is ("a fanout result"), or "" when
// every value is data.
func (e *varEnv) notData(v lua.LValue, path string, depth int) (at, what string) {
	if depth > maxJSONDepth {
		return "", ""
	}
	switch x := v.(type) {
	case *lua.LTable:
		var bad, kind string
		x.ForEach(func(k, val lua.LValue) {
			if bad == "" {
				bad, kind = e.notData(val, childPath(path, k), depth+1)
			}
		})
		return bad, kind
	case *lua.LUserData:
		if e.nodeOf(x) != nil {
			return "", ""
		}
		switch x.Value.(type) {
		case *fanoutResult:
			return path, "a fanout result"
		}
		return path, "a userdata value"
	case *lua.LFunction:
		return path, "a function"
	case *lua.LState, *lua.LChannel:
		return path, "a " + typeName(v) + " value"
	}
	return "", ""
}

// dataHint is the way out for a value var cannot hold.
func dataHint(what string) string {
	if what == "a fanout result" {
		return " (keep its text: r.text, or tostring(r))"
	}
	return ""
}

func (e *varEnv) newindex(L *lua.LState) int {
	r := e.ref(L, 1)
	k := L.Get(2)
	path := childPath(r.path, k)
	v := L.Get(3)
	s, idx, isIdx, err := varKey(k)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	var x any
	if v != lua.LNil {
		x = e.checkData(L, v, path)
	}
	r.n.set(s, idx, isIdx, x, v == lua.LNil)
	e.vm.varEvent(L, path, x, v == lua.LNil)
	return 0
}

// set writes key = x, or deletes it when del.
func (n *node) set(s string, idx int, isIdx bool, x any, del bool) {
	if !n.isObj {
		switch {
		case isIdx && idx >= 1 && idx <= len(n.arr):
			if del && idx == len(n.arr) {
				n.arr = n.arr[:idx-1]
				// Trailing nulls left by earlier deletes go too, as a Lua
				// sequence would shrink.
				for len(n.arr) > 0 && n.arr[len(n.arr)-1] == nil {
					n.arr = n.arr[:len(n.arr)-1]
				}
				return
			}
			n.arr[idx-1] = x
			return
		case isIdx && idx == len(n.arr)+1:
			if !del {
				n.arr = append(n.arr, x)
			}
			return
		case del:
			return
		}
		n.toObject()
	}
	if del {
		delete(n.obj, s)
		return
	}
	if n.obj == nil {
		n.obj = map[string]any{}
	}
	n.obj[s] = x
}

// entries lists a node's (key, value) pairs in iteration order.
func (e *varEnv) entries(r *varRef) (keys []lua.LValue, vals []lua.LValue) {
	if r.n.isObj {
		for _, k := range r.n.keys() {
			keys = append(keys, lua.LString(k))
			vals = append(vals, e.toLua(r.n.obj[k], r.path+"."+k))
		}
		return
	}
	for i, v := range r.n.arr {
		if v == nil {
			continue
		}
		keys = append(keys, lua.LNumber(i+1))
		vals = append(vals, e.toLua(v, r.path+"["+strconv.Itoa(i+1)+"]"))
	}
	return
}

// materialize makes a plain table holding a proxy's direct entries
// (nested tables stay proxies).
func (e *varEnv) materialize(r *varRef) *lua.LTable {
	t := e.vm.L.NewTable()
	ks, vs := e.entries(r)
	for i := range ks {
		t.RawSet(ks[i], vs[i])
	}
	return t
}

// writeBack replaces an array node's elements from a plain table (after
// table.sort), keeping nested nodes shared.
func (e *varEnv) writeBack(L *lua.LState, r *varRef, t *lua.LTable) {
	n := t.Len()
	arr := make([]any, 0, n)
	for i := 1; i <= n; i++ {
		x, err := toValue(t.RawGetInt(i), e.nodeOf, true, 0)
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		arr = append(arr, x)
	}
	r.n.arr, r.n.obj, r.n.isObj = arr, nil, false
}

// tableArg reads a table argument, accepting var proxies (sandbox hook
// for table.concat).
func (vm *VM) tableArg(L *lua.LState, i int) *lua.LTable {
	if vm.vars != nil {
		if ud, ok := L.Get(i).(*lua.LUserData); ok && vm.vars.nodeOf(ud) != nil {
			return vm.vars.materialize(ud.Value.(*varRef))
		}
	}
	return L.CheckTable(i)
}

// errVarReassigned is the error for `var = ...`.
const errVarReassigned = "the `var` global was reassigned; write `var.<field>` instead"

// checkVarGlobal is the read-back check of docs/language.md#var: the global
// must still be this VM's proxy.
func (vm *VM) checkVarGlobal() error {
	if vm.vars == nil {
		return nil
	}
	if vm.L.GetGlobal("var") != vm.vars.rootUD {
		// At the assignment, when a chunk of this VM has one.
		for _, c := range vm.chunks() {
			if line := varAssignLine(c); line > 0 {
				return vm.chunkErr(c, line, errVarReassigned)
			}
		}
		return &RunError{Kind: KindLua, Msg: errVarReassigned}
	}
	return nil
}
