package run

// A prose block's model side (docs/language.md#section-blocks): scope
// building, tools.calls, model resolution, the near-duplicate check, and the
// call into the dispatch loop (engine/loop). Placeholder substitution between
// the two halves is render.go's.

import (
	"context"
	"errors"

	"github.com/forge-lsp/forge-lsp/engine/loop"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
)

// ProseStep is one prose block about to run in a VM.
type ProseStep struct {
	Prose *parse.Prose
	// First is true for the VM's first prose block (tools.calls, model
	// resolution and sys.model happen there).
	First bool
	// LoopCapable selects the tool loop (final prose) over single shot.
	LoopCapable bool
}

// ProseResult is what a prose block produced.
type ProseResult struct {
	// Text is the reply text; nil leaves the reply unchanged.
	Text *string
}

// beforeProse runs the steps of docs/language.md#section-blocks that come
// before substitution (scope, tools.calls, model, near-duplicates), for empty
// prose too.
func (r *runner) beforeProse(ctx context.Context, vm *VM, step *ProseStep) error {
	// The tool scope, near-duplicates; tools.calls on the first block.
	if err := vm.toolsBeforeProse(ctx, step); err != nil {
		return err
	}
	// The model is resolved once, at the first prose block, and
	// frozen for the rest of the section (a later models.use only changes
	// models.infer). H1 prose uses only the default.
	if !vm.Models.resolved {
		vm.Models.resolved = true
		b := r.models.def
		if vm.Kind != vmH1 && vm.Models.use != nil {
			b = vm.Models.use
		}
		vm.Models.frozen = b
		if b != nil && vm.Kind != vmH1 {
			vm.SetSys("model", lua.LString(b.model.ID))
		}
	}
	return nil
}

// maxIterations is the loop cap: frontmatter max_tool_iterations, else
// the run limit.
func (r *runner) maxIterations() int {
	if fm := r.p.Frontmatter; fm != nil && fm.MaxToolIterations != nil && *fm.MaxToolIterations > 0 {
		return int(*fm.MaxToolIterations)
	}
	return r.limits.MaxToolIterations
}

// runProse sends non-blank substituted text to the model: one round, or the
// tool loop for the last prose block (docs/language.md#tool-loop).
func (r *runner) runProse(ctx context.Context, vm *VM, step *ProseStep, text string) (ProseResult, error) {
	b := vm.Models.frozen
	if b == nil {
		if vm.Kind == vmH1 {
			return ProseResult{}, &RunError{Kind: KindBinding, Variant: "ModelRequired", Msg: "model binding required for H1 prose of " + vm.Name() + ": declare one with models.default(alias, description)"}
		}
		return ProseResult{}, vm.modelRequired()
	}
	client, err := r.modelClient()
	if err != nil {
		return ProseResult{}, err
	}
	line := 0
	if f := r.p.File; f != nil {
		line = f.Line(step.Prose.Span.Start)
	}
	scope := vm.Tools.scope
	if r.hook != nil {
		scope = vm.pauseTools(scope, step.Prose)
	}
	p := &loop.Params{
		Client:        client,
		Model:         loop.Model{ID: b.model.ID, Dialect: b.model.ToolDialect, Temperature: b.temperature, MaxTokens: b.maxTokens, Thinking: b.thinking},
		Scope:         scope,
		Declared:      vm.declaredTool,
		Envelope:      r.tools.envelope,
		Loop:          step.LoopCapable,
		MaxIterations: r.maxIterations(),
		MaxCalls:      r.limits.MaxToolCallsPerRound,
		Count: func(alias string) {
			if vm.Tools.calls != nil {
				vm.Tools.calls[alias]++
			}
		},
		OnText: proseText(vm, b.model.ID, text),
		OnRound: func(rd loop.Round) {
			ev := ModelRoundEvent{SectionID: vm.ID, Section: vm.Name(), Model: b.model.ID, Round: rd.N, Prompt: text, ToolCalls: rd.ToolCalls, Err: rd.Err, Line: line, Duration: rd.Duration}
			if rd.Response != nil {
				ev.Usage = rd.Response.Usage
				if rd.Response.HasFinishReason {
					fr := rd.Response.FinishReason
					ev.FinishReason = &fr
				}
				if rd.ToolCalls == 0 {
					t := rd.Response.Content
					ev.Text = &t
				}
			}
			vm.Observer().ModelRound(ev)
		},
		OnDispatch: func(d loop.Dispatch) {
			vm.Observer().ToolCall(ToolCallEvent{SectionID: vm.ID, Section: vm.Name(), Alias: d.Alias, Tool: d.Tool.String(),
				Args: d.Arguments, Result: d.Result, Untrusted: d.Untrusted, Err: d.Err, Line: line, Duration: d.Duration})
		},
	}
	res, err := loop.Run(ctx, p, &vm.Models.history, text)
	if err != nil {
		return ProseResult{}, r.loopError(ctx, err)
	}
	if res.HasFinishReason {
		vm.SetSys("reply_finish_reason", lua.LString(res.FinishReason))
	} else {
		vm.SetSys("reply_finish_reason", lua.LNil)
	}
	return ProseResult{Text: res.Text}, nil
}

// loopError maps a dispatch-loop failure to its run error kind
// (docs/language.md#error-kinds).
func (r *runner) loopError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errCancelled(err)
	}
	var (
		ex  *loop.ExhaustedError
		tm  *loop.TooManyCallsError
		oos *loop.OutOfScopeError
		tce *loop.ToolCallError
		ee  *loop.EmptyReplyError
		fe  *loop.FenceError
		re  *RunError
	)
	switch {
	case errors.As(err, &ex):
		return &RunError{Kind: kindTool, Variant: "ToolLoopExhausted", Msg: err.Error(), Cause: err}
	case errors.As(err, &tm):
		return &RunError{Kind: KindQuota, Variant: "ToolCallsPerRound", Msg: err.Error(), Cause: err}
	case errors.As(err, &oos):
		return &RunError{Kind: kindTool, Variant: "OutOfScopeToolCall", Msg: err.Error(), Cause: err}
	case errors.As(err, &tce):
		if tce.Local {
			// The handler's error is already a Lua RunError with its line.
			line := 0
			if errors.As(tce.Err, &re) {
				line = re.Line
			}
			return &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: err.Error(), Line: line, Cause: err}
		}
		return &RunError{Kind: kindTool, Variant: "Tool", Msg: err.Error(), Cause: err}
	case errors.As(err, &fe):
		return &RunError{Kind: kindCompletion, Variant: "MalformedResponse", Msg: err.Error(), Cause: err}
	case errors.As(err, &ee):
		return &RunError{Kind: kindCompletion, Variant: "EmptyModelReply", Msg: err.Error(), Cause: err}
	}
	return completionError(err)
}

// proseText is the loop's OnText when the run's observer streams text.
func proseText(vm *VM, model, prompt string) func(round int, text string) {
	to, ok := vm.Observer().(TextObserver)
	if !ok || !to.StreamsText() {
		return nil
	}
	return func(round int, text string) {
		to.ModelText(ModelTextEvent{SectionID: vm.ID, Section: vm.Name(), Model: model, Round: round, Prompt: prompt, Text: text})
	}
}
