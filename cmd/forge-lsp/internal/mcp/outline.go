package mcp

import (
	"context"
	"fmt"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type outlinePromptIn struct {
	Path string `json:"path" jsonschema:"A prompt file, relative to the prompts folder or to the workspace root, or absolute."`
}

// OutlineEntry is one entry of outline_prompt's answer: the editor's
// document symbols (features.DocumentSymbols) with 1-based lines.
type OutlineEntry struct {
	// Kind is "frontmatter", "key", "h1", "section", "tool" or "model".
	Kind     string         `json:"kind"`
	Name     string         `json:"name"`
	Detail   string         `json:"detail,omitempty"`
	Line     int            `json:"line"`
	EndLine  int            `json:"end_line"`
	Children []OutlineEntry `json:"children,omitempty"`
}

var outlineKinds = map[features.SymbolKind]string{
	features.SymbolFrontmatter: "frontmatter",
	features.SymbolProperty:    "key",
	features.SymbolH1:          "h1",
	features.SymbolSection:     "section",
	features.SymbolTool:        "tool",
	features.SymbolModel:       "model",
}

func (s *Server) addOutlineTool() {
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "outline_prompt",
		Description: "Returns the outline of a PromptForge prompt, as an editor's outline view shows it: the frontmatter keys, the H1 with the tools and models it binds, and the section tree with each section's local tools and model bindings, each with its lines. Nothing is run."},
		s.outlinePrompt)
}

func (s *Server) outlinePrompt(ctx context.Context, _ *sdk.CallToolRequest, in outlinePromptIn) (*sdk.CallToolResult, any, error) {
	if in.Path == "" {
		return nil, nil, invalidParams("outline_prompt needs a path")
	}
	path := s.workspacePath(in.Path)
	if err := s.inWorkspace("path", path); err != nil {
		return textError(err.Error() + "; outline_prompt reads the files of this workspace only")
	}
	b, err := readPrompt(path)
	if err != nil {
		return textError(fmt.Sprintf("%s %v", path, err))
	}
	if !parse.DeclaresPromptforge(b) {
		return textError(path + " is not a PromptForge prompt (its frontmatter has no promptforge: key)")
	}
	pr := parse.Parse(path, b)
	snap := features.NewSnapshot(pr.File, pr, nil, nil)
	var conv func(syms []features.Symbol) []OutlineEntry
	conv = func(syms []features.Symbol) []OutlineEntry {
		out := make([]OutlineEntry, 0, len(syms))
		for _, sym := range syms {
			end := max(sym.Span.Start, sym.Span.End-1) // the last line the span covers
			out = append(out, OutlineEntry{Kind: outlineKinds[sym.Kind], Name: sym.Name, Detail: sym.Detail,
				Line: pr.File.Line(sym.Span.Start), EndLine: pr.File.Line(end), Children: conv(sym.Children)})
		}
		return out
	}
	return structured(struct {
		Path    string         `json:"path"`
		Outline []OutlineEntry `json:"outline"`
	}{path, conv(features.DocumentSymbols(snap))}, false)
}
