package run

// This file belongs to the prose step (issue 4, runtime-2). The version
// here is a compiling stub written by runtime-1; see SEAMS.md.

import (
	"context"

	"github.com/forge-lsp/forge-lsp/engine/parse"
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

// noModelMsg explains how to configure a model.
const noModelMsg = "no model configured: set PROMPTFORGE_GATEWAY_URL and PROMPTFORGE_GATEWAY_API_KEY, or pass --replay FILE"

// beforeProse runs steps 1-4 of runtime.md §2.3 (bindings, tools.calls,
// model resolution, sys.model, near-duplicate check) before substitution.
func (r *runner) beforeProse(ctx context.Context, vm *VM, step *ProseStep) error { return nil }

// runProse runs steps 7-9 of §2.3 for non-blank substituted text.
func (r *runner) runProse(ctx context.Context, vm *VM, step *ProseStep, text string) (ProseResult, error) {
	return ProseResult{}, &RunError{Kind: KindCompletion, Variant: "Config", Msg: noModelMsg}
}
