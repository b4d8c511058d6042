package run

import (
	"fmt"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	lua "github.com/yuin/gopher-lua"
)

// hostFunc is the Go side of one host function.
type hostFunc func(vm *VM, L *lua.LState) int

// hostFuncs maps every host function of engine/api, by the name a prompt
// calls (synonyms included), to its implementation. Which VM gets which
// function, and what a call in the wrong place says, comes from the api
// table (installHostAPI); adding a host function is an api entry plus a
// line here, which TestHostFuncsMatchAPI checks. (It is filled on first
// use, not at process start, by a function rather than a variable's
// initializer: the functions reach newVM, which reads the map.)
var (
	hostFuncsOnce sync.Once
	hostFuncsMap  map[string]hostFunc
)

func hostFuncs() map[string]hostFunc {
	hostFuncsOnce.Do(fillHostFuncs)
	return hostFuncsMap
}

func fillHostFuncs() {
	hostFuncsMap = map[string]hostFunc{
		"log":       (*VM).luaLog,
		"untrusted": (*VM).luaUntrusted,

		"jump":              (*VM).luaJump,
		"execute":           (*VM).luaExecute,
		"fanout":            (*VM).luaFanout,
		"list_from_section": (*VM).luaListFromSection,

		"store.write":         (*VM).storeWrite,
		"store.append":        (*VM).storeAppend,
		"store.read":          (*VM).storeRead,
		"store.read_numbered": (*VM).storeReadNumbered,
		"store.str_replace":   (*VM).storeStrReplace,
		"store.delete":        (*VM).storeDelete,
		"store.glob":          (*VM).storeGlob,
		"store.exists":        (*VM).storeExists,

		"tools.bind":      func(vm *VM, L *lua.LState) int { return vm.toolsBind(L, "tools.bind") },
		"tools.need":      func(vm *VM, L *lua.LState) int { return vm.toolsBind(L, "tools.need") },
		"tools.always":    (*VM).toolsAlways,
		"tools.add":       (*VM).toolsAdd,
		"tools.add_local": (*VM).toolsAddLocal,

		"models.bind":    func(vm *VM, L *lua.LState) int { return vm.modelsBind(L, "models.bind", false) },
		"models.need":    func(vm *VM, L *lua.LState) int { return vm.modelsBind(L, "models.need", false) },
		"models.default": (*VM).modelsDefault,
		"models.use":     (*VM).modelsUse,
		"models.get":     (*VM).modelsGet,
		"models.infer":   (*VM).modelsInfer,
	}
}

// hostName is one host function as a VM installs it.
type hostName struct {
	// name is the name a prompt calls ("tools.need"); member is its last
	// part for a table member ("need"), "" for a global.
	name, member string
	entry        *api.Entry
}

// hostGlobal is one global a VM gets from the api table: a function, or a
// table of functions.
type hostGlobal struct {
	hostName
	// members are a table's function members; nil for a function.
	members []hostName
}

// hostLayout lists, per context (api.H1 and api.Section), the host
// functions and tables a VM installs. Globals whose value is data (args,
// reply, item, var, sys) are set up by newVM itself. Built on first use.
var hostLayout = sync.OnceValue(func() map[api.Where][]hostGlobal {
	return map[api.Where][]hostGlobal{api.H1: layoutFor(api.H1), api.Section: layoutFor(api.Section)}
})

func layoutFor(w api.Where) []hostGlobal {
	var out []hostGlobal
	for _, g := range api.Globals(w) {
		e, _ := api.Lookup(g)
		if !e.Host {
			continue
		}
		if e.IsFunc() {
			out = append(out, hostGlobal{hostName: hostName{name: g, entry: e}})
			continue
		}
		var members []hostName
		for _, m := range api.Members(g, w) {
			if me, _ := api.Lookup(g + "." + m); me.IsFunc() {
				members = append(members, hostName{name: g + "." + m, member: m, entry: me})
			}
		}
		if members != nil {
			out = append(out, hostGlobal{hostName: hostName{name: g, entry: e}, members: members})
		}
	}
	return out
}

// where is the api context of this VM's own chunks.
func (vm *VM) where() api.Where {
	if vm.Kind == vmH1 {
		return api.H1
	}
	return api.Section
}

