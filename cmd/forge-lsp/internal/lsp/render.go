package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/render"
	"go.lsp.dev/jsonrpc2"
)

// commandRenderPrompt renders a prompt (docs/review.md): each model round
// its run would make, as the engine would send it, with tokens and cost.
// It runs no model and no tool, so it needs no trust. Its one argument is
// {uri, section?, input?}; the reply is a renderReply.
const commandRenderPrompt = "forge.renderPrompt"

// renderReply is what forge.renderPrompt returns: the rendering as
// Markdown (an editor's view) and as text, and the numbers.
type renderReply struct {
	Markdown string `json:"markdown"`
	Text     string `json:"text"`
	Rounds   int    `json:"rounds"`
	// Tokens is the run's known input tokens; Stopped why the symbolic
	// run stopped early, if it did.
	Tokens  int    `json:"tokens"`
	Stopped string `json:"stopped,omitempty"`
	Version int32  `json:"version"`
}

var _ = registerCommand(commandRenderPrompt, (*server).renderPrompt)

// renderPrompt answers forge.renderPrompt from the document's current
// text, in the background (the engine runs the prompt's Lua).
func (s *server) renderPrompt(ctx context.Context, p executeParams, reply jsonrpc2.Replier) {
	var args runArgs
	if len(p.Arguments) != 1 || json.Unmarshal(p.Arguments[0], &args) != nil || args.URI == "" {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes one argument object {uri, section?, input?}", commandRenderPrompt))
		return
	}
	s.mu.Lock()
	d := s.docs[uriKey(args.URI)]
	var text []byte
	var version int32
	if d != nil {
		text, version = d.text, d.version
	}
	cfg := s.cfg
	catalog := s.modelCatalog
	s.mu.Unlock()
	if d == nil {
		_ = reply(ctx, nil, docNotOpen(args.URI))
		return
	}
	s.goBackground("render", func() {
		name := fileName(args.URI)
		opts := render.Options{Path: name, Source: text, Section: strings.TrimSpace(args.Section), Catalog: catalog,
			GatewayFile: cfg.GatewayConfig, ToolsFile: cfg.ToolsFile, Env: s.lookupEnv}
		if catalog != nil {
			opts.GatewayFile = ""
		}
		if args.Input != "" {
			in := args.Input
			opts.Input = &in
		}
		if strings.HasPrefix(string(args.URI), "file:") {
			opts.ToolsDir = filepath.Dir(name)
		}
		res, err := render.Render(ctx, opts)
		if err != nil {
			_ = reply(ctx, nil, &jsonrpc2.Error{Code: requestFailed, Message: "forge: cannot render " + name + ": " + err.Error()})
			return
		}
		_ = reply(ctx, &renderReply{Markdown: render.Markdown(res), Text: render.Text(res), Rounds: len(res.Rounds),
			Tokens: res.Tokens.Known, Stopped: res.Stopped, Version: version}, nil)
	})
}
