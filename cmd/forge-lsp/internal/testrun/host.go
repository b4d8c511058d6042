package testrun

import (
	"context"
	"path/filepath"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// runSpec is everything one test run needs from the host.
type runSpec struct {
	Prompt    *parse.Prompt
	Section   *parse.Section
	Input     string
	Store     *store.Store
	Client    *gateway.Client
	Observer  run.Observer
	Execution string
	// Extra are workspace tools found beside the prompt.
	Extra []tools.Tool
	// AllowPrivate lets web_fetch reach non-public addresses.
	AllowPrivate bool
}

// execute runs one case the way `forge-lsp run` does: the whole prompt,
// or the H1 pass and one section as an execute chain.
func execute(ctx context.Context, s runSpec) (string, error) {
	cfg := run.Config{Input: s.Input, Store: s.Store, Observer: s.Observer, Execution: s.Execution}
	cfg.Models = run.ModelConfig{Client: s.Client}
	cfg.Tools.Extra = s.Extra
	cfg.Tools.WebFetchAllowPrivate = s.AllowPrivate
	if s.Section != nil {
		return run.RunSection(ctx, s.Prompt, s.Section, cfg)
	}
	return run.Run(ctx, s.Prompt, cfg)
}

// workspaceTools loads the workspace tools file that applies to a prompt,
// if any.
func workspaceTools(promptPath string) ([]tools.Tool, error) {
	wf, ok := tools.FindWorkspaceFile(filepath.Dir(promptPath))
	if !ok {
		return nil, nil
	}
	return tools.LoadWorkspaceTools(wf)
}
