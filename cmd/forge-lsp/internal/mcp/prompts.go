package mcp

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The catalog's healthy prompts are also MCP prompts (prompts/list,
// prompts/get), which clients offer as slash commands
// (docs/mcp.md#prompts). Getting one runs it, exactly as run_prompt does,
// and returns its value as one user message. The list follows the
// catalog: a reload adds, replaces and removes prompts, and the SDK tells
// clients with notifications/prompts/list_changed.

// mcpPrompt is the MCP description of a catalog entry: its name, its
// description and, as arguments, the raw input every prompt takes and the
// store text of its declared input file.
func mcpPrompt(e *Entry) *sdk.Prompt {
	p := &sdk.Prompt{Name: e.Name, Description: e.Description, Arguments: []*sdk.PromptArgument{{
		Name:        "args",
		Description: "The prompt's input, as one raw string (empty when omitted).",
	}}}
	if e.Input != nil {
		desc := fmt.Sprintf("Text for the prompt's input file %s", e.Input.Path)
		if e.Input.Description != "" {
			desc += ": " + e.Input.Description
		}
		p.Arguments = append(p.Arguments, &sdk.PromptArgument{Name: "input_text", Description: desc})
	}
	return p
}

// syncPrompts makes the server's MCP prompts those of cat: new and
// changed ones are added (replacing by name), vanished or broken ones
// removed. Unchanged prompts are left alone, so a reload that changes
// nothing sends no notification.
func (s *Server) syncPrompts(cat *Catalog) {
	s.promptsMu.Lock()
	defer s.promptsMu.Unlock()
	want := map[string]*sdk.Prompt{}
	for _, e := range cat.Entries {
		if e.Problem == "" {
			want[e.Name] = mcpPrompt(e)
		}
	}
	var gone []string
	for name := range s.prompts {
		if want[name] == nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.mcp.RemovePrompts(gone...)
		for _, n := range gone {
			delete(s.prompts, n)
		}
	}
	for _, name := range sortedKeys(want) {
		p := want[name]
		if old := s.prompts[name]; old != nil && samePrompt(old, p) {
			continue
		}
		s.prompts[name] = p
		s.mcp.AddPrompt(p, s.getPrompt)
	}
}

func samePrompt(a, b *sdk.Prompt) bool {
	if a.Name != b.Name || a.Description != b.Description || len(a.Arguments) != len(b.Arguments) {
		return false
	}
	for i := range a.Arguments {
		if *a.Arguments[i] != *b.Arguments[i] {
			return false
		}
	}
	return true
}

// getPrompt runs the named prompt with the arguments, as run_prompt does,
// and returns its value as a user message. A prompt that fails is an
// error naming why; one that outlives the reply deadline answers with the
// run id to collect with check_run.
func (s *Server) getPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	in := runPromptIn{Prompt: req.Params.Name}
	for k, v := range req.Params.Arguments {
		switch k {
		case "args":
			in.Args = v
		case "input_text":
			in.InputText = v
		default:
			return nil, invalidParams("prompt %s takes the arguments args and input_text, not %q", req.Params.Name, k)
		}
	}
	call := &sdk.CallToolRequest{Session: req.Session, Params: &sdk.CallToolParamsRaw{Name: "run_prompt"}}
	res, _, err := s.runPrompt(ctx, call, in)
	if err != nil {
		return nil, err
	}
	text := ""
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			text += t.Text
		}
	}
	if res.IsError {
		return nil, fmt.Errorf("prompt %s failed: %s", req.Params.Name, s.redact(text))
	}
	return &sdk.GetPromptResult{
		Description: "The value of the PromptForge prompt " + req.Params.Name,
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: s.redact(text)}}},
	}, nil
}
