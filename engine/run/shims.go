package run

import (
	"strconv"

	"github.com/forge-lsp/forge-lsp/engine/sandbox"
	lua "github.com/yuin/gopher-lua"
)

// The table shims make var proxies (userdata, so that every write is
// checked) and the sealed sys behave like plain tables for the standard
// functions that inspect tables: type, next, pairs, ipairs, unpack and
// table.insert, table.remove, table.sort and table.unpack. Each shim
// handles a proxy itself and passes anything else to the original
// function. table.concat takes proxies through the sandbox's TableArg hook
// (VM.tableArg).

// shims holds what the shims of one VM share.
type shims struct {
	vm *VM
	e  *varEnv
}

// installTableShims replaces the standard functions listed above.
func (vm *VM) installTableShims() {
	L := vm.L
	s := &shims{vm: vm, e: vm.vars}
	L.SetGlobal("type", s.wrap(L.GetGlobal("type"), s.typeOf))
	L.SetGlobal("next", s.wrap(L.GetGlobal("next"), s.next))
	L.SetGlobal("pairs", s.wrap(L.GetGlobal("pairs"), s.pairs))
	L.SetGlobal("ipairs", s.wrap(L.GetGlobal("ipairs"), s.ipairs))
	tab := L.GetGlobal("table").(*lua.LTable)
	tab.RawSetString("insert", s.onProxy(tab.RawGetString("insert"), s.insert))
	tab.RawSetString("remove", s.onProxy(tab.RawGetString("remove"), s.remove))
	tab.RawSetString("sort", s.onProxy(tab.RawGetString("sort"), s.sort))
	unpack := s.onProxy(L.GetGlobal("unpack"), s.unpack)
	L.SetGlobal("unpack", unpack)
	tab.RawSetString("unpack", unpack)
}

// wrap makes the Lua function of shim f over the original function orig.
func (s *shims) wrap(orig lua.LValue, f func(L *lua.LState, orig *lua.LFunction) int) *lua.LFunction {
	o := orig.(*lua.LFunction)
	return s.vm.L.NewFunction(func(L *lua.LState) int { return f(L, o) })
}

// onProxy makes the Lua function of a shim that handles a var proxy as the
// first argument with f and passes any other call to orig unchanged.
func (s *shims) onProxy(orig lua.LValue, f func(L *lua.LState, r *varRef, orig *lua.LFunction) int) *lua.LFunction {
	return s.wrap(orig, func(L *lua.LState, orig *lua.LFunction) int {
		if r := s.proxy(L.Get(1)); r != nil {
			return f(L, r, orig)
		}
		return sandbox.CallThrough(L, orig)
	})
}

// isSys reports whether v is this VM's sys.
func (s *shims) isSys(v lua.LValue) bool {
	ud, ok := v.(*lua.LUserData)
	return ok && ud == s.vm.sysUD
}

// proxy returns the var proxy v refers to, or nil.
func (s *shims) proxy(v lua.LValue) *varRef {
	if s.e.nodeOf(v) == nil {
		return nil
	}
	return v.(*lua.LUserData).Value.(*varRef)
}

// typeOf is type: proxies and sys are "table".
func (s *shims) typeOf(L *lua.LState, orig *lua.LFunction) int {
	v := L.CheckAny(1)
	if s.proxy(v) != nil || s.isSys(v) {
		L.Push(lua.LString("table"))
		return 1
	}
	L.Push(orig)
	L.Push(v)
	L.Call(1, 1)
	return 1
}

// next walks a proxy's entries in iteration order; sys has none.
func (s *shims) next(L *lua.LState, orig *lua.LFunction) int {
	v := L.Get(1)
	if s.isSys(v) {
		L.Push(lua.LNil)
		return 1
	}
	if r := s.proxy(v); r != nil {
		ks, vs := s.e.entries(r)
		k := L.Get(2)
		i := 0
		if k != lua.LNil {
			for i = 0; i < len(ks) && !L.Equal(ks[i], k); i++ {
			}
			i++
		}
		if i >= len(ks) {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(ks[i])
		L.Push(vs[i])
		return 2
	}
	L.Push(orig)
	L.Push(v)
	L.Push(L.Get(2))
	L.Call(2, 2)
	return 2
}

// pairs iterates a snapshot of a proxy's entries, taken when pairs starts;
// sys yields nothing.
func (s *shims) pairs(L *lua.LState, orig *lua.LFunction) int {
	v := L.CheckAny(1)
	r := s.proxy(v)
	if r == nil && !s.isSys(v) {
		L.Push(orig)
		L.Push(v)
		L.Call(1, 3)
		return 3
	}
	var ks, vs []lua.LValue
	if r != nil {
		ks, vs = s.e.entries(r)
	}
	i := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		if i >= len(ks) {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(ks[i])
		L.Push(vs[i])
		i++
		return 2
	}))
	L.Push(v)
	L.Push(lua.LNil)
	return 3
}

