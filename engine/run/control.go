package run

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/store"
	lua "github.com/yuin/gopher-lua"
)

// visible is this VM's visible set: an arm's worker VM sees the caller's
// visible set minus the worker plus the worker's children
// (docs/language.md#fanout).
func (vm *VM) visible() []*parse.Section {
	if vm.Kind == VMArm && vm.fr.visible != nil {
		return vm.fr.visible
	}
	return parse.Visible(vm.r.p, vm.Section)
}

// target reads and resolves the section target, the first argument of
// fn (docs/language.md#addressing-sections).
func (vm *VM) target(L *lua.LState, fn string) (*parse.Section, string) {
	checkArg(L, fn, 1)
	s := L.Get(1).(lua.LString)
	sec, err := parse.ResolveFrom(vm.visible(), vm.Section, string(s))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	return sec, string(s)
}

func (vm *VM) luaJump(L *lua.LState) int {
	if vm.inShared {
		L.RaiseError("jump is not available during shared library load")
	}
	sec, _ := vm.target(L, "jump")
	vm.jumpTarget = sec
	// jump records the target and then raises, so the rest of the chunk
	// does not run; even pcall(jump, t) jumps when the chunk ends.
	L.RaiseError("jump to %s", sec.Address())
	return 0
}

// raiseNested raises an error that came out of a nested chain or arm in
// the calling chunk, keeping its kind if nothing catches it.
func (vm *VM) raiseNested(err error) {
	re := AsRunError(err)
	cp := *re
	cp.nested = true
	vm.RaiseError(&cp)
}

func (vm *VM) luaExecute(L *lua.LState) int {
	sec, _ := vm.target(L, "execute")
	checkArg(L, "execute", 2)
	var input *string
	switch v := L.Get(2).(type) {
	case *lua.LNilType:
		in := vm.fr.args(vm.r)
		input = &in
	case lua.LString:
		in := string(v)
		input = &in
	}
	if vm.fr.depth+1 > maxDepth {
		L.RaiseError("execute recursion exceeded cap of %d", maxDepth)
	}
	if err := vm.checkVarGlobal(); err != nil {
		L.RaiseError("%s", err.Error())
	}
	fr := &frame{depth: vm.fr.depth + 1, parent: vm.ID, chainInput: input, claims: vm.fr.claims}
	res, err := vm.r.chain(vm.ctx, fr, sec, deepCopy(vm.vars.root).(*node), nil)
	if err != nil {
		vm.raiseNested(err)
	}
	L.Push(lua.LString(res))
	return 1
}

func (vm *VM) luaListFromSection(L *lua.LState) int {
	sec, t := vm.target(L, "list_from_section")
	if len(sec.Items) == 0 {
		L.RaiseError("section `%s` has no pre-parsed items", t)
	}
	out := L.CreateTable(len(sec.Items), 0)
	for i, it := range sec.Items {
		out.RawSetInt(i+1, lua.LString(it.Text))
	}
	L.Push(out)
	return 1
}

// member is one fanout collection member.
type member struct {
	passed lua.LValue
	item   any
}

// armResult is what one arm produced.
type armResult struct {
	text      string
	ok        bool
	exhausted bool
}

