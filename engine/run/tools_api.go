package run

// The tools API (docs/language.md#tools): tools.bind (and its upstream
// synonym tools.need), tools.always, tools.add, tools.add_local and
// tools.calls, plus the per-run registry, picker and envelope.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/loop"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/forge-lsp/forge-lsp/engine/tools"
	lua "github.com/yuin/gopher-lua"
)

// ToolConfig configures tool access for a run.
type ToolConfig struct {
	// Extra are tools added to the catalog after the built-ins, e.g. the
	// workspace tools of forge-tools.json (tools.LoadWorkspaceTools).
	Extra []tools.Tool
	// DisableWebSearch leaves the built-in web_search out of the catalog.
	// It is in by default and reaches the gateway through the run's model
	// client, built lazily like every other model call.
	DisableWebSearch bool
	// DisableWebFetch leaves the built-in web_fetch out of the catalog. It
	// is in by default (as in the upstream CLI) and fetches pages from
	// this machine.
	DisableWebFetch bool
	// WebFetchAllowPrivate lets web_fetch reach loopback, private and
	// other non-public addresses, which it refuses by default (see
	// tools.WebFetchAllowPrivateEnv).
	WebFetchAllowPrivate bool
	// Picker holds the picker thresholds; the zero value means
	// tools.DefaultPickerConfig().
	Picker toolrule.PickerConfig
	// NearDuplicateThreshold is the near-duplicate run limit; 0 means
	// toolrule.NearDuplicateThreshold (0.90).
	NearDuplicateThreshold float64
}

// toolBinding is one tools.bind declaration.
type toolBinding struct {
	alias, capability string
	// override is bind's third argument, replaced by an always override.
	override *string
	tool     tools.Tool
}

// toolRun is the per-run tools state. Bindings are written only by the H1
// VM and read-only afterwards, so concurrent fanout arms need no lock.
type toolRun struct {
	registry  *tools.Registry
	picker    *lazyPicker
	envelope  *tools.Envelope
	threshold float64

	bindings map[string]*toolBinding
	boundIDs map[toolrule.ID]string
	always   []string
}

// lazyPicker builds the capability picker on the first tools.bind: most
// runs bind nothing, and a debugger re-runs a prompt many times.
type lazyPicker struct {
	once sync.Once
	reg  *tools.Registry
	cfg  toolrule.PickerConfig
	p    *toolrule.Picker
}

func (l *lazyPicker) get() *toolrule.Picker {
	l.once.Do(func() { l.p = toolrule.NewPicker(l.reg.Catalog(), l.cfg) })
	return l.p
}

// localTool is one tools.add_local declaration.
type localTool struct {
	alias, description string
	schema             json.RawMessage
	fn                 *lua.LFunction
}

// toolVM is the per-VM tools state.
type toolVM struct {
	// bindErr is the first typed binding error of the current H1 block.
	bindErr error
	// added are the aliases added in this VM, in order; addOverride their
	// tools.add overrides.
	added       []string
	addOverride map[string]string
	locals      []*localTool
	localByName map[string]*localTool
	// madeAvailable is the prompt file line of the call that made each
	// added or local tool available, for the near-duplicate error.
	madeAvailable map[string]int
	// calls are the tools.calls counts; callsUD the installed proxy.
	calls   map[string]int
	callsUD *lua.LUserData
	table   *lua.LTable
	// scope is the effective scope built by beforeProse for the next
	// model call.
	scope []loop.Binding
	// handleMT is the frozen-handle metatable of this VM.
	handleMT *lua.LTable
}

// toolHandle is the value behind a frozen tool object.
type toolHandle struct {
	alias, description, wireName string
	parameters                   json.RawMessage
}

// lazySearcher lets web_search reach the gateway through the run's client,
// which is only built when a tool call needs it.
type lazySearcher struct{ r *runner }

func (s lazySearcher) WebSearch(ctx context.Context, body []byte) ([]byte, error) {
	c, err := s.r.modelClient()
	if err != nil {
		return nil, err
	}
	return c.WebSearch(ctx, body)
}

