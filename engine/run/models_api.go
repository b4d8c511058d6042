package run

// The models API (docs/language.md#models): models.bind (and models.need),
// models.default, models.use, models.get, models.infer and Model:infer, plus
// the lazily built gateway client and the model catalog.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/rules"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	lua "github.com/yuin/gopher-lua"
)

// ModelConfig configures model access for a run.
type ModelConfig struct {
	// Client is the gateway client: live (gateway.New), recording
	// (gateway.NewRecording) or replaying (gateway.NewReplay). nil means
	// build one with Connect the first time a model is needed.
	Client *gateway.Client
	// Connect resolves the gateway settings for that lazy client (the
	// host's policy: engine/session reads its settings and the
	// environment). The run never reads the environment itself; nil
	// Connect means no gateway, which fails the first model call with a
	// message naming PROMPTFORGE_GATEWAY_URL, PROMPTFORGE_GATEWAY_API_KEY
	// and --replay.
	Connect func() (gateway.Config, error)
	// Catalog is the model catalog. nil means fetch GET {base}/models
	// through the client at the first model binding.
	Catalog []gateway.Model
	// Picker holds the picker thresholds for models; the zero value means
	// tools.DefaultPickerConfig().
	Picker toolrule.PickerConfig
}

// modelBinding is a resolved model alias with its frozen options.
type modelBinding struct {
	alias, description string
	model              gateway.Model
	temperature        *float64
	maxTokens          *int64
	thinking           *bool
}

// modelRun is the per-run models state.
type modelRun struct {
	mu         sync.Mutex
	client     *gateway.Client
	clientErr  error
	catalog    []gateway.Model
	catalogSet bool
	pickers    map[string]*toolrule.Picker

	// Written by the H1 VM only, read-only afterwards.
	bindings map[string]*modelBinding
	def      *modelBinding
	defSet   bool
}

// modelVM is the per-VM models state.
type modelVM struct {
	bindErr error
	// use is the models.use selection; useCalled enforces once per section.
	use       *modelBinding
	useCalled bool
	// frozen is the prose model, fixed at the first prose block.
	frozen   *modelBinding
	resolved bool
	// history is the section conversation: one per VM, no system
	// message.
	history  []gateway.Message
	handleMT *lua.LTable
}

// modelHandle is the value behind a model object.
type modelHandle struct{ b *modelBinding }

// initModels prepares model access (docs/language.md#run-entry). The client
// itself is built lazily.
func (r *runner) initModels() error {
	r.models.bindings = map[string]*modelBinding{}
	r.models.pickers = map[string]*toolrule.Picker{}
	if r.cfg.Models.Catalog != nil {
		r.models.catalog, r.models.catalogSet = r.cfg.Models.Catalog, true
	}
	return nil
}

// modelClient returns the run's client, building it from the environment
// on first use. Safe for concurrent arms.
func (r *runner) modelClient() (*gateway.Client, error) {
	r.models.mu.Lock()
	defer r.models.mu.Unlock()
	if r.models.client != nil || r.models.clientErr != nil {
		return r.models.client, r.models.clientErr
	}
	if c := r.cfg.Models.Client; c != nil {
		// A supplied client gets the run's timeout and response cap.
		r.models.client = c.WithLimits(r.limits.RequestTimeout, r.limits.MaxResponseBytes)
		return r.models.client, nil
	}
	if r.cfg.Models.Connect == nil {
		return r.setClient(gateway.Config{}, gateway.NoGateway())
	}
	return r.setClient(r.cfg.Models.Connect())
}

func (r *runner) setClient(cfg gateway.Config, err error) (*gateway.Client, error) {
	if err != nil {
		r.models.clientErr = &RunError{Kind: kindCompletion, Variant: "Config", Msg: err.Error(), Cause: err}
		return nil, r.models.clientErr
	}
	cfg.ChatTimeout = r.limits.RequestTimeout
	cfg.MaxResponseBytes = r.limits.MaxResponseBytes
	r.models.client = gateway.New(cfg)
	return r.models.client, nil
}