func (vm *VM) luaFanout(L *lua.LState) int {
	// The worker goes through Lua's string conversion first.
	worker := stringArg(L, "fanout", 1)
	// 1. The collection is a table.
	var coll *lua.LTable
	if n := vm.vars.nodeOf(L.Get(2)); n != nil {
		coll = vm.vars.materialize(L.Get(2).(*lua.LUserData).Value.(*varRef))
	} else if t, ok := L.Get(2).(*lua.LTable); ok {
		coll = t
	} else if err := rules.FanoutCollection(ruleValue(L.Get(2))); err != nil {
		if _, heading := L.Get(2).(lua.LString); heading {
			o, _ := api.LookupOld("fanout")
			L.RaiseError("%s (%s; docs/migration.md)", err.Error(), o.Since())
		}
		L.RaiseError("%s", err.Error())
	}
	// 2. Members, then the var copy.
	members := vm.members(L, coll)
	if err := vm.checkVarGlobal(); err != nil {
		L.RaiseError("%s", err.Error())
	}
	// 3. Depth.
	if vm.fr.depth+1 > maxDepth {
		L.RaiseError("fanout recursion exceeded cap of %d", maxDepth)
	}
	// 4. Resolve the worker.
	vis := vm.visible()
	ws, err := parse.ResolveIn(vis, worker)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	// 5. Not a list section.
	if ws.IsList && len(ws.Items) > 0 && !hasLua(ws) {
		L.RaiseError("section `%s` is a list section, not a worker template", worker)
	}
	// 6. Not empty.
	if err := rules.FanoutMembers(len(members)); err != nil {
		L.RaiseError("%s", err.Error())
	}
	var armVis []*parse.Section
	for _, s := range vis {
		if s != ws {
			armVis = append(armVis, s)
		}
	}
	armVis = append(armVis, ws.Children...)
	results, err := vm.r.fanout(vm, ws, members, armVis)
	if err != nil {
		vm.raiseNested(err)
	}
	out := L.CreateTable(len(results), 0)
	mt := fanoutResults.metatable(L)
	for i, res := range results {
		out.RawSetInt(i+1, newHandle(L, &fanoutResult{armResult: res, item: members[i].passed}, mt))
	}
	L.Push(out)
	return 1
}

func hasLua(s *parse.Section) bool {
	for _, b := range s.Blocks {
		if b.Kind == parse.LuaBlock {
			return true
		}
	}
	return false
}

// members converts a collection (docs/language.md#fanout): the array part
// first, then the other pairs as {key=k, value=v}.
func (vm *VM) members(L *lua.LState, coll *lua.LTable) []member {
	var out []member
	conv := func(v lua.LValue) any {
		switch v.Type() {
		case lua.LTFunction, lua.LTUserData, lua.LTThread:
			if vm.vars.nodeOf(v) == nil {
				L.RaiseError("fanout collection member at index %d is a %s; members must be data", len(out)+1, typeName(v))
			}
		}
		x, err := toValue(v, vm.vars.nodeOf, false, 0)
		if err != nil {
			L.RaiseError("fanout collection member at index %d: %s", len(out)+1, err.Error())
		}
		return x
	}
	n := coll.Len()
	for i := 1; i <= n; i++ {
		v := coll.RawGetInt(i)
		out = append(out, member{passed: v, item: conv(v)})
	}
	coll.ForEach(func(k, v lua.LValue) {
		if kn, ok := k.(lua.LNumber); ok && float64(kn) == math.Trunc(float64(kn)) && kn >= 1 && int(kn) <= n {
			return
		}
		switch x := k.(type) {
		case lua.LString, lua.LBool:
		case lua.LNumber:
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				L.RaiseError("fanout collection key at index %d must be a string, a finite number or a boolean", len(out)+1)
			}
		default:
			L.RaiseError("fanout collection key at index %d is a %s; keys must be strings, finite numbers or booleans", len(out)+1, typeName(k))
		}
		val := conv(v)
		kv, _ := toValue(k, nil, false, 0)
		t := L.NewTable()
		t.RawSetString("key", k)
		t.RawSetString("value", v)
		out = append(out, member{passed: t, item: &node{isObj: true, obj: map[string]any{"key": kv, "value": val}}})
	})
	return out
}

type fanoutResult struct {
	armResult
	item lua.LValue
}

// fanoutResults is the type of fanout's results.
var fanoutResults = handleType[*fanoutResult]{
	what: "fanout result",
	fields: map[string]func(*lua.LState, *fanoutResult) lua.LValue{
		"text":      func(_ *lua.LState, r *fanoutResult) lua.LValue { return lua.LString(r.text) },
		"ok":        func(_ *lua.LState, r *fanoutResult) lua.LValue { return lua.LBool(r.ok) },
		"item":      func(_ *lua.LState, r *fanoutResult) lua.LValue { return r.item },
		"exhausted": func(_ *lua.LState, r *fanoutResult) lua.LValue { return lua.LBool(r.exhausted) },
	},
	assign: func(string) string { return "fanout results are read-only" },
	str:    func(r *fanoutResult) string { return r.text },
}