func bindingError(variant, format string, a ...any) *RunError {
	return &RunError{Kind: KindBinding, Variant: variant, Msg: fmt.Sprintf(format, a...)}
}

// initTools checks the registry (docs/language.md#run-entry) and prepares the
// picker and the envelope.
func (r *runner) initTools() error {
	tc := r.cfg.Tools
	var list []tools.Tool
	if !tc.DisableWebSearch {
		list = append(list, tools.NewWebSearch(lazySearcher{r}))
	}
	if !tc.DisableWebFetch {
		list = append(list, tools.NewGuardedWebFetch(tc.WebFetchAllowPrivate))
	}
	list = append(list, tc.Extra...)
	seen := map[toolrule.ID]bool{}
	for _, t := range list {
		if seen[t.ID()] {
			return bindingError("DuplicateLiveToolId", "two live tools share the id %s", t.ID())
		}
		seen[t.ID()] = true
		if w := t.WireName(); w == "" || strings.ContainsRune(w, '/') || strings.ContainsFunc(w, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
			return &RunError{Kind: KindInternal, Variant: "InvalidToolWireName", Msg: fmt.Sprintf("tool %s has an invalid wire name %q", t.ID(), w)}
		}
	}
	reg, err := tools.NewRegistry(list...)
	if err != nil {
		return &RunError{Kind: KindInternal, Variant: "InvalidToolWireName", Msg: err.Error(), Cause: err}
	}
	pc := tc.Picker
	if pc == (toolrule.PickerConfig{}) {
		pc = toolrule.DefaultPickerConfig()
	}
	env, ok := tools.EnvelopeWithNonce(r.nonce)
	if !ok {
		return &RunError{Kind: KindInternal, Msg: "run nonce is not 32 lowercase hex digits"}
	}
	r.tools = toolRun{registry: reg, picker: &lazyPicker{reg: reg, cfg: pc}, envelope: env, threshold: tc.NearDuplicateThreshold,
		bindings: map[string]*toolBinding{}, boundIDs: map[toolrule.ID]string{}}
	if r.tools.threshold <= 0 {
		r.tools.threshold = toolrule.NearDuplicateThreshold
	}
	return nil
}

// afterH1Tools runs once after H1 when sections exist. The Go engine's
// near-duplicate rule compares model-facing descriptions per section at
// each prose block, so nothing is computed here; the hook
// only re-checks that every bound tool is still live.
func (r *runner) afterH1Tools(ctx context.Context) error {
	for _, b := range r.tools.bindings {
		if _, ok := r.tools.registry.Get(b.tool.ID()); !ok {
			return bindingError("ToolScopeAnalysisSource", "tool alias %q is bound to %s, which is not in the catalog", b.alias, b.tool.ID())
		}
	}
	return nil
}

// takeToolBindingError returns and clears the block's typed tools error.
func (r *runner) takeToolBindingError(vm *VM) error {
	err := vm.Tools.bindErr
	vm.Tools.bindErr = nil
	return err
}

// raiseBinding records a typed binding error (first one wins,
// docs/language.md#h1-pass) and raises it in Lua.
func (vm *VM) raiseToolBinding(err *RunError) {
	vm.atCaller(err)
	if vm.Tools.bindErr == nil {
		vm.Tools.bindErr = err
	}
	vm.RaiseError(err)
}

// bindToolGlobals raw-sets one global per bound alias
// (docs/language.md#vm-setup). The section form of a handle has empty
// parameters and the id's name as wire_name (docs/language.md#tool-handles).
func (r *runner) bindToolGlobals(vm *VM) {
	for alias, b := range r.tools.bindings {
		h := &toolHandle{alias: alias, description: b.capability, wireName: b.tool.ID().Name, parameters: json.RawMessage(`{}`)}
		vm.L.G.Global.RawSetString(alias, vm.toolHandleValue(h))
	}
}