// modelCatalog returns the catalog, fetching it once if the host gave
// none.
func (r *runner) modelCatalog(ctx context.Context) ([]gateway.Model, error) {
	r.models.mu.Lock()
	if r.models.catalogSet {
		defer r.models.mu.Unlock()
		return r.models.catalog, nil
	}
	r.models.mu.Unlock()
	c, err := r.modelClient()
	if err != nil {
		return nil, err
	}
	cat, err := c.Models(ctx)
	if err != nil {
		return nil, completionError(err)
	}
	r.models.mu.Lock()
	defer r.models.mu.Unlock()
	r.models.catalog, r.models.catalogSet = cat, true
	return cat, nil
}

// completionError maps a gateway error to a run error.
func completionError(err error) *RunError {
	if re, ok := err.(*RunError); ok {
		return re
	}
	ge, ok := err.(*gateway.Error)
	if !ok {
		return &RunError{Kind: kindCompletion, Msg: err.Error(), Cause: err}
	}
	if ge.Kind == gateway.KindCancelled {
		return errCancelled(err)
	}
	variant := map[gateway.ErrKind]string{gateway.KindConfig: "Config", gateway.KindTransport: "Http", gateway.KindBackend: "Backend",
		gateway.KindMalformed: "MalformedResponse", gateway.KindReplay: "Replay"}[ge.Kind]
	return &RunError{Kind: kindCompletion, Variant: variant, Msg: ge.Error(), Retryable: ge.Retryable(), Cause: err}
}

// takeModelBindingError returns and clears the block's typed models error.
func (r *runner) takeModelBindingError(vm *VM) error {
	err := vm.Models.bindErr
	vm.Models.bindErr = nil
	return err
}

func (vm *VM) raiseModelBinding(err *RunError) {
	vm.atCaller(err)
	if vm.Models.bindErr == nil {
		vm.Models.bindErr = err
	}
	vm.RaiseError(err)
}

// bindModelGlobals raw-sets one global per bound model alias.
func (r *runner) bindModelGlobals(vm *VM) {
	for alias, b := range r.models.bindings {
		vm.L.G.Global.RawSetString(alias, vm.modelHandleValue(b))
	}
}

// modelHandleValue builds a frozen model object. Its infer field is
// this VM's handle:infer.
func (vm *VM) modelHandleValue(b *modelBinding) *lua.LUserData {
	L := vm.L
	if vm.Models.handleMT == nil {
		infer := L.NewFunction(vm.handleInfer)
		modelHandles := handleType[*modelHandle]{
			what: "Model",
			fields: map[string]func(*lua.LState, *modelHandle) lua.LValue{
				"name":        func(_ *lua.LState, h *modelHandle) lua.LValue { return lua.LString(h.b.alias) },
				"model_id":    func(_ *lua.LState, h *modelHandle) lua.LValue { return lua.LString(h.b.model.ID) },
				"description": func(_ *lua.LState, h *modelHandle) lua.LValue { return lua.LString(h.b.description) },
				"context":     func(_ *lua.LState, h *modelHandle) lua.LValue { return lua.LNumber(h.b.model.Context) },
				"dialect":     func(_ *lua.LState, h *modelHandle) lua.LValue { return lua.LString(h.b.model.ToolDialect) },
				"thinking": func(_ *lua.LState, h *modelHandle) lua.LValue {
					return optional(h.b.thinking, func(x bool) lua.LValue { return lua.LBool(x) })
				},
				"temperature": func(_ *lua.LState, h *modelHandle) lua.LValue {
					return optional(h.b.temperature, func(x float64) lua.LValue { return lua.LNumber(x) })
				},
				"max_tokens": func(_ *lua.LState, h *modelHandle) lua.LValue {
					return optional(h.b.maxTokens, func(x int64) lua.LValue { return lua.LNumber(x) })
				},
				"infer": func(*lua.LState, *modelHandle) lua.LValue { return infer },
			},
			assign: frozen("Model"),
			str:    func(h *modelHandle) string { return "model " + h.b.alias },
			sealed: "Model objects are frozen",
		}
		vm.Models.handleMT = modelHandles.metatable(L)
	}
	return newHandle(L, &modelHandle{b: b}, vm.Models.handleMT)
}