// fanout runs the arms: at most FanoutConcurrency at once, results
// in collection order, the first failing arm cancels the others.
func (r *runner) fanout(caller *VM, worker *parse.Section, members []member, armVis []*parse.Section) ([]armResult, error) {
	ctx, cancel := context.WithCancel(caller.ctx)
	defer cancel()
	tracker := store.NewRaceTracker()
	results := make([]armResult, len(members))
	sem := make(chan struct{}, r.limits.FanoutConcurrency)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		re := AsRunError(err)
		if firstErr == nil || (isCancel(firstErr) && !isCancel(re)) {
			firstErr = re
		}
		cancel()
	}
launch:
	for i := range members {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break launch
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				if p := recover(); p != nil {
					fail(&RunError{Kind: KindInternal, Variant: "FanoutArmJoin", Msg: fmt.Sprintf("fanout arm %d panicked: %v", i+1, p)})
				}
			}()
			claims := append(append([]store.Claim(nil), caller.fr.claims...), store.Claim{Tracker: tracker, Arm: i + 1})
			fr := &frame{depth: caller.fr.depth + 1, parent: caller.ID, arm: &armInfo{index: i + 1, item: members[i].item}, visible: armVis, claims: claims}
			res, err := r.arm(ctx, fr, worker, deepCopy(caller.vars.root).(*node), caller.startReply)
			if err != nil {
				if re, ok := err.(*RunError); ok && re.Variant == "ToolLoopExhausted" && !re.nested {
					results[i] = armResult{text: "## " + itemText(members[i].item) + "\n\nUNKNOWN\n\n(section incomplete: tool loop exhausted)", exhausted: true}
					return
				}
				fail(err)
				return
			}
			results[i] = res
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := caller.ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	return results, nil
}

func isCancel(err error) bool {
	re, ok := err.(*RunError)
	return ok && re.Kind == KindCancelled
}

// itemText renders an item for the exhausted stub: strings as-is, numbers
// and booleans naturally, tables as compact JSON.
func itemText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return formatNumber(x)
	}
	return compactJSON(v)
}

// arm runs one fanout arm: the worker's block walk, then a chain when it
// jumped.
func (r *runner) arm(ctx context.Context, fr *frame, worker *parse.Section, vars *node, reply *string) (res armResult, err error) {
	if q := r.budget.EnterArm(); q != nil {
		return armResult{}, &RunError{Kind: KindQuota, Variant: "LuaQuota", Msg: q.Error(), Cause: q, Line: r.sectionLine(worker)}
	}
	id := r.nextID.Add(1)
	ev := SectionEvent{ID: id, Name: worker.Name, Address: worker.Address(), Line: r.sectionLine(worker), Depth: fr.depth, Index: fr.arm.index, Parent: fr.parent}
	r.obs.SectionEnter(ev)
	defer func() {
		ev.Err = err
		if err == nil {
			t := res.text
			ev.Reply = &t
		}
		r.obs.SectionExit(ev)
	}()
	vm, err := r.newVM(ctx, VMArm, worker, fr, id, vars, reply)
	if err != nil {
		return armResult{}, err
	}
	out, err := vm.runBlocks(ctx, reply)
	vm.close()
	if err != nil {
		return armResult{}, err
	}
	switch out.kind {
	case outReturned:
		return armResult{text: out.value, ok: true}, nil
	case outJumped:
		cfr := &frame{depth: fr.depth, parent: id, claims: fr.claims}
		text, err := r.chain(ctx, cfr, out.target, vars, out.reply)
		if err != nil {
			return armResult{}, err
		}
		return armResult{text: text, ok: true}, nil
	}
	if out.reply != nil {
		return armResult{text: *out.reply, ok: true}, nil
	}
	return armResult{ok: true}, nil
}