// toolHandles is the type of tool objects.
var toolHandles = handleType[*toolHandle]{
	what: "Tool",
	fields: map[string]func(*lua.LState, *toolHandle) lua.LValue{
		"name":        func(_ *lua.LState, h *toolHandle) lua.LValue { return lua.LString(h.alias) },
		"description": func(_ *lua.LState, h *toolHandle) lua.LValue { return lua.LString(h.description) },
		"wire_name":   func(_ *lua.LState, h *toolHandle) lua.LValue { return lua.LString(h.wireName) },
		// Trust is decided per call output, never per handle.
		"untrusted": func(*lua.LState, *toolHandle) lua.LValue { return lua.LFalse },
		"parameters": func(L *lua.LState, h *toolHandle) lua.LValue {
			var v any
			if json.Unmarshal(h.parameters, &v) != nil {
				v = map[string]any{}
			}
			return jsonToLua(L, v)
		},
	},
	assign: frozen("Tool"),
	str:    func(h *toolHandle) string { return "tool " + h.alias },
	sealed: "Tool objects are frozen",
}

// toolHandleValue builds a frozen tool object.
func (vm *VM) toolHandleValue(h *toolHandle) *lua.LUserData {
	if vm.Tools.handleMT == nil {
		vm.Tools.handleMT = toolHandles.metatable(vm.L)
	}
	return newHandle(vm.L, h, vm.Tools.handleMT)
}

// toolsBind is tools.bind / tools.need (docs/language.md#declaring-tools).
func (vm *VM) toolsBind(L *lua.LState, label string) int {
	r := vm.r
	checkArgs(L, label)
	alias, capab := L.Get(1).(lua.LString), L.Get(2).(lua.LString)
	var override *string
	if o, ok := L.Get(3).(lua.LString); ok {
		s := string(o)
		override = &s
	}
	if L.GetTop() > 3 {
		L.RaiseError("%s expects at most three arguments", label)
	}
	a := string(alias)
	if !toolrule.ValidAlias(a) {
		L.RaiseError("%s", toolrule.AliasError("tool", a))
	}
	if _, dup := r.tools.bindings[a]; dup {
		vm.raiseToolBinding(bindingError("DuplicateAlias", "tool alias %q was declared more than once", a))
	}
	d := r.tools.picker.get().Resolve(string(capab))
	if err := d.Err("tool", string(capab)); err != nil {
		variant := map[toolrule.Outcome]string{toolrule.Absent: "Absent", toolrule.Duplicate: "Duplicate", toolrule.Ambiguous: "Ambiguous", toolrule.Invalid: "BindQuery"}[d.Outcome]
		vm.raiseToolBinding(bindingError(variant, "tool alias %q: %v", a, err))
	}
	id := d.IDs[0]
	tool, live := r.tools.registry.Get(id)
	if !live {
		vm.raiseToolBinding(bindingError("PickedToolNotLive", "tool alias %q: picked tool %s is not live", a, id))
	}
	if other, twice := r.tools.boundIDs[id]; twice {
		vm.raiseToolBinding(bindingError("ToolIdSelectedTwice", "tool aliases %q and %q both resolve to %s; bind it once and reuse the alias", other, a, id))
	}
	r.tools.bindings[a] = &toolBinding{alias: a, capability: string(capab), override: override, tool: tool}
	r.tools.boundIDs[id] = a
	L.Push(vm.toolHandleValue(&toolHandle{alias: a, description: string(capab), wireName: tool.WireName(), parameters: tool.Parameters()}))
	return 1
}

// toolsAlways is tools.always(alias, override?)
// (docs/language.md#declaring-tools).
func (vm *VM) toolsAlways(L *lua.LState) int {
	r := vm.r
	checkArg(L, "tools.always", 1)
	alias, ok := L.Get(1).(lua.LString)
	if h, isH := handleOf(L.Get(1)); !ok && isH {
		alias = lua.LString(h.alias)
	}
	a := string(alias)
	if !toolrule.ValidAlias(a) {
		L.RaiseError("%s", toolrule.AliasError("tool", a))
	}
	b, bound := r.tools.bindings[a]
	if !bound {
		L.RaiseError("tools.always alias %q was not declared by tools.bind", a)
	}
	for _, x := range r.tools.always {
		if x == a {
			L.RaiseError("tools.always alias %q was recorded more than once", a)
		}
	}
	checkArg(L, "tools.always", 2)
	if o, ok := L.Get(2).(lua.LString); ok {
		s := string(o)
		b.override = &s
	}
	r.tools.always = append(r.tools.always, a)
	return 0
}