// modelOpts are the validated opts of a models binding.
type modelOpts struct {
	temperature *float64
	maxTokens   *int64
	thinking    *bool
	context     *int64
}

func parseModelOpts(L *lua.LState, label string, v lua.LValue) modelOpts {
	var o modelOpts
	if v == lua.LNil {
		return o
	}
	if err := rules.ModelOptsTable(label, ruleValue(v)); err != nil {
		L.RaiseError("%s", err.Error())
	}
	t := v.(*lua.LTable)
	// Keys are checked in sorted order so the first error is stable.
	var keys []lua.LValue
	t.ForEach(func(k, _ lua.LValue) { keys = append(keys, k) })
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if err := rules.ModelOptKey(label, ruleValue(k)); err != nil {
			L.RaiseError("%s", err.Error())
		}
		ks := k.(lua.LString)
		x := t.RawGet(k)
		if err := rules.ModelOpt(label, string(ks), ruleValue(x)); err != nil {
			L.RaiseError("%s", err.Error())
		}
		switch string(ks) {
		case "thinking":
			b := bool(x.(lua.LBool))
			o.thinking = &b
		case "context":
			n := int64(x.(lua.LNumber))
			o.context = &n
		case "max_tokens":
			n := int64(x.(lua.LNumber))
			o.maxTokens = &n
		case "temperature":
			f := float64(x.(lua.LNumber))
			o.temperature = &f
		}
	}
	return o
}

// resolveModel filters the catalog by opts and runs the picker
// (docs/language.md#model-resolution).
func (vm *VM) resolveModel(alias, desc string, o modelOpts) (*modelBinding, *RunError) {
	r := vm.r
	cat, err := r.modelCatalog(vm.Context())
	if err != nil {
		return nil, AsRunError(err)
	}
	var filtered []gateway.Model
	for _, m := range cat {
		if o.thinking != nil {
			if *o.thinking && m.Thinking == "never" || !*o.thinking && m.Thinking == "always" {
				continue
			}
		}
		if o.context != nil && int64(m.Context) < *o.context {
			continue
		}
		filtered = append(filtered, m)
	}
	if len(filtered) == 0 {
		why := "the catalog is empty"
		if len(cat) > 0 {
			why = "no catalog model passes the opts filter (thinking/context)"
		}
		return nil, bindingError("ModelAbsent", "model alias %q: no model matches capability %q: %s", alias, desc, why)
	}
	ids := make([]string, len(filtered))
	entries := make([]toolrule.Entry, len(filtered))
	byID := map[string]gateway.Model{}
	for i, m := range filtered {
		ids[i] = m.ID
		entries[i] = toolrule.Entry{ID: toolrule.ID{Server: "gateway", Name: m.ID}, Name: "model", Description: m.Description}
		byID[m.ID] = m
	}
	key := strings.Join(ids, "\x1e")
	pc := r.cfg.Models.Picker
	if pc == (toolrule.PickerConfig{}) {
		pc = toolrule.DefaultPickerConfig()
	}
	r.models.mu.Lock()
	p := r.models.pickers[key]
	if p == nil {
		p = toolrule.NewPicker(entries, pc)
		r.models.pickers[key] = p
	}
	r.models.mu.Unlock()
	d := p.Resolve(desc)
	if derr := d.Err("model", desc); derr != nil {
		variant := map[toolrule.Outcome]string{toolrule.Absent: "ModelAbsent", toolrule.Duplicate: "ModelDuplicate", toolrule.Ambiguous: "ModelAmbiguous", toolrule.Invalid: "ModelBindQuery"}[d.Outcome]
		why := ""
		if d.Outcome == toolrule.Absent {
			why = candidates(p, pc, desc, ids)
		}
		return nil, bindingError(variant, "model alias %q: %v%s", alias, derr, why)
	}
	m := byID[d.IDs[0].Name]
	return &modelBinding{alias: alias, description: desc, model: m, temperature: o.temperature, maxTokens: o.maxTokens, thinking: o.thinking}, nil
}

