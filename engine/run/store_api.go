package run

import (
	"github.com/forge-lsp/forge-lsp/engine/sandbox"
	"github.com/forge-lsp/forge-lsp/engine/store"
	lua "github.com/yuin/gopher-lua"
)

// The store functions (docs/language.md#store) over the run's one store.
// Failures are Lua errors, except that a size cap trips a memory Quota.

// storeFail raises err from a store function.
func (vm *VM) storeFail(L *lua.LState, err error) {
	if se, ok := err.(*store.Error); ok && se.Kind == store.Quota {
		vm.sb.RaiseQuota(&sandbox.QuotaError{Resource: sandbox.ResMemory, Detail: se.Msg})
	}
	L.RaiseError("%s", err.Error())
}

// optLine reads optional line-number argument i of fn.
func optLine(L *lua.LState, fn string, i int) *int64 {
	checkArg(L, fn, i)
	if L.Get(i) == lua.LNil {
		return nil
	}
	n := int64(lua.LVAsNumber(L.Get(i)))
	return &n
}

// storeText pushes the text a store read returned.
func (vm *VM) storeText(L *lua.LState, s string, err error) int {
	if err != nil {
		vm.storeFail(L, err)
	}
	L.Push(lua.LString(s))
	return 1
}

// storeDone finishes a store function that returns nothing.
func (vm *VM) storeDone(L *lua.LState, err error) int {
	if err != nil {
		vm.storeFail(L, err)
	}
	return 0
}

func (vm *VM) storeWrite(L *lua.LState) int {
	p, data := stringArg(L, "store.write", 1), stringArg(L, "store.write", 2)
	n := vm.storeDone(L, vm.r.store.Write(p, data, vm.fr.claims...))
	vm.storeEvent(L, "write", p)
	return n
}

func (vm *VM) storeAppend(L *lua.LState) int {
	p, data := stringArg(L, "store.append", 1), stringArg(L, "store.append", 2)
	n := vm.storeDone(L, vm.r.store.Append(p, data))
	vm.storeEvent(L, "append", p)
	return n
}

func (vm *VM) storeRead(L *lua.LState) int {
	p := stringArg(L, "store.read", 1)
	if L.Get(2) == lua.LNil && L.Get(3) == lua.LNil {
		s, err := vm.r.store.Read(p)
		return vm.storeText(L, s, err)
	}
	s, err := vm.r.store.ReadLines(p, optLine(L, "store.read", 2), optLine(L, "store.read", 3))
	return vm.storeText(L, s, err)
}

func (vm *VM) storeReadNumbered(L *lua.LState) int {
	s, err := vm.r.store.ReadNumbered(stringArg(L, "store.read_numbered", 1), optLine(L, "store.read_numbered", 2), optLine(L, "store.read_numbered", 3))
	return vm.storeText(L, s, err)
}

func (vm *VM) storeStrReplace(L *lua.LState) int {
	p := stringArg(L, "store.str_replace", 1)
	n := vm.storeDone(L, vm.r.store.StrReplace(p, stringArg(L, "store.str_replace", 2), stringArg(L, "store.str_replace", 3)))
	vm.storeEvent(L, "replace", p)
	return n
}

func (vm *VM) storeDelete(L *lua.LState) int {
	p := stringArg(L, "store.delete", 1)
	n := vm.storeDone(L, vm.r.store.Delete(p))
	vm.storeEvent(L, "delete", p)
	return n
}

func (vm *VM) storeGlob(L *lua.LState) int {
	ps, err := vm.r.store.Glob(stringArg(L, "store.glob", 1))
	if err != nil {
		vm.storeFail(L, err)
	}
	out := L.CreateTable(len(ps), 0)
	for i, p := range ps {
		out.RawSetInt(i+1, lua.LString(p))
	}
	L.Push(out)
	return 1
}

func (vm *VM) storeExists(L *lua.LState) int {
	ok, err := vm.r.store.Exists(stringArg(L, "store.exists", 1))
	if err != nil {
		vm.storeFail(L, err)
	}
	L.Push(lua.LBool(ok))
	return 1
}
