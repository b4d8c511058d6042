package run

// This file belongs to the tools API (issue 4, runtime-2). The version here
// is a compiling stub written by runtime-1 so that the run compiles; see
// SEAMS.md for the contract.

import (
	"context"

	lua "github.com/yuin/gopher-lua"
)

// ToolConfig configures tool access for a run: the live registry, the
// capability picker and the near-duplicate threshold.
type ToolConfig struct{}

// toolRun is the per-run tools state (bindings, always list, picker cache).
type toolRun struct{}

// toolVM is the per-VM tools state (added aliases, overrides, local tools,
// calls).
type toolVM struct{}

// initTools runs at run start: the registry check of runtime.md §1 step 2.
func (r *runner) initTools() error { return nil }

// installToolsH1 sets the global `tools` in the H1 VM.
func (r *runner) installToolsH1(vm *VM) { vm.L.SetGlobal("tools", stubTable(vm.L, "tools")) }

// installToolsSection sets the global `tools` in a section or arm VM.
func (r *runner) installToolsSection(vm *VM) { vm.L.SetGlobal("tools", stubTable(vm.L, "tools")) }

// bindToolGlobals raw-sets one global per bound tool alias (§3.1 step 8).
func (r *runner) bindToolGlobals(vm *VM) {}

// takeToolBindingError returns (and clears) the first typed binding error
// a tools call recorded during the last H1 block (§2.1), or nil.
func (r *runner) takeToolBindingError(vm *VM) error { return nil }

// afterH1Tools runs once after H1 when sections exist (near-duplicate
// analysis, §6).
func (r *runner) afterH1Tools(ctx context.Context) error { return nil }

// stubTable is a table whose functions all fail with the no-model error.
func stubTable(L *lua.LState, name string) *lua.LTable {
	t := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		key := L.CheckString(2)
		L.Push(L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s.%s: %s", name, key, noModelMsg)
			return 0
		}))
		return 1
	}))
	L.SetMetatable(t, mt)
	return t
}