// modelsBind is models.bind / models.need (and the first half of the
// three-argument models.default).
func (vm *VM) modelsBind(L *lua.LState, label string, asDefault bool) int {
	r := vm.r
	if err := rules.ModelArgCount(label, L.GetTop()); err != nil {
		L.RaiseError("%s", err.Error())
	}
	for i := 1; i <= 2; i++ {
		if err := rules.ModelArg(label, ruleValue(L.Get(i))); err != nil {
			L.RaiseError("%s", err.Error())
		}
	}
	alias, desc := L.Get(1).(lua.LString), L.Get(2).(lua.LString)
	a := string(alias)
	if !toolrule.ValidAlias(a) {
		L.RaiseError("%s", toolrule.AliasError("model", a))
	}
	o := parseModelOpts(L, label, L.Get(3))
	if asDefault && r.models.defSet {
		L.RaiseError("models.default may be called at most once per prompt")
	}
	if _, dup := r.models.bindings[a]; dup {
		vm.raiseModelBinding(bindingError("DuplicateModelAlias", "model alias %q was declared more than once", a))
	}
	b, err := vm.resolveModel(a, string(desc), o)
	if err != nil {
		vm.raiseModelBinding(err)
	}
	r.models.bindings[a] = b
	if asDefault {
		r.models.def, r.models.defSet = b, true
	}
	L.Push(vm.modelHandleValue(b))
	return 1
}

// modelsDefault is models.default(alias) or models.default(alias, desc,
// opts?).
func (vm *VM) modelsDefault(L *lua.LState) int {
	r := vm.r
	if L.GetTop() >= 2 {
		return vm.modelsBind(L, "models.default", true)
	}
	if err := rules.ModelArg("models.default", ruleValue(L.Get(1))); err != nil {
		L.RaiseError("%s", err.Error())
	}
	alias := L.Get(1).(lua.LString)
	if r.models.defSet {
		L.RaiseError("models.default may be called at most once per prompt")
	}
	b, bound := r.models.bindings[string(alias)]
	if !bound {
		L.RaiseError("models.default alias %q was not declared by models.bind", string(alias))
	}
	r.models.def, r.models.defSet = b, true
	L.Push(vm.modelHandleValue(b))
	return 1
}

// boundModel reads the alias argument of models.use and models.get (named
// by label) and returns its binding.
func (vm *VM) boundModel(L *lua.LState, label string) *modelBinding {
	alias := stringArg(L, label, 1)
	b, ok := vm.r.models.bindings[alias]
	if !ok {
		L.RaiseError("%s alias %q was not declared by models.bind", label, alias)
	}
	return b
}

// modelsUse is models.use(alias): once per section, before the first
// prose block to affect prose.
func (vm *VM) modelsUse(L *lua.LState) int {
	b := vm.boundModel(L, "models.use")
	if vm.Models.useCalled {
		L.RaiseError("models.use may be called at most once per section")
	}
	vm.Models.useCalled, vm.Models.use = true, b
	L.Push(vm.modelHandleValue(b))
	return 1
}

// modelsGet is models.get(alias): a handle without selecting it.
func (vm *VM) modelsGet(L *lua.LState) int {
	b := vm.boundModel(L, "models.get")
	L.Push(vm.modelHandleValue(b))
	return 1
}

// currentModel is the use selection, else the default.
func (vm *VM) currentModel() *modelBinding {
	if vm.Models.use != nil {
		return vm.Models.use
	}
	return vm.r.models.def
}

func (vm *VM) modelRequired() *RunError {
	return &RunError{Kind: KindBinding, Variant: "ModelRequired", Msg: fmt.Sprintf("model binding required for section %s: declare one in the H1 with models.default(alias, description), or select one with models.use(alias)", vm.Name())}
}

// modelsInfer is models.infer(prompt) with the current model.
func (vm *VM) modelsInfer(L *lua.LState) int {
	prompt := stringArg(L, "models.infer", 1)
	b := vm.currentModel()
	if b == nil {
		vm.RaiseError(vm.modelRequired())
	}
	L.Push(lua.LString(vm.infer(b, prompt)))
	return 1
}