func handleOf(v lua.LValue) (*toolHandle, bool) {
	ud, ok := v.(*lua.LUserData)
	if !ok {
		return nil, false
	}
	h, ok := ud.Value.(*toolHandle)
	return h, ok
}

// toolsAdd is tools.add(...) (docs/language.md#scoping-tools): atomic,
// arrays, handles, overrides.
func (vm *VM) toolsAdd(L *lua.LState) int {
	r := vm.r
	type entry struct {
		alias    string
		override *string
	}
	var entries []entry
	// aliasOf is the alias of a string or a Tool object, which
	// rules.ArgTypes and rules.ToolsAddMember have let through.
	aliasOf := func(v lua.LValue) string {
		if h, ok := handleOf(v); ok {
			return h.alias
		}
		return string(v.(lua.LString))
	}
	checkArg(L, "tools.add", 1)
	switch first := L.Get(1).(type) {
	case *lua.LNilType:
		if L.GetTop() > 1 {
			L.RaiseError(rules.ToolsAddShape, 1, "tools.add", "nil")
		}
		return 0
	case *lua.LTable:
		if L.GetTop() > 1 {
			L.RaiseError("tools.add array form takes no override")
		}
		for i := 1; ; i++ {
			v := first.RawGetInt(i)
			if v == lua.LNil {
				break
			}
			if err := rules.ToolsAddMember(i, ruleValue(v)); err != nil {
				L.RaiseError("%s", err.Error())
			}
			entries = append(entries, entry{alias: aliasOf(v)})
		}
	default:
		e := entry{alias: aliasOf(first)}
		checkArg(L, "tools.add", 2)
		if o, ok := L.Get(2).(lua.LString); ok {
			s := string(o)
			e.override = &s
		}
		if L.GetTop() > 2 {
			o, _ := api.LookupOld("tools.add")
			L.RaiseError("tools.add takes one alias plus an optional override, got extra %s; for several tools pass one array, %s (%s; docs/migration.md)", typeName(L.Get(3)), o.New, o.Since())
		}
		entries = append(entries, e)
	}
	// Validate everything first: a failure applies nothing.
	for _, e := range entries {
		if !toolrule.ValidAlias(e.alias) {
			L.RaiseError("%s", toolrule.AliasError("tool", e.alias))
		}
		if _, ok := r.tools.bindings[e.alias]; !ok {
			if _, local := vm.Tools.localByName[e.alias]; local {
				L.RaiseError("tools.add alias %q is a local tool: local tools are in scope from the next prose block without tools.add", e.alias)
			}
			L.RaiseError("tools.add alias %q was not declared by tools.bind", e.alias)
		}
	}
	for _, e := range entries {
		if e.override != nil {
			vm.Tools.addOverride[e.alias] = *e.override
		}
		if r.isAlways(e.alias) || contains(vm.Tools.added, e.alias) {
			continue
		}
		vm.Tools.added = append(vm.Tools.added, e.alias)
		vm.markAvailable(L, e.alias)
	}
	return 0
}

// markAvailable remembers the line of the call making alias available.
func (vm *VM) markAvailable(L *lua.LState, alias string) {
	if vm.Tools.madeAvailable == nil {
		vm.Tools.madeAvailable = map[string]int{}
	}
	vm.Tools.madeAvailable[alias] = vm.callerLine(L)
}