// ipairs walks a proxy's array part up to its first hole; sys yields
// nothing.
func (s *shims) ipairs(L *lua.LState, orig *lua.LFunction) int {
	v := L.CheckAny(1)
	var iter lua.LGFunction
	switch r := s.proxy(v); {
	case r != nil:
		iter = func(L *lua.LState) int {
			i := L.CheckInt(2) + 1
			if r.n.isObj || i > len(r.n.arr) || r.n.arr[i-1] == nil {
				L.Push(lua.LNil)
				return 1
			}
			L.Push(lua.LNumber(i))
			L.Push(s.e.toLua(r.n.arr[i-1], r.path+"["+strconv.Itoa(i)+"]"))
			return 2
		}
	case s.isSys(v):
		iter = func(L *lua.LState) int { L.Push(lua.LNil); return 1 }
	default:
		L.Push(orig)
		L.Push(v)
		L.Call(1, 3)
		return 3
	}
	L.Push(L.NewFunction(iter))
	L.Push(v)
	L.Push(lua.LNumber(0))
	return 3
}

// insert is table.insert on a proxy array, checking the new value.
func (s *shims) insert(L *lua.LState, r *varRef, orig *lua.LFunction) int {
	n := r.n
	if n.isObj {
		L.RaiseError("table.insert: %s is a JSON object, not an array", r.path)
	}
	switch L.GetTop() {
	case 2:
		x := s.e.checkData(L, L.Get(2), r.path+"["+strconv.Itoa(len(n.arr)+1)+"]")
		n.arr = append(n.arr, x)
	case 3:
		pos := L.CheckInt(2)
		if pos < 1 || pos > len(n.arr)+1 {
			L.ArgError(2, "position out of bounds")
		}
		x := s.e.checkData(L, L.Get(3), r.path+"["+strconv.Itoa(pos)+"]")
		n.arr = append(n.arr, nil)
		copy(n.arr[pos:], n.arr[pos-1:])
		n.arr[pos-1] = x
	default:
		L.RaiseError("wrong number of arguments to 'insert'")
	}
	s.e.vm.varEvent(L, r.path, n, false)
	return 0
}

// remove is table.remove on a proxy array.
func (s *shims) remove(L *lua.LState, r *varRef, orig *lua.LFunction) int {
	n := r.n
	if n.isObj || len(n.arr) == 0 {
		return 0
	}
	pos := L.OptInt(2, len(n.arr))
	if pos < 1 || pos > len(n.arr) {
		return 0
	}
	v := s.e.toLua(n.arr[pos-1], r.path)
	n.arr = append(n.arr[:pos-1], n.arr[pos:]...)
	s.e.vm.varEvent(L, r.path, n, false)
	L.Push(v)
	return 1
}

// sort sorts a copy of a proxy with the original table.sort and writes an
// array back.
func (s *shims) sort(L *lua.LState, r *varRef, orig *lua.LFunction) int {
	t := s.e.materialize(r)
	nargs := L.GetTop()
	L.Push(orig)
	L.Push(t)
	if nargs >= 2 {
		L.Push(L.Get(2))
		L.Call(2, 0)
	} else {
		L.Call(1, 0)
	}
	if !r.n.isObj {
		s.e.writeBack(L, r, t)
		s.e.vm.varEvent(L, r.path, r.n, false)
	}
	return 0
}

// unpack unpacks a plain copy of a proxy.
func (s *shims) unpack(L *lua.LState, r *varRef, orig *lua.LFunction) int {
	L.Replace(1, s.e.materialize(r))
	return sandbox.CallThrough(L, orig)
}