// handleInfer is handle:infer(prompt).
func (vm *VM) handleInfer(L *lua.LState) int {
	ud, ok := L.Get(1).(*lua.LUserData)
	var h *modelHandle
	if ok {
		h, ok = ud.Value.(*modelHandle)
	}
	if !ok {
		L.RaiseError("model:infer must be called with ':' on a model object")
	}
	vm.refuseInEval(L, "model:infer")
	checkParam(L, "Model:infer", 1, 2)
	prompt := L.ToString(2)
	// Any second argument, nil included (docs/language.md#inference).
	if L.GetTop() > 2 {
		L.RaiseError("model:infer(prompt) does not accept a second argument; per-call inference options are not supported")
	}
	L.Push(lua.LString(vm.infer(h.b, prompt)))
	return 1
}

// infer is one tool-free round on a fresh conversation; failures are
// raised in Lua (pcall can catch them, uncaught ones keep their kind).
func (vm *VM) infer(b *modelBinding, prompt string) string {
	c, err := vm.r.modelClient()
	if err != nil {
		vm.RaiseError(err)
	}
	req := &gateway.Request{Model: b.model.ID, Messages: []gateway.Message{{Role: "user", Content: prompt}}, Temperature: b.temperature, MaxTokens: b.maxTokens}
	if b.thinking != nil {
		req.ChatTemplateKwargs = &gateway.TemplateKwargs{EnableThinking: *b.thinking}
	}
	req.OnText = textSink(vm.Observer(), ModelTextEvent{SectionID: vm.ID, Section: vm.Name(), Model: b.model.ID, Round: 1, Prompt: prompt})
	began := time.Now()
	resp, err := c.Complete(vm.Context(), req)
	ev := ModelRoundEvent{SectionID: vm.ID, Section: vm.Name(), Model: b.model.ID, Round: 1, Infer: true, Prompt: prompt, Err: err,
		Line: vm.callerLine(vm.L), Duration: time.Since(began)}
	if resp != nil {
		ev.ToolCalls = len(resp.ToolCalls)
		ev.Usage = resp.Usage
		if resp.HasFinishReason {
			fr := resp.FinishReason
			ev.FinishReason = &fr
		}
	}
	if err == nil && len(resp.ToolCalls) == 0 && strings.TrimSpace(resp.Content) != "" {
		t := resp.Content
		ev.Text = &t
	}
	vm.Observer().ModelRound(ev)
	if err != nil {
		vm.RaiseError(completionError(err))
	}
	if len(resp.ToolCalls) > 0 {
		vm.RaiseError(&RunError{Kind: kindCompletion, Variant: "MalformedResponse", Msg: "model inference received tool calls but no tools were advertised"})
	}
	if strings.TrimSpace(resp.Content) == "" {
		msg := "empty model reply"
		if resp.Reasoning != "" {
			msg += ": reasoning content was present but ignored"
		}
		vm.RaiseError(&RunError{Kind: kindCompletion, Variant: "EmptyModelReply", Msg: msg})
	}
	return resp.Content
}

// candidates explains an Absent model binding as docs/language.md
// promises: the catalog models that share a word with the capability,
// with their scores and the floor they missed, or the whole catalog when
// none does.
func candidates(p *toolrule.Picker, cfg toolrule.PickerConfig, desc string, ids []string) string {
	if cs := p.Closest(desc, 3); len(cs) > 0 {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = fmt.Sprintf("%s (%.2f)", c.ID.Name, c.Score)
		}
		return fmt.Sprintf("; candidates: %s; a match needs %.2f (%.2f when no other model reaches %.2f): describe the model in the words of its catalog description",
			strings.Join(parts, ", "), cfg.SimilarityFloor, cfg.SoloFloor, cfg.SoloFloor)
	}
	if len(ids) > 10 {
		ids = append(ids[:10:10], "...")
	}
	return "; no catalog model shares a word with it; the catalog has " + strings.Join(ids, ", ")
}