// installHostAPI sets the host functions and the tools, models and store
// tables, as the api table places them: a name the context may use gets
// its implementation, a name defined there but not allowed a function
// that raises the placement error, any other name nothing.
func (vm *VM) installHostAPI() {
	L := vm.L
	w := vm.where()
	for _, g := range hostLayout()[w] {
		if g.members == nil {
			L.SetGlobal(g.name, vm.hostFunction(g.hostName, w))
			continue
		}
		t := L.NewTable()
		for _, m := range g.members {
			t.RawSetString(m.member, vm.hostFunction(m, w))
		}
		L.SetGlobal(g.name, t)
	}
	vm.Tools.table, _ = L.GetGlobal("tools").(*lua.LTable)
}

// hostFunction is the Lua function installed for h in context w.
func (vm *VM) hostFunction(h hostName, w api.Where) *lua.LFunction {
	if h.entry.Allowed&w == 0 {
		msg := misplaced(h)
		return vm.L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s", msg)
			return 0
		})
	}
	impl, ok := hostFuncs()[h.name]
	if !ok {
		err := errorf(KindInternal, "%s is in the API table but has no implementation", h.name)
		return vm.L.NewFunction(func(*lua.LState) int {
			vm.RaiseError(err)
			return 0
		})
	}
	if evalRefused[h.name] {
		return vm.L.NewFunction(func(L *lua.LState) int {
			vm.refuseInEval(L, h.name)
			return impl(vm, L)
		})
	}
	return vm.L.NewFunction(func(L *lua.LState) int { return impl(vm, L) })
}

// misplaced is upstream's error for calling h where it is defined but not
// allowed: an H1 declaration in a section, a section function in the H1.
func misplaced(h hostName) string {
	switch {
	case h.entry.Misplaced != "":
		return h.entry.Misplaced
	case h.entry.Allowed&api.H1 != 0:
		return h.name + " is only available during live H1 execution"
	case h.member != "":
		return h.name + " is only available during H2 recording"
	}
	return h.name + " is only available in sections (## headings); H1 runs before sections exist"
}

// handleType describes a frozen userdata whose fields are read by name:
// tool and model objects, fanout results. Reading any other key gives
// nil; every write raises.
type handleType[T any] struct {
	// what names the type in argument errors ("Tool expected").
	what string
	// fields computes the readable fields.
	fields map[string]func(L *lua.LState, v T) lua.LValue
	// assign is the error for a write to field.
	assign func(field string) string
	// str is what tostring shows.
	str func(v T) string
	// sealed, when set, is what getmetatable returns instead of the
	// metatable.
	sealed string
}

// metatable builds the metatable of the type in L; share it between
// values of one VM.
func (h *handleType[T]) metatable(L *lua.LState) *lua.LTable {
	get := func(L *lua.LState) T {
		v, ok := L.CheckUserData(1).Value.(T)
		if !ok {
			L.ArgError(1, h.what+" expected")
		}
		return v
	}
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		v := get(L)
		if f, ok := h.fields[L.Get(2).String()]; ok {
			L.Push(f(L, v))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s", h.assign(L.Get(2).String()))
		return 0
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(h.str(get(L))))
		return 1
	}))
	if h.sealed != "" {
		mt.RawSetString("__metatable", lua.LString(h.sealed))
	}
	return mt
}

// newHandle wraps v in a userdata with metatable mt (from metatable).
func newHandle(L *lua.LState, v any, mt *lua.LTable) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = v
	ud.Metatable = mt
	return ud
}

// frozen is the assign error of tool and model objects.
func frozen(kind string) func(string) string {
	return func(field string) string {
		if o, ok := api.LookupOld(kind + "." + field); ok && o.Kind == api.OldAssign {
			return fmt.Sprintf("%s objects are frozen: cannot assign field %q; give the description as the override argument, e.g. %s (%s; docs/migration.md)", kind, field, o.New, o.Since())
		}
		return fmt.Sprintf("%s objects are frozen: cannot assign field %q", kind, field)
	}
}

// optional pushes a pointer field: nil when unset.
func optional[T any](p *T, conv func(T) lua.LValue) lua.LValue {
	if p == nil {
		return lua.LNil
	}
	return conv(*p)
}