func (r *runner) isAlways(a string) bool { return contains(r.tools.always, a) }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// toolsAddLocal is tools.add_local(alias, description, params, handler)
// (docs/language.md#local-tools).
func (vm *VM) toolsAddLocal(L *lua.LState) int {
	r := vm.r
	checkArg(L, "tools.add_local", 1)
	a := string(L.Get(1).(lua.LString))
	if !toolrule.ValidAlias(a) {
		L.RaiseError("%s", toolrule.AliasError("tool", a))
	}
	checkArgs(L, "tools.add_local")
	desc, params, fn := L.Get(2).(lua.LString), L.Get(3).(*lua.LTable), L.Get(4).(*lua.LFunction)
	if _, bound := r.tools.bindings[a]; bound {
		L.RaiseError("tools.add_local alias %q duplicates a declared tool alias", a)
	}
	if _, dup := vm.Tools.localByName[a]; dup {
		L.RaiseError("tools.add_local alias %q is already registered", a)
	}
	schema, err := localSchema(params)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	lt := &localTool{alias: a, description: string(desc), schema: schema, fn: fn}
	vm.Tools.locals = append(vm.Tools.locals, lt)
	vm.Tools.localByName[a] = lt
	vm.markAvailable(L, a)
	return 0
}

// localSchema turns a params table into a JSON Schema object with every
// parameter required.
func localSchema(params *lua.LTable) (json.RawMessage, error) {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description,omitempty"`
	}
	props := map[string]prop{}
	var names []string
	var err error
	params.ForEach(func(k, v lua.LValue) {
		if err != nil {
			return
		}
		if err = rules.LocalParamName(ruleValue(k)); err != nil {
			return
		}
		name := k.(lua.LString)
		p := prop{}
		switch x := v.(type) {
		case lua.LString:
			p.Type = string(x)
		case *lua.LTable:
			t, ok := x.RawGetInt(1).(lua.LString)
			d := x.RawGetInt(2)
			if !ok || (d != lua.LNil && d.Type() != lua.LTString) || x.Len() > 2 {
				err = fmt.Errorf("tools.add_local param %q must be a type string or a {type, description} array", string(name))
				return
			}
			p.Type = string(t)
			if d != lua.LNil {
				p.Description = d.String()
			}
		default:
			err = fmt.Errorf("tools.add_local param %q must be a type string or a {type, description} array", string(name))
			return
		}
		if err = rules.LocalParamType(string(name), p.Type); err != nil {
			return
		}
		props[string(name)] = p
		names = append(names, string(name))
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required"`
	}{"object", props, names})
	return b, nil
}

// description returns the model-facing description of a bound alias in this
// VM (docs/language.md#description-precedence: add override, then bind/always
// override, then catalog).
func (vm *VM) toolDescription(b *toolBinding) string {
	if o, ok := vm.Tools.addOverride[b.alias]; ok {
		return o
	}
	if b.override != nil {
		return *b.override
	}
	return b.tool.Description()
}

// buildToolScope rebuilds the effective scope (docs/language.md#tool-scope):
// always aliases, added aliases, then local tools. H1 gets the always aliases
// bound so far and nothing else.
func (vm *VM) buildToolScope(ctx context.Context) ([]loop.Binding, error) {
	r := vm.r
	var scope []loop.Binding
	aliases := append([]string(nil), r.tools.always...)
	if vm.Kind != vmH1 {
		aliases = append(aliases, vm.Tools.added...)
	}
	for _, a := range aliases {
		b := r.tools.bindings[a]
		if !toolrule.ValidWireName(a) || !isJSONObject(b.tool.Parameters()) {
			return nil, bindingError("BindSchema", "tool alias %q cannot be advertised: its parameters are not a JSON Schema object", a)
		}
		if _, live := r.tools.registry.Get(b.tool.ID()); !live {
			return nil, &RunError{Kind: kindTool, Variant: "UnknownScopedTool", Msg: "section scoped unknown tool " + a}
		}
		tool := b.tool
		scope = append(scope, loop.Binding{Alias: a, Description: vm.toolDescription(b), Parameters: tool.Parameters(), Tool: tool.ID(), Call: tool.Call})
	}
	if vm.Kind != vmH1 {
		for _, lt := range vm.Tools.locals {
			lt := lt
			scope = append(scope, loop.Binding{Alias: lt.alias, Description: lt.description, Parameters: lt.schema,
				Tool: toolrule.ID{Server: "local", Name: lt.alias}, Local: true,
				Call: func(ctx context.Context, args string) (tools.Output, error) { return vm.callLocal(lt, args) }})
		}
	}
	return scope, nil
}

func isJSONObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// callLocal runs a local handler with the model's arguments (not
// validated against the schema, as upstream). Its output is trusted.
func (vm *VM) callLocal(lt *localTool, args string) (tools.Output, error) {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return tools.Output{}, &RunError{Kind: KindLua, Msg: "local tool arguments are not JSON: " + err.Error()}
	}
	s, err := vm.CallHandler(lt.fn, jsonToLua(vm.L, v))
	if err != nil {
		return tools.Output{}, err
	}
	return tools.Trusted(s), nil
}

// checkNearDuplicates rejects near-duplicate tools in a section's scope
// (docs/language.md#near-duplicate-tools) before the prose block pr. The
// error points where `check` does: at the call that made the second tool
// available, or, for a tool the H1 made available, at the prose block.
func (vm *VM) checkNearDuplicates(scope []loop.Binding, pr *parse.Prose) error {
	descs := make([]toolrule.Described, len(scope))
	for i, b := range scope {
		descs[i] = toolrule.Described{Alias: b.Alias, Description: b.Description}
	}
	if pairs := toolrule.NearDuplicatesAt(descs, vm.r.tools.threshold); len(pairs) > 0 {
		err := bindingError("NearDuplicateTools", "%s", pairs[0].Message())
		err.Line = vm.Tools.madeAvailable[pairs[0].B.Alias]
		if f := vm.r.p.File; err.Line == 0 && f != nil && pr != nil {
			err.Line = f.Line(pr.Span.Start)
		}
		return err
	}
	return nil
}

// installCalls installs tools.calls at the first prose block
// (docs/language.md#call-counts).
func (vm *VM) installCalls() {
	L := vm.L
	vm.Tools.calls = map[string]int{}
	ud := L.NewUserData()
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		ks, ok := k.(lua.LString)
		if n, in := vm.Tools.calls[string(ks)]; ok && in {
			L.Push(lua.LNumber(n))
			return 1
		}
		L.RaiseError("%s", vm.callsMissing(lua.LVAsString(L.ToStringMeta(k))))
		return 0
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("tools.calls is read-only")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LString("tools.calls is read-only"))
	ud.Metatable = mt
	vm.Tools.callsUD = ud
	vm.Tools.table.RawSetString("calls", ud)
}

// callsMissing is the hard error for a key that is not in scope: the
// sorted in-scope aliases, then a hint.
func (vm *VM) callsMissing(k string) string {
	in := make([]string, 0, len(vm.Tools.calls))
	for a := range vm.Tools.calls {
		in = append(in, fmt.Sprintf("%q", a))
	}
	sort.Strings(in)
	msg := fmt.Sprintf("tools.calls: %q is not in this section's tool scope; in-scope aliases: [%s]", k, strings.Join(in, ", "))
	if _, bound := vm.r.tools.bindings[k]; bound {
		msg += " (alias was declared by tools.bind but not added to this section's scope)"
	} else if len(in) > 0 {
		msg += " - check for typos or add it via tools.add"
	}
	return msg
}

// toolsBeforeProse is the tools part of a prose block's first steps
// (docs/language.md#section-blocks): scope, tools.calls, and 4.
func (vm *VM) toolsBeforeProse(ctx context.Context, step *ProseStep) error {
	scope, err := vm.buildToolScope(ctx)
	if err != nil {
		return err
	}
	if vm.Kind != vmH1 {
		if step.First && vm.Tools.callsUD == nil {
			vm.installCalls()
		}
		for _, b := range scope {
			if _, ok := vm.Tools.calls[b.Alias]; !ok {
				vm.Tools.calls[b.Alias] = 0
			}
		}
		if err := vm.checkNearDuplicates(scope, step.Prose); err != nil {
			return err
		}
	}
	vm.Tools.scope = scope
	return nil
}

// declaredTool reports whether alias was bound by tools.bind (for the
// out-of-scope error variant). H1 always reports the unknown form.
func (vm *VM) declaredTool(alias string) bool {
	if vm.Kind == vmH1 {
		return false
	}
	_, ok := vm.r.tools.bindings[alias]
	return ok
}
